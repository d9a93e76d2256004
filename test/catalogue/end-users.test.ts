import { beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { EndUserErased } from "../../src/modules/end-users/events";
import { sharedTestContext } from "../helpers/context";
import { expectAuthRequired, expectOtherTenantNotFound, expectPublishableRefused } from "../helpers/security";
import { registerTenant } from "../helpers/tenant";

// Opening the store and applying migrations can take a while on a busy machine.
beforeAll(() => sharedTestContext().then(() => undefined), 120_000);

describe("POST /api/v1/end-users/", () => {
  test("creates an end user (200) with its optional fields", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    const res = await ctx.request("POST", "/api/v1/end-users/", {
      apiKey,
      body: {
        externalId: "u-1",
        preferredCategories: ["books"],
        priceRangeMin: 0,
        priceRangeMax: 50,
        attributes: { vip: true },
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      externalId: "u-1",
      preferredCategories: ["books"],
      priceRangeMin: 0,
      priceRangeMax: 50,
      attributes: { vip: true },
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
  }, 30_000);

  test("a duplicate externalId is 409; invalid fields are 422", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/end-users/", { apiKey, body: { externalId: "u" } });
    const dup = await ctx.request("POST", "/api/v1/end-users/", { apiKey, body: { externalId: "u" } });
    expect(dup.status).toBe(409);
    expect(dup.body.errorCode).toBe("CONFLICT");
    for (const body of [
      { externalId: "x".repeat(256) },
      { externalId: "v", priceRangeMin: -1 },
      { externalId: "v", priceRangeMin: 10, priceRangeMax: 5 },
      {},
      { externalId: "v", email: "a@b.c" },
    ]) {
      const res = await ctx.request("POST", "/api/v1/end-users/", { apiKey, body });
      expect(res.status).toBe(422);
      expect(res.body.detail.length).toBeGreaterThan(0);
    }
  }, 30_000);

  test("requires credentials and refuses publishable keys", async () => {
    const ctx = await sharedTestContext();
    await expectAuthRequired(ctx, "POST", "/api/v1/end-users/", { body: { externalId: "u" } });
    await expectPublishableRefused(ctx, "POST", "/api/v1/end-users/", { body: { externalId: "u" } });
  }, 30_000);
});

describe("GET /api/v1/end-users/ and /external/{id}", () => {
  test("lists the account's end users in the envelope and gets one by an encoded external id", async () => {
    const ctx = await sharedTestContext();
    const { apiKey, token } = await registerTenant(ctx);
    for (const id of ["a", "b", "c@x.com/1"])
      await ctx.request("POST", "/api/v1/end-users/", { apiKey, body: { externalId: id } });
    const page = await ctx.request("GET", "/api/v1/end-users/", { token, query: { skip: 1, limit: 1 } });
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ total: 3, skip: 1, limit: 1 });
    expect(page.body.items.map((u: { externalId: string }) => u.externalId)).toEqual(["b"]);
    const one = await ctx.request("GET", `/api/v1/end-users/external/${encodeURIComponent("c@x.com/1")}`, {
      apiKey,
    });
    expect(one.status).toBe(200);
    expect(one.body.externalId).toBe("c@x.com/1");
    expect((await ctx.request("GET", "/api/v1/end-users/external/nobody", { apiKey })).status).toBe(404);
    expect((await ctx.request("GET", "/api/v1/end-users/", { apiKey, query: { limit: 0 } })).status).toBe(
      422,
    );
  }, 30_000);

  test("another account's end user is 404 on every route", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/end-users/", { apiKey, body: { externalId: "private" } });
    for (const [method, path] of [
      ["GET", "/api/v1/end-users/external/private"],
      ["GET", "/api/v1/end-users/external/private/export"],
      ["DELETE", "/api/v1/end-users/external/private"],
    ] as const) {
      await expectOtherTenantNotFound(ctx, method, path);
      await expectAuthRequired(ctx, method, path);
      await expectPublishableRefused(ctx, method, path);
    }
    expect((await ctx.request("GET", "/api/v1/end-users/external/private", { apiKey })).status).toBe(200);
    const stranger = await registerTenant(ctx);
    const list = await ctx.request("GET", "/api/v1/end-users/", { apiKey: stranger.apiKey });
    expect(list.body.total).toBe(0);
  }, 30_000);
});

