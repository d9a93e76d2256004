import { beforeAll, describe, expect, test } from "bun:test";
import type { SQL } from "drizzle-orm";
import type { DbOrTx } from "../../src/db/client";
import { sharedTestContext, type TestContext } from "../helpers/context";
import { expectAuthRequired, expectPublishableRefused } from "../helpers/security";
import { ALLOWED_ORIGIN, createKey, registerTenant } from "../helpers/tenant";

// Opening the store and applying migrations can take a while on a busy machine.
beforeAll(() => sharedTestContext().then(() => undefined), 120_000);

async function withProduct(ctx: TestContext, apiKey: string, externalId = "p1", price = 10) {
  const res = await ctx.request("POST", "/api/v1/products/", {
    apiKey,
    body: { externalId, name: externalId, price, category: "c" },
  });
  expect(res.status).toBe(201);
}

describe("POST /api/v1/interactions/", () => {
  test("records an interaction, upper-casing the type, defaulting value 1 and creating the end user", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    await withProduct(ctx, apiKey);
    const res = await ctx.request("POST", "/api/v1/interactions/", {
      apiKey,
      body: { external_user_id: "u-new", external_product_id: "p1", interaction_type: "view" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      external_user_id: "u-new",
      external_product_id: "p1",
      interaction_type: "VIEW",
      value: 1,
      timestamp: expect.any(String),
    });
    expect((await ctx.request("GET", "/api/v1/end-users/external/u-new", { apiKey })).status).toBe(200);
  }, 30_000);

  test("PURCHASE records an order of what was paid and SEARCH a search, visible in the user's export", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    await withProduct(ctx, apiKey, "p1", 12.5);
    const at = "2024-05-01T10:00:00.000Z";
    const buy = await ctx.request("POST", "/api/v1/interactions/", {
      apiKey,
      body: {
        external_user_id: "u",
        external_product_id: "p1",
        interaction_type: "Purchase",
        value: 37.5,
        timestamp: at,
      },
    });
    expect(buy.status).toBe(200);
    // Without a value, what was paid is the product's price.
    const later = "2024-05-02T10:00:00.000Z";
    const again = await ctx.request("POST", "/api/v1/interactions/", {
      apiKey,
      body: {
        external_user_id: "u",
        external_product_id: "p1",
        interaction_type: "PURCHASE",
        timestamp: later,
      },
    });
    expect(again.status).toBe(200);
    expect(buy.body.timestamp).toBe(at);
    const search = await ctx.request("POST", "/api/v1/interactions/", {
      apiKey,
      body: {
        external_user_id: "u",
        external_product_id: "p1",
        interaction_type: "SEARCH",
        query: "red shoes",
      },
    });
    expect(search.body.query).toBe("red shoes");
    const exported = await ctx.request("GET", "/api/v1/end-users/external/u/export", { apiKey });
    expect(exported.body.orders).toEqual([
      { external_product_id: "p1", quantity: 1, unit_price: 12.5, timestamp: later },
      { external_product_id: "p1", quantity: 1, unit_price: 37.5, timestamp: at },
    ]);
    expect(exported.body.searches).toEqual([
      { query: "red shoes", external_product_id: "p1", timestamp: expect.any(String) },
    ]);
  }, 30_000);

  test("unknown and deleted products answer 404", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    const body = { external_user_id: "u", external_product_id: "gone", interaction_type: "VIEW" };
    expect((await ctx.request("POST", "/api/v1/interactions/", { apiKey, body })).status).toBe(404);
    await withProduct(ctx, apiKey, "gone");
    await ctx.request("DELETE", "/api/v1/products/external/gone", { apiKey });
    const res = await ctx.request("POST", "/api/v1/interactions/", { apiKey, body });
    expect(res.status).toBe(404);
    expect(res.body.errorCode).toBe("NOT_FOUND");
    // Nothing was written, not even the end user.
    expect((await ctx.request("GET", "/api/v1/end-users/external/u", { apiKey })).status).toBe(404);
  }, 30_000);

  test.each([
    ["an unknown type", { interaction_type: "HUG" }, "interaction_type"],
    ["value 0", { value: 0 }, "value"],
    ["a negative value", { value: -2 }, "value"],
    [
      "a timestamp 10 minutes ahead",
      { timestamp: new Date(Date.now() + 600_000).toISOString() },
      "timestamp",
    ],
    ["a malformed timestamp", { timestamp: "yesterday" }, "timestamp"],
    ["an unknown field", { rating: 5 }, "rating"],
  ])(
    "%s is a 422 naming the field",
    async (_label, patch, field) => {
      const ctx = await sharedTestContext();
      const { apiKey } = await registerTenant(ctx);
      await withProduct(ctx, apiKey);
      const res = await ctx.request("POST", "/api/v1/interactions/", {
        apiKey,
        body: { external_user_id: "u", external_product_id: "p1", interaction_type: "VIEW", ...patch },
      });
      expect(res.status).toBe(422);
      expect(res.body.detail.some((d: { loc: string[] }) => d.loc.includes(field))).toBe(true);
    },
    30_000,
  );

  test("a publishable key with interactions:write may record from its allowed origin; others may not", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    await withProduct(ctx, tenant.apiKey);
    const body = { external_user_id: "browser", external_product_id: "p1", interaction_type: "CLICK" };
    const writer = await createKey(ctx, tenant.token, {
      kind: "publishable",
      scopes: ["interactions:write"],
    });
    const ok = await ctx.request("POST", "/api/v1/interactions/", {
      apiKey: writer.apiKey,
      headers: { origin: ALLOWED_ORIGIN },
      body,
    });
    expect(ok.status).toBe(200);
    const wrongOrigin = await ctx.request("POST", "/api/v1/interactions/", {
      apiKey: writer.apiKey,
      headers: { origin: "https://evil.example.org" },
      body,
    });
    expect(wrongOrigin.status).toBe(403);
    expect(wrongOrigin.body.errorCode).toBe("ORIGIN_NOT_ALLOWED");
    const reader = await createKey(ctx, tenant.token, {
      kind: "publishable",
      scopes: ["recommendations:read"],
    });
    const refused = await ctx.request("POST", "/api/v1/interactions/", {
      apiKey: reader.apiKey,
      headers: { origin: ALLOWED_ORIGIN },
      body,
    });
    expect(refused.status).toBe(403);
    expect(refused.body.errorCode).toBe("INSUFFICIENT_SCOPE");
    await expectAuthRequired(ctx, "POST", "/api/v1/interactions/", { body });
  }, 30_000);

  test("a known end user's interaction is one insert statement, which still refuses deleted and foreign products", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    const stranger = await registerTenant(ctx);
    await withProduct(ctx, apiKey, "kept");
    await withProduct(ctx, apiKey, "dropped");
    await withProduct(ctx, stranger.apiKey, "theirs");
    const send = (product: string, extra: Record<string, unknown> = {}) =>
      ctx.request("POST", "/api/v1/interactions/", {
        apiKey,
        body: {
          external_user_id: "known",
          external_product_id: product,
          interaction_type: "CLICK",
          ...extra,
        },
      });
    expect((await send("kept")).status).toBe(200);
    await ctx.request("DELETE", "/api/v1/products/external/dropped", { apiKey });
    for (const product of ["dropped", "theirs", "never"]) {
      const res = await send(product);
      expect(res.status).toBe(404);
      expect(res.body.errorCode).toBe("NOT_FOUND");
    }
    const at = "2024-03-01T10:00:00.000Z";
    // The user exists now: the one-statement insert records it (other work of the service may run meanwhile).
    const { database } = ctx.deps;
    const rows = database.rows;
    let inserts = 0;
    const created: unknown[] = [];
    (database as { rows: typeof rows }).rows = async <T>(query: SQL, on?: DbOrTx) => {
      const result = await rows<T>(query, on);
      if (JSON.stringify(query).includes("insert into interactions")) {
        inserts++;
        created.push(...result);
      }
      return result;
    };
    let second: Awaited<ReturnType<typeof send>>;
    try {
      second = await send("kept", { value: 2.5, timestamp: at });
    } finally {
      (database as { rows: typeof rows }).rows = rows;
    }
    expect(inserts).toBe(1);
    expect(created).toHaveLength(1);
    expect(second.status).toBe(200);
    expect(second.body).toEqual({
      id: expect.any(Number),
      external_user_id: "known",
      external_product_id: "kept",
      interaction_type: "CLICK",
      value: 2.5,
      timestamp: at,
    });
    const listed = await ctx.request("GET", "/api/v1/interactions/", { apiKey });
    expect(listed.body.items.map((i: { id: number }) => i.id)).toContain(second.body.id);
    expect(
      listed.body.items.map((i: { external_product_id: string }) => i.external_product_id).sort(),
    ).toEqual(["kept", "kept"]);
    const stored = listed.body.items.find((i: { id: number }) => i.id === second.body.id);
    expect(stored).toMatchObject({ external_user_id: "known", value: 2.5, timestamp: at });
  }, 30_000);

  test("another account's product cannot be referenced (404)", async () => {
    const ctx = await sharedTestContext();
    const owner = await registerTenant(ctx);
    await withProduct(ctx, owner.apiKey, "theirs");
    const stranger = await registerTenant(ctx);
    const res = await ctx.request("POST", "/api/v1/interactions/", {
      apiKey: stranger.apiKey,
      body: { external_user_id: "u", external_product_id: "theirs", interaction_type: "VIEW" },
    });
    expect(res.status).toBe(404);
  }, 30_000);
});

