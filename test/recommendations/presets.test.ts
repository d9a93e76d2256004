import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { sharedTestContext } from "../helpers/context";
import { expectAuthRequired } from "../helpers/security";
import { ALLOWED_ORIGIN, createKey } from "../helpers/tenant";
import { catalogue, createShop, deleteProduct, ids, interact } from "./fixtures";

// Each test signs up a tenant and builds its catalogue through the API; shared machines are slow.
setDefaultTimeout(60_000);

const BASE = "/api/v1/recommendations/ecommerce";

describe("e-commerce presets without a model", () => {
  test("homepage answers its suggested 12 items, all in stock, without explanations", async () => {
    const ctx = await sharedTestContext();
    const { tenant, byId } = await createShop(ctx);
    const res = await ctx.request("POST", `${BASE}/homepage`, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "h" },
    });
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(12);
    expect(res.body.limit).toBe(12);
    for (const item of res.body.items) {
      expect(byId.get(item.externalId)!.inStock).toBe(true);
      expect(item.explanation).toBeUndefined();
    }
    // 30 products, every 7th out of stock.
    expect(res.body.total).toBe(26);
  });

  test("no purchased product is pushed again by any preset", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(10));
    await interact(ctx, tenant, "buyer", "p1", "PURCHASE");
    await interact(ctx, tenant, "buyer", "p2", "PURCHASE");
    const presets: [string, Record<string, string | string[]>][] = [
      ["homepage", {}],
      ["product-page", { current_product_id: "p3" }],
      ["cart", { cart_items: ["p4"] }],
      ["checkout", {}],
    ];
    for (const [preset, query] of presets) {
      const res = await ctx.request("POST", `${BASE}/${preset}`, {
        apiKey: tenant.apiKey,
        query,
        body: { external_user_id: "buyer", limit: 10 },
      });
      expect(res.status).toBe(200);
      expect(ids(res.body)).not.toContain("p1");
      expect(ids(res.body)).not.toContain("p2");
    }
  });

  test("product-page excludes the current product, explains, and defaults to 8", async () => {
    const ctx = await sharedTestContext();
    const { tenant, byId } = await createShop(ctx);
    const res = await ctx.request("POST", `${BASE}/product-page`, {
      apiKey: tenant.apiKey,
      query: { current_product_id: "p1" },
      body: { external_user_id: "v" },
    });
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(8);
    expect(ids(res.body)).not.toContain("p1");
    expect(byId.get(res.body.items[0].externalId)!.category).toBe(byId.get("p1")!.category);
    for (const item of res.body.items) expect(typeof item.explanation).toBe("string");
  });

  test("product-page needs current_product_id (422) and an existing product (404)", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(3));
    const missing = await ctx.request("POST", `${BASE}/product-page`, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "v" },
    });
    expect(missing.status).toBe(422);
    const unknown = await ctx.request("POST", `${BASE}/product-page`, {
      apiKey: tenant.apiKey,
      query: { current_product_id: "nope" },
      body: { external_user_id: "v" },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.errorCode).toBe("NOT_FOUND");
  });

  test("cart excludes every cart item and defaults to 6", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx);
    const cart = ["p1", "p2", "p6"];
    const res = await ctx.request("POST", `${BASE}/cart`, {
      apiKey: tenant.apiKey,
      query: { cart_items: cart },
      body: { external_user_id: "c" },
    });
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(6);
    for (const id of cart) expect(ids(res.body)).not.toContain(id);
    const single = await ctx.request("POST", `${BASE}/cart`, {
      apiKey: tenant.apiKey,
      query: { cart_items: "p1" },
      body: { external_user_id: "c", limit: 29 },
    });
    expect(single.status).toBe(200);
    expect(ids(single.body)).not.toContain("p1");
  });

  test("checkout caps every item's price at 30% of order_value and defaults to 4", async () => {
    const ctx = await sharedTestContext();
    const { tenant, byId } = await createShop(ctx);
    const res = await ctx.request("POST", `${BASE}/checkout`, {
      apiKey: tenant.apiKey,
      query: { order_value: 200 },
      body: { external_user_id: "k", limit: 50 },
    });
    expect(res.status).toBe(200);
    expect(res.body.items.length).toBeGreaterThan(0);
    for (const item of res.body.items)
      expect(byId.get(item.externalId)!.price).toBeLessThanOrEqual(0.3 * 200);
    const uncapped = await ctx.request("POST", `${BASE}/checkout`, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "k" },
    });
    expect(uncapped.body.items).toHaveLength(4);
    const bad = await ctx.request("POST", `${BASE}/checkout`, {
      apiKey: tenant.apiKey,
      query: { order_value: -5 },
      body: { external_user_id: "k" },
    });
    expect(bad.status).toBe(422);
  });

  test("deleted products never appear in presets", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(6));
    await deleteProduct(ctx, tenant, "p1");
    const res = await ctx.request("POST", `${BASE}/homepage`, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "d" },
    });
    expect(ids(res.body)).not.toContain("p1");
  });

  test("unknown body fields are 422", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(2));
    const res = await ctx.request("POST", `${BASE}/homepage`, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "d", target_score: 1 },
    });
    expect(res.status).toBe(422);
    expect(res.body.errorCode).toBe("VALIDATION_ERROR");
  });

  test("presets need credentials, accept a recommendations:read publishable key and refuse one without it", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(2));
    for (const preset of ["homepage", "cart", "checkout"]) {
      await expectAuthRequired(ctx, "POST", `${BASE}/${preset}`, { body: { external_user_id: "a" } });
    }
    const pk = await createKey(ctx, tenant.token, { kind: "publishable", scopes: ["recommendations:read"] });
    const ok = await ctx.request("POST", `${BASE}/homepage`, {
      apiKey: pk.apiKey,
      headers: { origin: ALLOWED_ORIGIN },
      body: { external_user_id: "a" },
    });
    expect(ok.status).toBe(200);
    const writer = await createKey(ctx, tenant.token, {
      kind: "publishable",
      scopes: ["interactions:write"],
    });
    const refused = await ctx.request("POST", `${BASE}/cart`, {
      apiKey: writer.apiKey,
      headers: { origin: ALLOWED_ORIGIN },
      body: { external_user_id: "a" },
    });
    expect(refused.status).toBe(403);
  });
});
