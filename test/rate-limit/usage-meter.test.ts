import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { sql } from "drizzle-orm";
import { accounts } from "../../src/db/schema";
import { createLogger } from "../../src/shared/logger";
import { MemoryUsageMeter, RedisUsageMeter, type UsageMeter } from "../../src/shared/usage-meter";
import { sharedTestContext, type TestContext } from "../helpers/context";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = new RedisClient(REDIS_URL);
const logger = createLogger("silent");
let ctx: TestContext;

beforeAll(async () => {
  ctx = await sharedTestContext();
});
afterAll(() => redis.close());

async function newAccount(): Promise<number> {
  const [row] = await ctx.deps.database.db
    .insert(accounts)
    .values({ name: "meter test" })
    .returning({ id: accounts.id });
  return row!.id;
}

async function usageOf(accountId: number) {
  return ctx.deps.database.rows<Record<string, number | string>>(
    sql`select to_char(day, 'YYYY-MM-DD') as day, requests, recommendations, ingested_records, trainings
        from usage_daily where account_id = ${accountId} order by day`,
  );
}

const meters: [string, () => UsageMeter][] = [
  ["memory", () => new MemoryUsageMeter(ctx.deps.database, logger, 60_000)],
  [
    "redis",
    () => new RedisUsageMeter(redis, ctx.deps.database, logger, `test:usage:${crypto.randomUUID()}:`, 60_000),
  ],
];

for (const [name, make] of meters) {
  describe(`${name} usage meter`, () => {
    test("flushes counts per account and UTC day into usage_daily", async () => {
      const meter = make();
      const accountId = await newAccount();
      for (let i = 0; i < 5; i++) meter.record(accountId, { requests: 1 }, new Date("2030-01-02T10:00:00Z"));
      meter.record(accountId, { recommendations: 7, ingestedRecords: 3 }, new Date("2030-01-02T23:59:59Z"));
      meter.record(accountId, { requests: 2, trainings: 1 }, new Date("2030-01-03T00:00:01Z"));
      await Bun.sleep(0);
      await meter.flush();
      expect(await usageOf(accountId)).toEqual([
        { day: "2030-01-02", requests: 5, recommendations: 7, ingested_records: 3, trainings: 0 },
        { day: "2030-01-03", requests: 2, recommendations: 0, ingested_records: 0, trainings: 1 },
      ]);
    });

    test("adds to the stored row on later flushes instead of overwriting it", async () => {
      const meter = make();
      const accountId = await newAccount();
      const at = new Date("2030-02-01T12:00:00Z");
      meter.record(accountId, { requests: 3 }, at);
      await Bun.sleep(0);
      await meter.flush();
      meter.record(accountId, { requests: 4 }, at);
      await Bun.sleep(0);
      await meter.flush();
      const [row] = await usageOf(accountId);
      expect(row!.requests).toBe(7);
    });

    test("concurrent flushes write every count exactly once", async () => {
      const meter = make();
      const accountId = await newAccount();
      const at = new Date("2030-03-01T12:00:00Z");
      await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          meter.record(accountId, { requests: 1 }, at);
          if (i % 10 === 0) await meter.flush();
        }),
      );
      await Bun.sleep(0);
      await meter.flush();
      await meter.flush();
      const [row] = await usageOf(accountId);
      expect(row!.requests).toBe(50);
    });

    test("drops counts of an account deleted before the flush without failing the others", async () => {
      const meter = make();
      const gone = await newAccount();
      const kept = await newAccount();
      const at = new Date("2030-04-01T12:00:00Z");
      meter.record(gone, { requests: 1 }, at);
      meter.record(kept, { requests: 1 }, at);
      await ctx.deps.database.db.execute(sql`delete from accounts where id = ${gone}`);
      await Bun.sleep(0);
      await meter.flush();
      expect((await usageOf(kept))[0]!.requests).toBe(1);
      expect(await usageOf(gone)).toEqual([]);
    });
  });
}

describe("redis usage meter across processes", () => {
  test("two meters on one Redis flush the combined counts once", async () => {
    const prefix = `test:usage:${crypto.randomUUID()}:`;
    const a = new RedisUsageMeter(redis, ctx.deps.database, logger, prefix, 60_000);
    const b = new RedisUsageMeter(redis, ctx.deps.database, logger, prefix, 60_000);
    const accountId = await newAccount();
    const at = new Date("2030-05-01T12:00:00Z");
    for (let i = 0; i < 10; i++) (i % 2 ? a : b).record(accountId, { recommendations: 2 }, at);
    await Bun.sleep(10);
    await Promise.all([a.flush(), b.flush()]);
    expect((await usageOf(accountId))[0]!.recommendations).toBe(20);
  });
});
