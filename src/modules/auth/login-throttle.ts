/**
 * Brute-force protection for login: failed attempts are counted per e-mail and per client IP in a sliding
 * window; past the limit, login answers 429 before the password is even checked. In memory for one process;
 * with REDIS_URL the failures are kept in Redis (redis-login-throttle.ts), so every process counts the same.
 */
export interface LoginThrottle {
  /** Seconds to wait when the e-mail or IP is locked out, otherwise 0. */
  retryAfter(email: string, ip: string): Promise<number>;
  recordFailure(email: string, ip: string): Promise<void>;
  /** A successful login clears the e-mail's failures (not the IP's: one IP may probe many e-mails). */
  recordSuccess(email: string): Promise<void>;
}

/** Seconds until the oldest failure that still counts towards `limit` leaves the window (at least 1). */
export function secondsUntilBelow(oldestCounted: number, windowMs: number, now: number): number {
  return Math.max(1, Math.ceil((oldestCounted + windowMs - now) / 1000));
}

export interface ThrottleLimits {
  windowMs: number;
  perEmail: number;
  perIp: number;
}

export const DEFAULT_LOGIN_LIMITS: ThrottleLimits = { windowMs: 15 * 60_000, perEmail: 5, perIp: 20 };
const MAX_TRACKED = 100_000;

export class MemoryLoginThrottle implements LoginThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limits: ThrottleLimits = DEFAULT_LOGIN_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  async retryAfter(email: string, ip: string): Promise<number> {
    return Math.max(this.wait(`e:${email}`, this.limits.perEmail), this.wait(`i:${ip}`, this.limits.perIp));
  }

  async recordFailure(email: string, ip: string): Promise<void> {
    if (this.failures.size > MAX_TRACKED) this.prune();
    for (const key of [`e:${email}`, `i:${ip}`]) {
      const list = this.recent(key);
      list.push(this.now());
      this.failures.set(key, list);
    }
  }

  async recordSuccess(email: string): Promise<void> {
    this.failures.delete(`e:${email}`);
  }

  private recent(key: string): number[] {
    const since = this.now() - this.limits.windowMs;
    return (this.failures.get(key) ?? []).filter((at) => at > since);
  }

  private wait(key: string, limit: number): number {
    const list = this.recent(key);
    if (list.length < limit) return 0;
    return secondsUntilBelow(list[list.length - limit] ?? this.now(), this.limits.windowMs, this.now());
  }

  private prune(): void {
    for (const key of [...this.failures.keys()]) {
      if (this.recent(key).length === 0) this.failures.delete(key);
    }
  }
}
