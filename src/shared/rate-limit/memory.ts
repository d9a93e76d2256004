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
    // On every authenticated request: counters are updated in place, with no per-rule closures.
    const now = this.now();
    if (++this.decisionsSinceSweep >= 10_000) this.sweep(now);
    const live: (Counter | undefined)[] = new Array(rules.length);
    const counts: number[] = new Array(rules.length);
    let blockedBy = -1;
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i]!;
      const counter = this.counters.get(rule.key);
      const current = counter !== undefined && counter.resetAt > now ? counter : undefined;
      live[i] = current;
      counts[i] = Math.max(current?.count ?? 0, rule.floor ?? 0);
      if (blockedBy === -1 && counts[i]! + cost > rule.limit) blockedBy = i;
    }
    const allowed = blockedBy === -1;
    const states: RuleState[] = new Array(rules.length);
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i]!;
      const count = allowed ? counts[i]! + cost : counts[i]!;
      if (allowed) {
        const counter = live[i];
        if (counter !== undefined && counter.resetAt === rule.resetAt) counter.count = count;
        else this.counters.set(rule.key, { count, resetAt: rule.resetAt });
      }
      states[i] = {
        key: rule.key,
        limit: rule.limit,
        remaining: Math.max(0, rule.limit - count),
        resetAt: rule.resetAt,
      };
    }
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
