import { afterAll, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { MemoryRateLimiter, type RateLimiter, RedisRateLimiter } from "../../src/shared/rate-limit";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = new RedisClient(REDIS_URL);
afterAll(() => redis.close());

const uniquePrefix = () => `test:rl:${crypto.randomUUID()}:`;
const inOneHour = () => Date.now() + 3_600_000;

const backends: [string, () => RateLimiter][] = [
  ["memory", () => new MemoryRateLimiter()],
  ["redis", () => new RedisRateLimiter(redis, uniquePrefix())],
];

for (const [name, make] of backends) {
  describe(`${name} rate limiter`, () => {
    test("admits at most M of N concurrent requests against a limit of M", async () => {
      const limiter = make();
      const resetAt = inOneHour();
      const decisions = await Promise.all(
        Array.from({ length: 60 }, () => limiter.consume([{ key: "burst", limit: 17, resetAt }])),
      );
      expect(decisions.filter((d) => d.allowed).length).toBe(17);
      const refused = decisions.find((d) => !d.allowed)!;
      expect(refused.blockedBy).toBe(0);
      expect(refused.rules[0]!.remaining).toBe(0);
    });

    test("charges every rule or none: a refusal by one rule leaves the others untouched", async () => {
      const limiter = make();
      const resetAt = inOneHour();
      const rules = [
        { key: "wide", limit: 100, resetAt },
        { key: "narrow", limit: 2, resetAt },
      ];
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await limiter.consume(rules));
      expect(results.map((r) => r.allowed)).toEqual([true, true, false, false]);
      expect(results[3]!.blockedBy).toBe(1);
      const wide = await limiter.consume([{ key: "wide", limit: 100, resetAt }]);
      expect(wide.rules[0]!.remaining).toBe(97);
    });

    test("a floor counts work done before this counter existed", async () => {
      const limiter = make();
      const resetAt = inOneHour();
      const first = await limiter.consume([{ key: "month", limit: 10, resetAt, floor: 8 }]);
      expect(first.allowed).toBe(true);
      expect(first.rules[0]!.remaining).toBe(1);
      // A stale, lower floor must not lower the count.
      const second = await limiter.consume([{ key: "month", limit: 10, resetAt, floor: 3 }]);
      expect(second.rules[0]!.remaining).toBe(0);
      const third = await limiter.consume([{ key: "month", limit: 10, resetAt, floor: 3 }]);
      expect(third.allowed).toBe(false);
    });

    test("a window whose reset time passed starts from zero", async () => {
      const limiter = make();
      const past = Date.now() - 1_000;
      await limiter.consume([{ key: "old", limit: 1, resetAt: past }]);
      const again = await limiter.consume([{ key: "old", limit: 1, resetAt: inOneHour() }]);
      expect(again.allowed).toBe(true);
    });
  });
}

describe("redis rate limiter across connections", () => {
  test("N concurrent requests from two separate clients never admit more than M", async () => {
    const other = new RedisClient(REDIS_URL);
    try {
      const prefix = uniquePrefix();
      const a = new RedisRateLimiter(redis, prefix);
      const b = new RedisRateLimiter(other, prefix);
      const resetAt = inOneHour();
      const decisions = await Promise.all(
        Array.from({ length: 80 }, (_, i) => (i % 2 ? a : b).consume([{ key: "k", limit: 23, resetAt }])),
      );
      expect(decisions.filter((d) => d.allowed).length).toBe(23);
    } finally {
      other.close();
    }
  });

  test("counters expire with their window", async () => {
    const prefix = uniquePrefix();
    const limiter = new RedisRateLimiter(redis, prefix);
    await limiter.consume([{ key: "ttl", limit: 5, resetAt: Date.now() + 60_000 }]);
    const ttl = Number(await redis.send("PTTL", [`${prefix}ttl`]));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });
});