describe("erasure and export", () => {
  test("export returns the record and every associated kind; erasure deletes all of it in one go and says so", async () => {
    const ctx = await sharedTestContext();
    const { apiKey, accountId } = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/products/", {
      apiKey,
      body: { externalId: "p", name: "P", price: 4, category: "c" },
    });
    await ctx.request("POST", "/api/v1/end-users/", {
      apiKey,
      body: { externalId: "eve", attributes: { a: 1 } },
    });
    for (const interaction_type of ["VIEW", "PURCHASE", "SEARCH"]) {
      await ctx.request("POST", "/api/v1/interactions/", {
        apiKey,
        body: { external_user_id: "eve", external_product_id: "p", interaction_type, query: "q" },
      });
    }
    // The recommendation log is written by the recommendations module; insert one the way it does.
    const [eve] = await ctx.deps.database.rows<{ id: number }>(
      sql`select id::int as id from end_users where account_id = ${accountId} and external_id = 'eve'`,
    );
    await ctx.deps.database.rows(
      sql`insert into recommendation_logs (account_id, end_user_id, endpoint, items)
          values (${accountId}, ${eve!.id}, 'homepage', '["p"]')`,
    );
    // A bystander's data must survive the erasure.
    await ctx.request("POST", "/api/v1/interactions/", {
      apiKey,
      body: { external_user_id: "bob", external_product_id: "p", interaction_type: "PURCHASE" },
    });

    const exported = await ctx.request("GET", "/api/v1/end-users/external/eve/export", { apiKey });
    expect(exported.status).toBe(200);
    expect(exported.body.endUser.externalId).toBe("eve");
    expect(exported.body.interactions).toHaveLength(3);
    expect(exported.body.searches).toHaveLength(1);
    expect(exported.body.orders).toHaveLength(1);
    expect(exported.body.recommendations).toEqual([
      { recommendation_id: null, endpoint: "homepage", items: ["p"], timestamp: expect.any(String) },
    ]);
    expect(exported.body.attributions).toEqual([]);
    expect(typeof exported.body.exportedAt).toBe("string");

    const heard: EndUserErased[] = [];
    const stop = ctx.deps.events.endUserErased.on((event) => heard.push(event));
    const notified: string[] = [];
    const unlisten = await ctx.deps.database.listen("end_user_erased", (payload) => notified.push(payload));
    try {
      const erased = await ctx.request("DELETE", "/api/v1/end-users/external/eve", { apiKey });
      expect(erased.status).toBe(200);
      expect(erased.body).toEqual({
        externalId: "eve",
        erased: true,
        deleted: { interactions: 3, searches: 1, recommendations: 1, orders: 1, attributions: 0 },
        erasedAt: expect.any(String),
      });
      // Caches in this process hear it at once, other processes through NOTIFY.
      expect(heard).toContainEqual({ accountId, externalId: "eve", endUserId: eve!.id });
      const deadline = Date.now() + 10_000;
      while (notified.length === 0 && Date.now() < deadline) await Bun.sleep(20);
      expect(JSON.parse(notified[0]!)).toEqual({ accountId, externalId: "eve", endUserId: eve!.id });
    } finally {
      stop();
      await unlisten();
    }

    const left = await ctx.deps.database.rows<{ n: number }>(sql`select (
        (select count(*) from interactions where end_user_id = ${eve!.id}) +
        (select count(*) from searches where end_user_id = ${eve!.id}) +
        (select count(*) from orders where end_user_id = ${eve!.id}) +
        (select count(*) from recommendation_logs where end_user_id = ${eve!.id}) +
        (select count(*) from end_users where id = ${eve!.id}))::int as n`);
    expect(left[0]!.n).toBe(0);
    expect((await ctx.request("GET", "/api/v1/end-users/external/eve", { apiKey })).status).toBe(404);
    expect((await ctx.request("GET", "/api/v1/end-users/external/eve/export", { apiKey })).status).toBe(404);
    expect((await ctx.request("DELETE", "/api/v1/end-users/external/eve", { apiKey })).status).toBe(404);
    const bob = await ctx.request("GET", "/api/v1/end-users/external/bob/export", { apiKey });
    expect(bob.body.orders).toHaveLength(1);
    // The product itself is catalogue data, not the user's: it stays.
    expect((await ctx.request("GET", "/api/v1/products/external/p", { apiKey })).status).toBe(200);
  }, 30_000);
});
