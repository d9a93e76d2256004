/**
 * Brute-force protection for login. Every attempt is reserved against its limits before the password is
 * checked, in one atomic step, so concurrent guesses cannot all slip under a limit; a successful login then
 * takes its own attempt back. Three sliding windows:
 * - per (e-mail, client): the tight one, so an attacker exhausts their own pair and not the owner's;
 * - per client: one address probing many e-mails;
 * - per e-mail from every client: a wider ceiling against guesses spread over many addresses.
 * In memory for one process; with REDIS_URL in Redis (redis-login-throttle.ts), shared by every process.
 */
export type LoginReservation =
  | { readonly allowed: true; readonly id: string; readonly at: number }
  | { readonly allowed: false; readonly retryAfter: number; readonly limit: number };

export interface LoginThrottle {
  /** Counts one attempt against every window, or none when one of them is full (then: seconds to wait). */
  reserve(email: string, client: string): Promise<LoginReservation>;
  /** The attempt succeeded: it stops counting, and the pair's earlier failures are forgiven. */
  succeeded(email: string, client: string, reservation: LoginReservation & { allowed: true }): Promise<void>;
}

export interface ThrottleLimits {
  windowMs: number;
  perPair: number;
  perClient: number;
  perEmail: number;
}

export const DEFAULT_LOGIN_LIMITS: ThrottleLimits = {
  windowMs: 15 * 60_000,
  perPair: 5,
  perClient: 20,
  perEmail: 50,
};

/** The three windows an attempt counts in, with their limits, in the order they are checked. */
export function throttleKeys(email: string, client: string, limits: ThrottleLimits) {
  return [
    { key: `p:${email}|${client}`, limit: limits.perPair },
    { key: `c:${client}`, limit: limits.perClient },
    { key: `e:${email}`, limit: limits.perEmail },
  ];
}

/** Seconds until the oldest attempt that still counts towards `limit` leaves the window (at least 1). */
export function secondsUntilBelow(oldestCounted: number, windowMs: number, now: number): number {
  return Math.max(1, Math.ceil((oldestCounted + windowMs - now) / 1000));
}

const MAX_TRACKED = 100_000;

export class MemoryLoginThrottle implements LoginThrottle {
  private readonly attempts = new Map<string, { at: number; id: string }[]>();

  constructor(
    private readonly limits: ThrottleLimits = DEFAULT_LOGIN_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  // Synchronous from check to record: JavaScript does not interleave it with another request's.
  async reserve(email: string, client: string): Promise<LoginReservation> {
    if (this.attempts.size > MAX_TRACKED) this.prune();
    const now = this.now();
    const windows = throttleKeys(email, client, this.limits);
    let wait = 0;
    let blocking = 0;
    for (const { key, limit } of windows) {
      const list = this.recent(key, now);
      if (list.length >= limit) {
        const oldest = list[list.length - limit]?.at ?? now;
        const seconds = secondsUntilBelow(oldest, this.limits.windowMs, now);
        if (seconds > wait) [wait, blocking] = [seconds, limit];
      }
    }
    if (wait > 0) return { allowed: false, retryAfter: wait, limit: blocking };
    const id = crypto.randomUUID();
    for (const { key } of windows) {
      const list = this.recent(key, now);
      list.push({ at: now, id });
      this.attempts.set(key, list);
    }
    return { allowed: true, id, at: now };
  }

  async succeeded(email: string, client: string, reservation: { id: string }): Promise<void> {
    const [pair, ...others] = throttleKeys(email, client, this.limits);
    if (pair !== undefined) this.attempts.delete(pair.key);
    for (const { key } of others) {
      const list = this.attempts.get(key);
      if (list === undefined) continue;
      const index = list.findIndex((attempt) => attempt.id === reservation.id);
      if (index >= 0) list.splice(index, 1);
    }
  }

  private recent(key: string, now: number): { at: number; id: string }[] {
    const since = now - this.limits.windowMs;
    return (this.attempts.get(key) ?? []).filter((attempt) => attempt.at > since);
  }

  private prune(): void {
    const now = this.now();
    for (const key of [...this.attempts.keys()]) {
      if (this.recent(key, now).length === 0) this.attempts.delete(key);
    }
  }
}
