import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { products } from "../../src/db/schema";
import { assertCatalogueCapacity, assertTrainingAllowed } from "../../src/modules/plans";
import { SESSION_REQUESTS_PER_MINUTE } from "../../src/modules/plans/enforcer";
import { AppError } from "../../src/shared/errors";
import { createTestContext, type TestContext } from "../helpers/context";
import { trackTempDir } from "../helpers/temp-dirs";
import { ALLOWED_ORIGIN, createKey, registerTenant, type Tenant } from "../helpers/tenant";

const PLANS = {
  FREE: {
    name: "FREE",
    priceMonthly: 0,
    currency: "USD",
    limits: {
      requestsPerMinute: 5,
      monthlyRequests: 1000,
      maxProducts: 3,
      maxEndUsers: 2,
      trainingsPerDay: 1,
    },
    features: [],
  },
  QUOTA: {
    name: "QUOTA",
    priceMonthly: 0,
    currency: "USD",
    limits: {
      requestsPerMinute: 100,
      monthlyRequests: 4,
      maxProducts: 3,
      maxEndUsers: 2,
      trainingsPerDay: 1,
    },
    features: [],
  },
  GOLD: {
    name: "GOLD",
    priceMonthly: 10,
    currency: "USD",
    limits: {
      requestsPerMinute: 100,
      monthlyRequests: 10_000,
      maxProducts: 100,
      maxEndUsers: 100,
      trainingsPerDay: 5,
      bulkPerMinute: 2,
      bulkPerHour: 3,
      bulkPerDay: 4,
    },
    features: [],
  },
};

let ctx: TestContext;

beforeAll(async () => {
  const path = join(tmpdir(), `plans-${crypto.randomUUID()}.json`);
  writeFileSync(path, JSON.stringify(PLANS));
  trackTempDir(path);
  ctx = await createTestContext({ PLANS_FILE: path });
  // A fixed instant a few minutes ahead: no window boundary can fall inside a test.
  const fixed = Math.floor(Date.now() / 60_000) * 60_000 + 5 * 60_000 + 1_000;
  ctx.deps.planEnforcer.clock = () => fixed;
});
afterAll(() => ctx.close());

async function setPlan(tenant: Tenant, plan: string, status = "active"): Promise<void> {
  await ctx.deps.database.db.execute(
    sql`update accounts set plan = ${plan}, subscription_status = ${status} where id = ${tenant.accountId}`,
  );
  await ctx.deps.identity.accounts.changed(tenant.accountId);
}

const usage = (tenant: Tenant) => ctx.request("GET", "/api/v1/accounts/usage", { apiKey: tenant.apiKey });
/** API use, which the monthly quota counts (account management does not). */
const apiUse = (tenant: Tenant) => ctx.request("GET", "/api/v1/products/", { apiKey: tenant.apiKey });

describe("per-minute request limit", () => {
  test("admits the plan's requests per minute with X-RateLimit headers, then 429 RATE_LIMITED with Retry-After", async () => {
    const tenant = await registerTenant(ctx);
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await usage(tenant);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("5");
      remaining.push(res.headers.get("x-ratelimit-remaining")!);
    }
    expect(remaining).toEqual(["4", "3", "2", "1", "0"]);
    const refused = await usage(tenant);
    expect(refused.status).toBe(429);
    expect(refused.body.errorCode).toBe("RATE_LIMITED");
    expect(refused.body.requestId).toBeTruthy();
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(refused.headers.get("x-ratelimit-reset")).toBeTruthy();
  });

  test("N concurrent requests against a limit of M admit exactly M", async () => {
    const tenant = await registerTenant(ctx);
    const results = await Promise.all(Array.from({ length: 15 }, () => usage(tenant)));
    expect(results.filter((r) => r.status === 200).length).toBe(5);
    expect(results.filter((r) => r.status === 429).length).toBe(10);
  });

  test("one account's limit does not touch another account's budget", async () => {
    const [a, b] = await Promise.all([registerTenant(ctx), registerTenant(ctx)]);
    for (let i = 0; i < 6; i++) await usage(a);
    expect((await usage(a)).status).toBe(429);
    expect((await usage(b)).status).toBe(200);
  });
});

