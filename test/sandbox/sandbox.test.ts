import { beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { generateDemoData } from "../../src/modules/sandbox/demo-data";
import { lockModelPublication } from "../../src/training/store-model";
import { sharedTestContext, type TestContext } from "../helpers/context";
import { expectAuthRequired, expectPublishableRefused } from "../helpers/security";
import { registerTenant, type Tenant } from "../helpers/tenant";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await sharedTestContext();
});

/** Loading the demo shop twice is seconds of work on a busy machine. */
const SLOW = 60_000;

const status = (tenant: Tenant) => ctx.request("GET", "/api/v1/sandbox/status", { apiKey: tenant.apiKey });

describe("POST /api/v1/sandbox/quick-start", () => {
  test(
    "loads ~200 products, 100 end users and 3000 interactions and queues a training job",
    async () => {
      const tenant = await registerTenant(ctx);
      const res = await ctx.request("POST", "/api/v1/sandbox/quick-start", { apiKey: tenant.apiKey });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ products: 200, endUsers: 100, interactions: 3000 });
      expect(typeof res.body.jobId).toBe("number");
      const after = await status(tenant);
      expect(after.body.counts).toMatchObject({ products: 200, endUsers: 100, interactions: 3000 });
      expect(after.body.counts.jobs).toBeGreaterThanOrEqual(1);
      const [categories] = await ctx.deps.database.rows<{ n: number; brands: number }>(
        sql`select count(distinct category)::int as n, count(distinct brand)::int as brands
          from products where account_id = ${tenant.accountId}`,
      );
      expect(categories!.n).toBeGreaterThanOrEqual(5);
      expect(categories!.brands).toBeGreaterThanOrEqual(10);
    },
    SLOW,
  );

  test(
    "returns a few demo end users' and products' external ids that the next calls can use at once",
    async () => {
      const tenant = await registerTenant(ctx);
      const res = await ctx.request("POST", "/api/v1/sandbox/quick-start", { apiKey: tenant.apiKey });
      expect(res.status).toBe(200);
      const { sampleEndUsers, sampleProducts } = res.body as {
        sampleEndUsers: string[];
        sampleProducts: string[];
      };
      expect(sampleEndUsers.length).toBe(3);
      expect(sampleProducts.length).toBe(3);
      const apiKey = tenant.apiKey;
      for (const id of sampleEndUsers) {
        const user = await ctx.request("GET", `/api/v1/end-users/external/${encodeURIComponent(id)}`, {
          apiKey,
        });
        expect(user.status).toBe(200);
        const recs = await ctx.request("POST", "/api/v1/recommendations/personalized/query", {
          apiKey,
          body: { external_user_id: id, limit: 5 },
        });
        expect(recs.status).toBe(200);
        expect(recs.body.items.length).toBe(5);
      }
      for (const id of sampleProducts) {
        const path = `/api/v1/recommendations/products/external/${encodeURIComponent(id)}/similar`;
        const similar = await ctx.request("GET", path, { apiKey, query: { limit: 5 } });
        expect(similar.status).toBe(200);
        expect(similar.body.items.length).toBeGreaterThan(0);
      }
    },
    SLOW,
  );

  test(
    "a demo end user asked for before the quick-start is read again after it",
    async () => {
      const tenant = await registerTenant(ctx);
      // A demo end user with interactions (the demo data leaves about one account in a hundred's first
      // end user without any).
      const demo = generateDemoData(tenant.accountId);
      const demoUser = demo.endUsers[demo.interactions[0]!.user]!.externalId;
      const histories = ctx.deps.recommendations.histories;
      expect((await histories.get(tenant.accountId, demoUser)).endUserId).toBeNull();
      const res = await ctx.request("POST", "/api/v1/sandbox/quick-start", { apiKey: tenant.apiKey });
      expect(res.status).toBe(200);
      expect(histories.loaded(tenant.accountId, demoUser)).toBeUndefined();
      const read = await histories.get(tenant.accountId, demoUser);
      expect(read.endUserId).not.toBeNull();
      expect(read.events.length).toBeGreaterThan(0);
    },
    SLOW,
  );

  test(
    "a second quick-start answers 409 CONFLICT until the sandbox is reset",
    async () => {
      const tenant = await registerTenant(ctx);
      expect(
        (await ctx.request("POST", "/api/v1/sandbox/quick-start", { apiKey: tenant.apiKey })).status,
      ).toBe(200);
      const again = await ctx.request("POST", "/api/v1/sandbox/quick-start", { apiKey: tenant.apiKey });
      expect(again.status).toBe(409);
      expect(again.body.errorCode).toBe("CONFLICT");
    },
    SLOW,
  );

  test("requires authentication and refuses publishable keys", async () => {
    await expectAuthRequired(ctx, "POST", "/api/v1/sandbox/quick-start");
    await expectPublishableRefused(ctx, "POST", "/api/v1/sandbox/quick-start");
  });
});

