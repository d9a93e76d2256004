/**
 * Fixed-window counters decided atomically: a request is admitted only when every rule it is checked
 * against still has room, and then all of them are charged together, so N concurrent requests against a
 * limit of M never admit more than M — in memory and across processes sharing Redis.
 */
export interface RateRule {
  /** Unique per window, e.g. `rpm:42:29123456`; the caller puts the window index in the key. */
  readonly key: string;
  readonly limit: number;
  /** When this window ends (epoch ms); the counter is dropped after it. */
  readonly resetAt: number;
  /**
   * A count already known to have happened in this window (e.g. this month's requests read from the
   * database after a restart); the counter never reads lower than it.
   */
  readonly floor?: number;
}

export interface RuleState {
  readonly key: string;
  readonly limit: number;
  /** Room left after this decision. */
  readonly remaining: number;
  readonly resetAt: number;
}

export interface RateDecision {
  readonly allowed: boolean;
  /** Index into the rules of the first rule without room (when refused). */
  readonly blockedBy: number;
  readonly rules: readonly RuleState[];
}

export interface RateLimiter {
  readonly kind: "memory" | "redis";
  /** Admits `cost` units against every rule at once, or none of them. */
  consume(rules: readonly RateRule[], cost?: number): Promise<RateDecision>;
  /** The same decision taken synchronously, where the counters are in this process. */
  consumeNow?(rules: readonly RateRule[], cost?: number): RateDecision;
  close(): Promise<void>;
}

/** Seconds a refused caller should wait before the blocking window resets (at least 1). */
export function retryAfterSeconds(state: RuleState, now = Date.now()): number {
  return Math.max(1, Math.ceil((state.resetAt - now) / 1000));
}
