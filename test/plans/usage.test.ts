import { beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { recordUsage } from "../../src/modules/usage";
import { sharedTestContext, type TestContext } from "../helpers/context";
import { expectAuthRequired, expectPublishableRefused } from "../helpers/security";
import { registerTenant } from "../helpers/tenant";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await sharedTestContext();
});

const today = () => new Date().toISOString().slice(0, 10);

describe("GET /api/v1/accounts/usage", () => {
  test("counts API use (a key's requests, a signed-in user's recommendations and events) and work recorded with recordUsage", async () => {
    const tenant = await registerTenant(ctx);
    // Counted: a key's request, and a signed-in user's recommendation request (the playground's).
    await ctx.request("GET", "/api/v1/products/", { apiKey: tenant.apiKey });
    await ctx.request("GET", "/api/v1/sandbox/status", { apiKey: tenant.apiKey });
    await ctx.request("POST", "/api/v1/recommendations/personalized/query", {
      token: tenant.token,
      body: { external_user_id: "someone" },
    });
    // Not counted: account management, and the dashboard's own reads with the user's token.
    await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey });
    await ctx.request("GET", "/api/v1/sandbox/status", { token: tenant.token });
    await ctx.request("GET", "/api/v1/products/", { token: tenant.token });
    recordUsage(ctx.deps, tenant.accountId, { recommendations: 4, ingestedRecords: 10 });
    const res = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      plan: "FREE",
      subscriptionStatus: "none",
      requests: 3,
      recommendations: 5,
      ingestedRecords: 10,
      trainings: 0,
    });
    const free = ctx.deps.plans.FREE!.limits;
    expect(res.body.limits).toMatchObject({ ...free, bulkPerMinute: 10, bulkPerHour: 100, bulkPerDay: 1000 });
    expect(res.body.remaining).toEqual({
      monthlyRequests: free.monthlyRequests - 3,
      products: free.maxProducts,
      endUsers: free.maxEndUsers,
      trainingsToday: free.trainingsPerDay,
    });
    expect(new Date(res.body.period.start).getUTCDate()).toBe(1);
  });

  test("never includes another account's usage", async () => {
    const [a, b] = await Promise.all([registerTenant(ctx), registerTenant(ctx)]);
    recordUsage(ctx.deps, a.accountId, { recommendations: 50 });
    const res = await ctx.request("GET", "/api/v1/accounts/usage", { token: b.token });
    expect(res.body.recommendations).toBe(0);
  });

  test("requires authentication and refuses publishable keys", async () => {
    await expectAuthRequired(ctx, "GET", "/api/v1/accounts/usage");
    await expectPublishableRefused(ctx, "GET", "/api/v1/accounts/usage");
  });
});

describe("GET /api/v1/usage/summary", () => {
  test("answers this month, today, limits and catalogue counts to a dashboard user", async () => {
    const tenant = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/sandbox/quick-start", { apiKey: tenant.apiKey });
    const res = await ctx.request("GET", "/api/v1/usage/summary", { token: tenant.token });
    expect(res.status).toBe(200);
    expect(res.body.plan).toBe("FREE");
    expect(res.body.subscriptionRenewsAt).toBeNull();
    expect(res.body.today.date).toBe(today());
    // The quick start by key; the summary itself is account management.
    expect(res.body.today.requests).toBe(1);
    expect(res.body.today.trainings).toBe(1);
    expect(res.body.month.requests).toBe(1);
    expect(res.body.counts).toEqual({ products: 200, endUsers: 100 });
    expect(res.body.remaining.products).toBe(ctx.deps.plans.FREE!.limits.maxProducts - 200);
  }, 60_000);

  test("is JWT only: an API key answers 401 INVALID_TOKEN", async () => {
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("GET", "/api/v1/usage/summary", { apiKey: tenant.apiKey });
    expect(res.status).toBe(401);
    expect(res.body.errorCode).toBe("INVALID_TOKEN");
    await expectAuthRequired(ctx, "GET", "/api/v1/usage/summary", { jwtOnly: true });
  });
});

describe("GET /api/v1/usage/", () => {
  test("answers one point per day of the last 30 days by default, today included", async () => {
    const tenant = await registerTenant(ctx);
    await ctx.request("GET", "/api/v1/products/", { apiKey: tenant.apiKey });
    const res = await ctx.request("GET", "/api/v1/usage/", { apiKey: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.length).toBe(30);
    expect(res.body.at(-1)).toEqual({
      date: today(),
      requests: 1,
      recommendations: 0,
      ingestedRecords: 0,
      trainings: 0,
    });
  });

  test("answers the requested range with stored days and zeros in between", async () => {
    const tenant = await registerTenant(ctx);
    await ctx.deps.database.db.execute(
      sql`insert into usage_daily (account_id, day, requests, recommendations, ingested_records, trainings)
          values (${tenant.accountId}, '2024-03-02', 5, 6, 7, 1)`,
    );
    const res = await ctx.request("GET", "/api/v1/usage/", {
      token: tenant.token,
      query: { start_date: "2024-03-01T00:00:00Z", end_date: "2024-03-03T23:00:00Z" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { date: "2024-03-01", requests: 0, recommendations: 0, ingestedRecords: 0, trainings: 0 },
      { date: "2024-03-02", requests: 5, recommendations: 6, ingestedRecords: 7, trainings: 1 },
      { date: "2024-03-03", requests: 0, recommendations: 0, ingestedRecords: 0, trainings: 0 },
    ]);
  });

  test("answers 422 for a bad date, a reversed range or more than 366 days", async () => {
    const tenant = await registerTenant(ctx);
    for (const query of [
      { start_date: "yesterday" },
      { start_date: "2024-03-05T00:00:00Z", end_date: "2024-03-01T00:00:00Z" },
      { start_date: "2020-01-01T00:00:00Z", end_date: "2024-01-01T00:00:00Z" },
      { start_date: "0000-01-01T00:00:00Z", end_date: "0000-01-02T00:00:00Z" },
      { start_date: "-271821-04-20T00:00:00Z" },
    ]) {
      const res = await ctx.request("GET", "/api/v1/usage/", { apiKey: tenant.apiKey, query });
      expect(res.status).toBe(422);
      expect(res.body.errorCode).toBe("VALIDATION_ERROR");
    }
  });

  test("ignores unknown query parameters (cache busters, utm_*)", async () => {
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("GET", "/api/v1/usage/", {
      apiKey: tenant.apiKey,
      query: { begin: "2024-01-01T00:00:00Z", utm_source: "mail" },
    });
    expect(res.status).toBe(200);
  });

  test("requires authentication and refuses publishable keys", async () => {
    await expectAuthRequired(ctx, "GET", "/api/v1/usage/");
    await expectPublishableRefused(ctx, "GET", "/api/v1/usage/");
  });
});