describe("demo data", () => {
  test("is deterministic per seed and biased towards each user's favourite categories", () => {
    const now = Date.UTC(2030, 0, 1);
    const a = generateDemoData(7, undefined, now);
    expect(generateDemoData(7, undefined, now)).toEqual(a);
    expect(a.products.length).toBe(200);
    expect(new Set(a.products.map((p) => p.externalId)).size).toBe(200);
    let inFavourite = 0;
    for (const i of a.interactions) {
      if (a.endUsers[i.user]!.preferredCategories.includes(a.products[i.product]!.category)) inFavourite++;
    }
    expect(inFavourite / a.interactions.length).toBeGreaterThan(0.6);
    const types = new Set(a.interactions.map((i) => i.type));
    expect([...types].sort()).toEqual(["CART", "CLICK", "PURCHASE", "RATING", "VIEW"]);
  });
});

describe("GET /api/v1/sandbox/status", () => {
  test("answers zero counts for a new FREE account, marked as sandbox", async () => {
    const tenant = await registerTenant(ctx);
    const res = await status(tenant);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      plan: "FREE",
      sandbox: true,
      counts: { products: 0, endUsers: 0, interactions: 0, models: 0, jobs: 0 },
    });
  });

  test(
    "counts only the caller's own data",
    async () => {
      const [owner, other] = await Promise.all([registerTenant(ctx), registerTenant(ctx)]);
      await ctx.request("POST", "/api/v1/sandbox/quick-start", { apiKey: owner.apiKey });
      const res = await status(other);
      expect(res.body.counts.products).toBe(0);
    },
    SLOW,
  );

  test("requires authentication and refuses publishable keys", async () => {
    await expectAuthRequired(ctx, "GET", "/api/v1/sandbox/status");
    await expectPublishableRefused(ctx, "GET", "/api/v1/sandbox/status");
  });
});

describe("POST /api/v1/sandbox/reset", () => {
  test(
    "deletes the account's products, end users, interactions, models and jobs and answers the counts",
    async () => {
      const tenant = await registerTenant(ctx);
      const other = await registerTenant(ctx);
      await ctx.request("POST", "/api/v1/sandbox/quick-start", { apiKey: tenant.apiKey });
      await ctx.request("POST", "/api/v1/sandbox/quick-start", { apiKey: other.apiKey });
      const res = await ctx.request("POST", "/api/v1/sandbox/reset", { token: tenant.token });
      expect(res.status).toBe(200);
      expect(res.body.deleted).toMatchObject({ products: 200, endUsers: 100, interactions: 3000 });
      expect(res.body.deleted.jobs).toBeGreaterThanOrEqual(1);
      expect((await status(tenant)).body.counts).toEqual({
        products: 0,
        endUsers: 0,
        interactions: 0,
        models: 0,
        jobs: 0,
      });
      const [orders] = await ctx.deps.database.rows<{ n: number }>(
        sql`select count(*)::int as n from orders where account_id = ${tenant.accountId}`,
      );
      expect(orders!.n).toBe(0);
      // Another tenant's data is untouched.
      expect((await status(other)).body.counts.products).toBe(200);
    },
    SLOW,
  );

  test(
    "a model being stored while the reset runs is deleted with the rest, not left behind",
    async () => {
      const tenant = await registerTenant(ctx);
      const { database } = ctx.deps;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let stored!: () => void;
      const inserted = new Promise<void>((resolve) => {
        stored = resolve;
      });
      // What a finishing training run does: the account's publication lock, then its model row, committed
      // only after the reset has started.
      const storing = database.db.transaction(async (tx) => {
        await lockModelPublication(tx, tenant.accountId);
        await tx.execute(sql`insert into models (account_id, version, algorithm, training_seconds, counts, metrics)
          values (${tenant.accountId}, 1, 'als', 1, '{}'::jsonb, '{}'::jsonb)`);
        stored();
        await gate;
      });
      await inserted;
      const reset = ctx.request("POST", "/api/v1/sandbox/reset", { apiKey: tenant.apiKey });
      await Bun.sleep(300);
      release();
      await storing;
      const res = await reset;
      expect(res.status).toBe(200);
      expect(res.body.deleted.models).toBe(1);
      expect((await status(tenant)).body.counts.models).toBe(0);
    },
    SLOW,
  );

  test("answers 403 FREE_PLAN_ONLY on a paid plan", async () => {
    const tenant = await registerTenant(ctx);
    await ctx.deps.database.db.execute(
      sql`update accounts set plan = 'PRO', subscription_status = 'active' where id = ${tenant.accountId}`,
    );
    await ctx.deps.identity.accounts.changed(tenant.accountId);
    const res = await ctx.request("POST", "/api/v1/sandbox/reset", { apiKey: tenant.apiKey });
    expect(res.status).toBe(403);
    expect(res.body.errorCode).toBe("FREE_PLAN_ONLY");
  });

  test("requires authentication and refuses publishable keys", async () => {
    await expectAuthRequired(ctx, "POST", "/api/v1/sandbox/reset");
    await expectPublishableRefused(ctx, "POST", "/api/v1/sandbox/reset");
  });
});
