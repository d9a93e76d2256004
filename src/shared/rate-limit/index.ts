import { RedisClient } from "bun";
import type { Logger } from "../logger";
import { RedisCircuit } from "./circuit";
import { MemoryRateLimiter } from "./memory";
import { RedisRateLimiter } from "./redis";
import type { RateDecision, RateLimiter, RateRule } from "./types";

export { MemoryRateLimiter } from "./memory";
export { RedisRateLimiter } from "./redis";
export type { RateDecision, RateLimiter, RateRule, RuleState } from "./types";
export { retryAfterSeconds } from "./types";

/**
 * Redis counters that fail safe: while Redis cannot be reached, this process's own counters decide (the
 * outage logged once, see RedisCircuit), so the limits keep holding per process instead of every request
 * being admitted unchecked; the shared counters take over again once Redis answers.
 */
export class FallbackRateLimiter implements RateLimiter {
  readonly kind = "redis" as const;
  private readonly local: MemoryRateLimiter;
  private readonly circuit: RedisCircuit;

  constructor(
    private readonly remote: RedisRateLimiter,
    client: RedisClient,
    logger: Logger,
    now: () => number = Date.now,
  ) {
    this.local = new MemoryRateLimiter(now);
    this.circuit = new RedisCircuit(client, logger, "rate limits", now);
  }

  /** True while Redis is unreachable and this process counts on its own. */
  get degraded(): boolean {
    return this.circuit.down;
  }

  consume(rules: readonly RateRule[], cost = 1): Promise<RateDecision> {
    return this.circuit.run(
      () => this.remote.consume(rules, cost),
      () => this.local.consumeNow(rules, cost),
    );
  }

  async close(): Promise<void> {
    await this.local.close();
  }
}

/** In memory for one process; Redis (with the in-process fallback) when several processes share counters. */
export function createRateLimiter(options: {
  redis?: RedisClient | undefined;
  prefix?: string;
  logger: Logger;
}): RateLimiter {
  if (options.redis === undefined) return new MemoryRateLimiter();
  const remote = new RedisRateLimiter(options.redis, options.prefix ?? "rs:rl:");
  return new FallbackRateLimiter(remote, options.redis, options.logger);
}

/**
 * Commands fail at once while the connection is down (no offline queue), so callers fall back instead of
 * waiting; the client keeps reconnecting in the background. Call `connect()` before the first command.
 */
export function openRedis(url: string): RedisClient {
  return new RedisClient(url, {
    autoReconnect: true,
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    maxRetries: 1_000_000,
  });
}
