import { beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { sharedTestContext, type TestContext } from "../helpers/context";
import { expectAuthRequired, expectPublishableRefused } from "../helpers/security";
import type { Tenant } from "../helpers/tenant";
import { catalogue, createShop, interact } from "../recommendations/fixtures";

beforeAll(() => sharedTestContext().then(() => undefined), 120_000);

const PATH = "/api/v1/analytics/recommendations";
const QUERY = "/api/v1/recommendations/personalized/query";

async function report(ctx: TestContext, tenant: Tenant, query: Record<string, string> = {}) {
  // What was served and clicked so far is written first (normally within a second).
  await ctx.deps.attributions.flush();
  await ctx.deps.recommendations.logs.flush();
  const res = await ctx.request("GET", PATH, { apiKey: tenant.apiKey, query });
  expect(res.status).toBe(200);
  return res.body;
}

/** An end user served `answers` personalised pages of `limit` items, clicking the first item of each. */
async function browse(
  ctx: TestContext,
  tenant: Tenant,
  user: string,
  answers: number,
  limit: number,
  body = {},
) {
  const shown: { items: { externalId: string }[]; recommendationId: string }[] = [];
  for (let n = 0; n < answers; n++) {
    const res = await ctx.request("POST", QUERY, {
      apiKey: tenant.apiKey,
      body: { external_user_id: user, limit, ...body },
    });
    expect(res.status).toBe(200);
    shown.push(res.body);
  }
  return shown;
}

describe("GET /api/v1/analytics/recommendations", () => {
  test("counts impressions, credited clicks, carts, purchases and revenue per endpoint with 95% intervals", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(20));
    await interact(ctx, tenant, "u1", "p1");
    const [first, second] = await browse(ctx, tenant, "u1", 2, 4);
    const similar = await ctx.request("GET", "/api/v1/recommendations/products/external/p3/similar", {
      apiKey: tenant.apiKey,
      query: { limit: 3 },
    });
    const post = (body: Record<string, unknown>) =>
      ctx.request("POST", "/api/v1/interactions/", {
        apiKey: tenant.apiKey,
        body: { external_user_id: "u1", ...body },
      });
    await post({
      external_product_id: first!.items[0]!.externalId,
      interaction_type: "CLICK",
      recommendation_id: first!.recommendationId,
    });
    await post({
      external_product_id: second!.items[1]!.externalId,
      interaction_type: "CART",
      recommendation_id: second!.recommendationId,
    });
    await post({
      external_product_id: second!.items[1]!.externalId,
      interaction_type: "PURCHASE",
      value: 40,
      recommendation_id: second!.recommendationId,
    });
    await post({
      external_product_id: similar.body.items[0].externalId,
      interaction_type: "CLICK",
      recommendation_id: similar.body.recommendationId,
    });

    const body = await report(ctx, tenant);
    expect(body.groupBy).toBe("endpoint");
    const byGroup = new Map(body.groups.map((g: { group: string }) => [g.group, g]));
    expect([...byGroup.keys()].sort()).toEqual(["personalized/query", "products/similar"]);
    const personalised = byGroup.get("personalized/query") as any;
    expect(personalised).toMatchObject({
      impressions: 8,
      clicks: 1,
      addToCarts: 1,
      purchases: 1,
      revenue: 40,
    });
    expect(personalised.clickThroughRate.value).toBeCloseTo(1 / 8, 10);
    expect(personalised.clickThroughRate.low).toBeGreaterThan(0);
    expect(personalised.clickThroughRate.high).toBeLessThan(1);
    expect(personalised.clickThroughRate.low).toBeLessThan(1 / 8);
    expect(personalised.conversionRate.value).toBeCloseTo(1 / 8, 10);
    expect(personalised.revenuePerThousandImpressions.value).toBeCloseTo(5000, 6);
    expect(personalised.revenuePerThousandImpressions.low).toBeLessThan(5000);
    expect(personalised.revenuePerThousandImpressions.high).toBeGreaterThan(5000);
    expect(byGroup.get("products/similar")).toMatchObject({ impressions: 3, clicks: 1 });
  });

  test("groups by strategy, model variant and day", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(20));
    await interact(ctx, tenant, "u1", "p1");
    await browse(ctx, tenant, "u1", 1, 3, { strategy: "popularity" });
    await browse(ctx, tenant, "u1", 1, 2, { model_variant: "diverse" });
    const strategies = await report(ctx, tenant, { group_by: "strategy" });
    expect(strategies.groups.map((g: any) => [g.group, g.impressions])).toEqual([
      ["hybrid", 2],
      ["popularity", 3],
    ]);
    const variants = await report(ctx, tenant, { group_by: "variant" });
    expect(variants.groups.map((g: any) => [g.group, g.impressions])).toEqual([
      ["diverse", 2],
      ["standard", 3],
    ]);
    const today = new Date().toISOString().slice(0, 10);
    const days = await report(ctx, tenant, { group_by: "day", from: today, to: today });
    expect(days.groups.map((g: any) => [g.group, g.impressions])).toEqual([[today, 5]]);
    const earlier = await report(ctx, tenant, { from: "2020-01-01", to: "2020-01-31" });
    expect(earlier.groups).toEqual([]);
  });

  test("after an end user's erasure the metrics are exactly what they were before that user arrived", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(20));
    await interact(ctx, tenant, "stays", "p1");
    const answers = await browse(ctx, tenant, "stays", 3, 5);
    await interact(ctx, tenant, "stays", answers[0]!.items[0]!.externalId, "CLICK");
    await interact(ctx, tenant, "stays", answers[1]!.items[1]!.externalId, "PURCHASE", 19.99);
    const before = await report(ctx, tenant);

    await interact(ctx, tenant, "goes", "p2");
    const theirs = await browse(ctx, tenant, "goes", 2, 6);
    await interact(ctx, tenant, "goes", theirs[0]!.items[2]!.externalId, "CLICK");
    await interact(ctx, tenant, "goes", theirs[1]!.items[0]!.externalId, "PURCHASE", 0.1);
    await interact(ctx, tenant, "goes", theirs[1]!.items[0]!.externalId, "PURCHASE", 0.2);
    const during = await report(ctx, tenant);
    expect(during.groups[0].impressions).toBe(before.groups[0].impressions + 12);
    expect(during.groups[0].purchases).toBe(before.groups[0].purchases + 2);

    const erased = await ctx.request("DELETE", "/api/v1/end-users/external/goes", { apiKey: tenant.apiKey });
    expect(erased.status).toBe(200);
    expect(await report(ctx, tenant)).toEqual(before);
  });

  test("a sandbox reset empties the account's metrics, its anonymous answers and attributions", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(10));
    await interact(ctx, tenant, "u1", "p1");
    const [answer] = await browse(ctx, tenant, "u1", 1, 3);
    await interact(ctx, tenant, "u1", answer!.items[0]!.externalId, "CLICK");
    await ctx.request("GET", "/api/v1/recommendations/category/electronics", { apiKey: tenant.apiKey });
    expect((await report(ctx, tenant)).groups.length).toBeGreaterThan(0);
    const reset = await ctx.request("POST", "/api/v1/sandbox/reset", { token: tenant.token });
    expect(reset.status).toBe(200);
    expect((await report(ctx, tenant)).groups).toEqual([]);
    const left = await ctx.deps.database.rows(sql`
      select 1 from recommendation_logs where account_id = ${tenant.accountId}
      union all select 1 from recommendation_attributions where account_id = ${tenant.accountId}`);
    expect(left).toEqual([]);
  });

  test("a bad day, a reversed or too long range, or an unknown grouping is a 422", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(2));
    for (const query of [
      { from: "2026-02-30" },
      { from: "yesterday" },
      { from: "2026-03-02", to: "2026-03-01" },
      { from: "2024-01-01", to: "2026-01-01" },
      { group_by: "arm" },
      { unknown: "1" },
    ]) {
      const res = await ctx.request("GET", PATH, { apiKey: tenant.apiKey, query });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ errorCode: "VALIDATION_ERROR", requestId: expect.any(String) });
    }
  });

  test("needs a secret key or a JWT (a publishable key is 403), and reports only the caller's account", async () => {
    const ctx = await sharedTestContext();
    await expectAuthRequired(ctx, "GET", PATH);
    await expectPublishableRefused(ctx, "GET", PATH);
    const { tenant } = await createShop(ctx, catalogue(10));
    await interact(ctx, tenant, "u1", "p1");
    await browse(ctx, tenant, "u1", 1, 3);
    const withJwt = await ctx.request("GET", PATH, { token: tenant.token });
    expect(withJwt.status).toBe(200);
    const { tenant: other } = await createShop(ctx, catalogue(2));
    expect((await report(ctx, other)).groups).toEqual([]);
    expect((await report(ctx, tenant)).groups[0].impressions).toBe(3);
  });
});
