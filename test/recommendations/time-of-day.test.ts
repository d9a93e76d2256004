import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { sql } from "drizzle-orm";
import { buildCategoryIndex } from "../../src/engine/categories";
import { computePopularity, DAYPARTS } from "../../src/engine/popularity";
import { daypartOf } from "../../src/engine/ranking/time-of-day";
import { createTestContext, type TestContext } from "../helpers/context";
import { registerTenant, type Tenant } from "../helpers/tenant";
import { FAST_TRAINING, generateTenant, trainAndWait } from "../pipeline/fixtures";
import { ids } from "./fixtures";

setDefaultTimeout(60_000);

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe("time of day", () => {
  test("names, UTC hours and date-times map to dayparts; anything else is ignored", () => {
    expect(daypartOf("night")).toBe(0);
    expect(daypartOf(" Evening ")).toBe(3);
    expect(daypartOf("0")).toBe(0);
    expect(daypartOf("7")).toBe(1);
    expect(daypartOf("12:30")).toBe(2);
    expect(daypartOf("23:59:59")).toBe(3);
    // 20:30 at UTC+2 is 18:30 UTC: evening; 01:00 at UTC-8 is 09:00 UTC: morning.
    expect(daypartOf("2026-11-22T20:30:00+02:00")).toBe(3);
    expect(daypartOf("2026-11-22T01:00:00-08:00")).toBe(1);
    for (const other of [undefined, "", "teatime", "24", "12:60", "2026-13-45T99:00:00Z", "-3"]) {
      expect(daypartOf(other)).toBeNull();
    }
  });

  test("training splits each item's popularity by the UTC hour of its events", () => {
    const base = Date.UTC(2026, 10, 1);
    const ts = Float64Array.from([
      base + 2 * HOUR,
      base + 2 * HOUR + DAY,
      base + 14 * HOUR,
      base + 20 * HOUR,
    ]);
    const events = {
      user: Int32Array.from([0, 1, 0, 1]),
      item: Int32Array.from([0, 0, 1, 1]),
      type: new Uint8Array(4),
      value: new Float32Array(4).fill(1),
      ts,
      nUsers: 2,
      nItems: 2,
    };
    const popularity = computePopularity(
      events,
      new Float32Array(4).fill(1),
      buildCategoryIndex([{ categoryPath: "a" }, { categoryPath: "a" }], 2),
      { halfLifeDays: 0 },
    );
    const parts = DAYPARTS.length;
    expect(Array.from(popularity.byDaypart!.subarray(0, parts))).toEqual([2, 0, 0, 0]);
    expect(Array.from(popularity.byDaypart!.subarray(parts, 2 * parts))).toEqual([0, 0, 1, 1]);
    expect(Array.from(popularity.score)).toEqual([2, 2]);
  });
});

describe("time of day with a trained model", () => {
  let ctx: TestContext;
  let tenant: Tenant;
  const QUERY = "/api/v1/recommendations/personalized/query";

  /** p-0-9 sells at night (02:00 UTC), p-1-9 in the afternoon (14:00 UTC), as often as each other. */
  beforeAll(async () => {
    ctx = await createTestContext();
    tenant = await registerTenant(ctx);
    await generateTenant(ctx, tenant.accountId, { users: 40, interactionsPerUser: 10 });
    const midnight = Math.floor(Date.now() / DAY) * DAY;
    const rows = [];
    for (let d = 1; d <= 12; d++) {
      const user = `u-${d}`;
      rows.push(sql`(${user}, ${"p-0-9"}, ${new Date(midnight - d * DAY + 2 * HOUR).toISOString()})`);
      rows.push(sql`(${user}, ${"p-1-9"}, ${new Date(midnight - d * DAY + 14 * HOUR).toISOString()})`);
    }
    await ctx.deps.database.rows(sql`
      insert into interactions (account_id, end_user_id, product_id, interaction_type, value, occurred_at)
      select ${tenant.accountId}, eu.id, p.id, 'PURCHASE', 1, v.at::timestamptz
      from (values ${sql.join(rows, sql`, `)}) as v(user_ext, product_ext, at)
      join end_users eu on eu.account_id = ${tenant.accountId} and eu.external_id = v.user_ext
      join products p on p.account_id = ${tenant.accountId} and p.external_id = v.product_ext`);
    const job = await trainAndWait(ctx, tenant.apiKey, FAST_TRAINING);
    expect(job.status).toBe("completed");
  }, 180_000);

  afterAll(async () => {
    await ctx?.close();
  });

  const order = async (timeOfDay?: string) => {
    const res = await ctx.request("POST", QUERY, {
      apiKey: tenant.apiKey,
      body: {
        external_user_id: "someone-new",
        strategy: "popularity",
        limit: 40,
        ...(timeOfDay === undefined ? {} : { context: { time_of_day: timeOfDay } }),
      },
    });
    expect(res.status).toBe(200);
    const list = ids(res.body);
    return { night: list.indexOf("p-0-9"), afternoon: list.indexOf("p-1-9") };
  };

  test("what sells at night ranks higher at night, what sells in the afternoon in the afternoon", async () => {
    const night = await order("night");
    expect(night.night).toBeGreaterThanOrEqual(0);
    expect(night.night).toBeLessThan(night.afternoon);
    const afternoon = await order("15:00");
    expect(afternoon.afternoon).toBeGreaterThanOrEqual(0);
    expect(afternoon.afternoon).toBeLessThan(afternoon.night);
  });

  test("answers are cached per daypart: another time in the same daypart meets the same cached answer", async () => {
    const pages = ctx.deps.recommendations.pages;
    const ask = (timeOfDay: string) =>
      ctx.request("POST", QUERY, {
        apiKey: tenant.apiKey,
        body: {
          external_user_id: "clock-watcher",
          strategy: "popularity",
          limit: 40,
          context: { time_of_day: timeOfDay },
        },
      });
    const first = await ask("2026-11-24T14:05:00Z");
    await ask("2026-11-24T14:05:00Z");
    const cached = pages.size;
    // Another afternoon time: no new entry (the cached answer is served), and the same items.
    const later = await ask("2026-11-24T16:59:59Z");
    expect(pages.size).toBe(cached);
    const { recommendationId: _laterId, ...laterPage } = later.body;
    const { recommendationId: _firstId, ...firstPage } = first.body;
    expect(laterPage).toEqual(firstPage);
    // At night the ranking differs, and so does its cache entry.
    const rank = (body: unknown, id: string) => {
      const at = ids(body as never).indexOf(id);
      expect(at).toBeGreaterThanOrEqual(0);
      return at;
    };
    const night = await ask("02:30");
    expect(rank(night.body, "p-0-9")).toBeLessThan(rank(night.body, "p-1-9"));
    expect(rank(later.body, "p-1-9")).toBeLessThan(rank(later.body, "p-0-9"));
  });

  test("an unrecognised time of day changes nothing", async () => {
    expect(await order("teatime")).toEqual(await order());
  });
});
