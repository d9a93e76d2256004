/**
 * Whether a Redis-backed counter should ask Redis right now. When a call fails, the outage is logged once
 * and callers count in this process instead; while Redis is down at most one call per second tries it again
 * (reconnecting the client if it gave up), so an outage neither stalls every request on a dead connection
 * nor lifts the limits, and the first success after it is logged too.
 */
import type { RedisClient } from "bun";
import type { Logger } from "../logger";

const PROBE_INTERVAL_MS = 1_000;

export class RedisCircuit {
  private downSince: number | undefined;
  private nextProbeAt = 0;

  constructor(
    private readonly client: RedisClient,
    private readonly logger: Logger,
    /** Names the counters in the log lines, e.g. "rate limits". */
    private readonly what: string,
    private readonly now: () => number = Date.now,
  ) {}

  get down(): boolean {
    return this.downSince !== undefined;
  }

  /** Runs `remote` against Redis when it is (or may again be) reachable, else `local`. */
  async run<T>(remote: () => Promise<T>, local: () => T | Promise<T>): Promise<T> {
    if (this.downSince !== undefined) {
      const now = this.now();
      if (now < this.nextProbeAt) return local();
      this.nextProbeAt = now + PROBE_INTERVAL_MS;
      if (!this.client.connected) {
        // Reconnects in the background; this request still counts locally.
        this.client.connect().catch(() => {});
        return local();
      }
    }
    let result: T;
    try {
      result = await remote();
    } catch (error) {
      this.failed(error);
      return local();
    }
    if (this.downSince !== undefined) {
      this.logger.warn(`Redis reachable again; ${this.what} are shared across processes again`, {
        downForSeconds: Math.round((this.now() - this.downSince) / 1000),
      });
      this.downSince = undefined;
    }
    return result;
  }

  private failed(error: unknown): void {
    if (this.downSince !== undefined) return;
    this.downSince = this.now();
    this.nextProbeAt = this.downSince + PROBE_INTERVAL_MS;
    this.logger.error(`Redis unreachable; ${this.what} are counted in this process until it is back`, {
      error: (error as { code?: string }).code ?? (error as Error).message,
    });
  }
}