describe("GET /api/v1/interactions/", () => {
  test("lists the account's interactions newest first in the envelope", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    await withProduct(ctx, apiKey);
    for (const type of ["VIEW", "CLICK", "CART"]) {
      await ctx.request("POST", "/api/v1/interactions/", {
        apiKey,
        body: { external_user_id: "u", external_product_id: "p1", interaction_type: type },
      });
    }
    const res = await ctx.request("GET", "/api/v1/interactions/", { apiKey, query: { limit: 2 } });
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(3);
    expect(res.body.items.map((i: { interaction_type: string }) => i.interaction_type)).toEqual([
      "CART",
      "CLICK",
    ]);
    const stranger = await registerTenant(ctx);
    const theirs = await ctx.request("GET", "/api/v1/interactions/", { apiKey: stranger.apiKey });
    expect(theirs.body).toEqual({ items: [], total: 0, skip: 0, limit: 100 });
  }, 30_000);

  test("bad paging is 422; credentials are required; publishable keys are refused", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    expect(
      (await ctx.request("GET", "/api/v1/interactions/", { apiKey, query: { limit: 5000 } })).status,
    ).toBe(422);
    await expectAuthRequired(ctx, "GET", "/api/v1/interactions/");
    await expectPublishableRefused(ctx, "GET", "/api/v1/interactions/");
  }, 30_000);
});
