import type { RateDecision, RateLimiter, RateRule, RuleState } from "./types";

interface Counter {
  count: number;
  resetAt: number;
}

/** One process's counters. JavaScript runs the check-and-charge without yielding, which makes it atomic. */
export class MemoryRateLimiter implements RateLimiter {
  readonly kind = "memory" as const;
  private readonly counters = new Map<string, Counter>();
  private decisionsSinceSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async consume(rules: readonly RateRule[], cost = 1): Promise<RateDecision> {
    return this.consumeNow(rules, cost);
  }

  consumeNow(rules: readonly RateRule[], cost = 1): RateDecision {
    const now = this.now();
    if (++this.decisionsSinceSweep >= 10_000) this.sweep(now);
    const current = rules.map((rule) => {
      const counter = this.counters.get(rule.key);
      const count = counter !== undefined && counter.resetAt > now ? counter.count : 0;
      return Math.max(count, rule.floor ?? 0);
    });
    const blockedBy = rules.findIndex((rule, i) => current[i]! + cost > rule.limit);
    const allowed = blockedBy === -1;
    const states: RuleState[] = rules.map((rule, i) => {
      const count = allowed ? current[i]! + cost : current[i]!;
      if (allowed) this.counters.set(rule.key, { count, resetAt: rule.resetAt });
      return {
        key: rule.key,
        limit: rule.limit,
        remaining: Math.max(0, rule.limit - count),
        resetAt: rule.resetAt,
      };
    });
    return { allowed, blockedBy, rules: states };
  }

  async close(): Promise<void> {
    this.counters.clear();
  }

  private sweep(now: number): void {
    this.decisionsSinceSweep = 0;
    for (const [key, counter] of this.counters) if (counter.resetAt <= now) this.counters.delete(key);
  }
}
