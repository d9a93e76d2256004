import { RedisClient } from "bun";
import { MemoryRateLimiter } from "./memory";
import { RedisRateLimiter } from "./redis";
import type { RateLimiter } from "./types";

export { MemoryRateLimiter } from "./memory";
export { RedisRateLimiter } from "./redis";
export type { RateDecision, RateLimiter, RateRule, RuleState } from "./types";
export { retryAfterSeconds } from "./types";

/** In memory for one process; Redis when several processes must share the counters. */
export function createRateLimiter(options: {
  redis?: RedisClient | undefined;
  prefix?: string;
}): RateLimiter {
  return options.redis === undefined
    ? new MemoryRateLimiter()
    : new RedisRateLimiter(options.redis, options.prefix ?? "rs:rl:");
}

export function openRedis(url: string): RedisClient {
  return new RedisClient(url, { autoReconnect: true, enableAutoPipelining: true });
}