describe("monthly request quota", () => {
  test("answers 429 PLAN_LIMIT_EXCEEDED once the month's quota is used", async () => {
    const tenant = await registerTenant(ctx);
    await setPlan(tenant, "QUOTA", "none");
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await apiUse(tenant)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    const refused = await apiUse(tenant);
    expect(refused.body.errorCode).toBe("PLAN_LIMIT_EXCEEDED");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  test("counts requests stored in usage_daily before this process started", async () => {
    const tenant = await registerTenant(ctx);
    await setPlan(tenant, "QUOTA", "none");
    const today = new Date(ctx.deps.planEnforcer.now()).toISOString().slice(0, 10);
    await ctx.deps.database.db.execute(
      sql`insert into usage_daily (account_id, day, requests) values (${tenant.accountId}, ${today}::date, 3)`,
    );
    ctx.deps.planEnforcer.forgetBaselines();
    expect((await apiUse(tenant)).status).toBe(200);
    const refused = await apiUse(tenant);
    expect(refused.status).toBe(429);
    expect(refused.body.errorCode).toBe("PLAN_LIMIT_EXCEEDED");
  });
});

describe("the dashboard and account management", () => {
  test("keep working past the monthly quota, which still holds the shop's traffic whoever sends it", async () => {
    const tenant = await registerTenant(ctx);
    await setPlan(tenant, "QUOTA", "none");
    for (let i = 0; i < 4; i++) expect((await apiUse(tenant)).status).toBe(200);
    expect((await apiUse(tenant)).body.errorCode).toBe("PLAN_LIMIT_EXCEEDED");
    const session = { token: tenant.token };
    // What the owner needs to see why, upgrade, manage keys and browse the data.
    expect((await usage(tenant)).status).toBe(200);
    expect((await ctx.request("GET", "/api/v1/accounts/current", session)).status).toBe(200);
    expect((await ctx.request("GET", "/api/v1/api-keys/", session)).status).toBe(200);
    expect((await ctx.request("GET", "/api/v1/products/", session)).status).toBe(200);
    // Recommendations and events are API use with a token too.
    const recommend = await ctx.request("POST", "/api/v1/recommendations/personalized/query", {
      ...session,
      body: { external_user_id: "someone" },
    });
    expect(recommend.status).toBe(429);
    expect(recommend.body.errorCode).toBe("PLAN_LIMIT_EXCEEDED");
    // Signing out revokes the session.
    expect((await ctx.request("POST", "/api/v1/auth/logout", session)).status).toBeLessThan(300);
    expect((await ctx.request("GET", "/api/v1/accounts/current", session)).body.errorCode).toBe(
      "TOKEN_REVOKED",
    );
  });

  test("a signed-in user's pages have a per-minute window of their own, apart from the shop's", async () => {
    const shop = await registerTenant(ctx);
    for (let i = 0; i < 5; i++) expect((await apiUse(shop)).status).toBe(200);
    expect((await apiUse(shop)).body.errorCode).toBe("RATE_LIMITED");
    const page = await ctx.request("GET", "/api/v1/products/", { token: shop.token });
    expect(page.status).toBe(200);
    expect(page.headers.get("x-ratelimit-limit")).toBe(String(SESSION_REQUESTS_PER_MINUTE));

    const browsing = await registerTenant(ctx);
    for (let i = 0; i < 20; i++) {
      expect((await ctx.request("GET", "/api/v1/pipeline/jobs", { token: browsing.token })).status).toBe(200);
    }
    const shopRequest = await apiUse(browsing);
    expect(shopRequest.status).toBe(200);
    expect(shopRequest.headers.get("x-ratelimit-remaining")).toBe("4");
    // A signed-in user's recommendation requests are the shop's traffic: the shop's window.
    const recommend = await ctx.request("POST", "/api/v1/recommendations/personalized/query", {
      token: browsing.token,
      body: { external_user_id: "someone" },
    });
    expect(recommend.headers.get("x-ratelimit-remaining")).toBe("3");
  });
});

describe("publishable keys", () => {
  test("have a minute of their own: the public key cannot use up the minute of the shop's secret keys", async () => {
    const tenant = await registerTenant(ctx);
    const browser = await createKey(ctx, tenant.token, { kind: "publishable" });
    const fromPage = () =>
      ctx.request("POST", "/api/v1/recommendations/ecommerce/homepage", {
        apiKey: browser.apiKey,
        headers: { origin: ALLOWED_ORIGIN },
        body: { external_user_id: "visitor" },
      });
    for (let i = 0; i < 5; i++) expect((await fromPage()).status).toBe(200);
    const refused = await fromPage();
    expect(refused.status).toBe(429);
    expect(refused.body.errorCode).toBe("RATE_LIMITED");
    const backend = await apiUse(tenant);
    expect(backend.status).toBe(200);
    expect(backend.headers.get("x-ratelimit-remaining")).toBe("4");
  });
});

describe("bulk-ingestion rate", () => {
  test("POST /ingestion/batch is held to the plan's bulkPerMinute with its own X-RateLimit headers", async () => {
    const tenant = await registerTenant(ctx);
    await setPlan(tenant, "GOLD");
    const submit = () => ctx.request("POST", "/api/v1/ingestion/batch", { apiKey: tenant.apiKey, body: {} });
    const first = await submit();
    expect(first.status).not.toBe(429);
    expect(first.headers.get("x-ratelimit-limit")).toBe("2");
    expect(first.headers.get("x-ratelimit-remaining")).toBe("1");
    expect((await submit()).status).not.toBe(429);
    const refused = await submit();
    expect(refused.status).toBe(429);
    expect(refused.body.errorCode).toBe("RATE_LIMITED");
    expect(refused.body.message).toBe("Bulk-ingestion limit of 2 requests per minute exceeded");
    expect(refused.headers.get("retry-after")).toBeTruthy();
    // Other routes keep the per-minute request budget.
    expect((await usage(tenant)).status).toBe(200);
  });

  test("FREE accounts get 10 per minute when the plan sets no bulk rate", async () => {
    const tenant = await registerTenant(ctx);
    await setPlan(tenant, "QUOTA", "none");
    const res = await ctx.request("POST", "/api/v1/ingestion/batch", { apiKey: tenant.apiKey, body: {} });
    expect(res.headers.get("x-ratelimit-limit")).toBe("10");
  });
});

describe("lapsed paid subscription", () => {
  test("API use answers 403 SUBSCRIPTION_INACTIVE while account routes work with FREE limits", async () => {
    const tenant = await registerTenant(ctx);
    await setPlan(tenant, "GOLD", "lapsed");
    const data = await ctx.request("GET", "/api/v1/products/", { apiKey: tenant.apiKey });
    expect(data.status).toBe(403);
    expect(data.body.errorCode).toBe("SUBSCRIPTION_INACTIVE");
    const res = await usage(tenant);
    expect(res.status).toBe(200);
    expect(res.body.plan).toBe("GOLD");
    expect(res.body.subscriptionStatus).toBe("lapsed");
    expect(res.body.limits.requestsPerMinute).toBe(PLANS.FREE.limits.requestsPerMinute);
    expect(res.headers.get("x-ratelimit-limit")).toBe("5");
  });

  test("an active paid subscription gets the paid plan's limits", async () => {
    const tenant = await registerTenant(ctx);
    await setPlan(tenant, "GOLD", "active");
    const res = await usage(tenant);
    expect(res.status).toBe(200);
    expect(res.body.limits.requestsPerMinute).toBe(100);
    expect(res.headers.get("x-ratelimit-limit")).toBe("100");
  });
});

describe("catalogue capacity", () => {
  const insertProducts = (accountId: number, ids: string[], deleted = false) =>
    ctx.deps.database.db.insert(products).values(
      ids.map((externalId) => ({
        accountId,
        externalId,
        name: externalId,
        price: 1,
        category: "c",
        deletedAt: deleted ? new Date() : null,
      })),
    );

  test("assertCatalogueCapacity refuses with 429 PLAN_LIMIT_EXCEEDED past maxProducts, ignoring soft-deleted ones", async () => {
    const tenant = await registerTenant(ctx);
    const account = {
      id: tenant.accountId,
      name: "t",
      plan: "FREE",
      isActive: true,
      subscriptionStatus: "none",
      createdAt: new Date(),
      emailVerified: true,
      firstUserCreatedAt: new Date(),
    };
    const subject = { accountId: tenant.accountId, account };
    await insertProducts(tenant.accountId, ["a", "b"]);
    await insertProducts(tenant.accountId, ["gone1", "gone2"], true);
    await assertCatalogueCapacity(ctx.deps, subject, "products", 1);
    const refusal = await assertCatalogueCapacity(ctx.deps, subject, "products", 2).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(AppError);
    expect((refusal as AppError).code).toBe("PLAN_LIMIT_EXCEEDED");
    expect((refusal as AppError).status).toBe(429);
    expect((refusal as AppError).headers?.["Retry-After"]).toBeTruthy();
  });

  test("assertCatalogueCapacity counts end users against maxEndUsers", async () => {
    const tenant = await registerTenant(ctx);
    const account = {
      id: tenant.accountId,
      name: "t",
      plan: "FREE",
      isActive: true,
      subscriptionStatus: "none",
      createdAt: new Date(),
      emailVerified: true,
      firstUserCreatedAt: new Date(),
    };
    const refusal = await assertCatalogueCapacity(
      ctx.deps,
      { accountId: tenant.accountId, account },
      "endUsers",
      3,
    ).catch((e: unknown) => e);
    expect((refusal as AppError).code).toBe("PLAN_LIMIT_EXCEEDED");
  });
});

describe("trainings per day", () => {
  test("assertTrainingAllowed admits the plan's trainings per day, then 429 TRAINING_TOO_FREQUENT; concurrent calls never overshoot", async () => {
    const tenant = await registerTenant(ctx);
    const account = {
      id: tenant.accountId,
      name: "t",
      plan: "GOLD",
      isActive: true,
      subscriptionStatus: "active",
      createdAt: new Date(),
      emailVerified: true,
      firstUserCreatedAt: new Date(),
    };
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, () =>
        assertTrainingAllowed(ctx.deps, { accountId: tenant.accountId, account }),
      ),
    );
    expect(results.filter((r) => r.status === "fulfilled").length).toBe(5);
    const refusal = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect((refusal.reason as AppError).code).toBe("TRAINING_TOO_FREQUENT");
    expect(Number((refusal.reason as AppError).headers?.["Retry-After"])).toBeGreaterThan(0);
  });
});
