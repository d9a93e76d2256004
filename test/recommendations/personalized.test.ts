import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { sharedTestContext } from "../helpers/context";
import { expectAuthRequired } from "../helpers/security";
import { ALLOWED_ORIGIN, createKey } from "../helpers/tenant";
import { catalogue, createEndUser, createShop, deleteProduct, ids, interact } from "./fixtures";

// Each test signs up a tenant and builds its catalogue through the API; shared machines are slow.
setDefaultTimeout(60_000);

const PATH = "/api/v1/recommendations/personalized/query";

describe("POST /recommendations/personalized/query without a model", () => {
  test("a cold user gets a full page of popular products, never an error", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx);
    await interact(ctx, tenant, "buyer", "p9", "PURCHASE");
    await interact(ctx, tenant, "buyer2", "p9", "PURCHASE");
    await interact(ctx, tenant, "buyer", "p4", "VIEW");
    const res = await ctx.request("POST", PATH, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "nobody", limit: 10 },
    });
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(10);
    expect(res.body.total).toBe(30);
    expect(res.body.skip).toBe(0);
    expect(res.body.limit).toBe(10);
    expect(res.body.items[0].externalId).toBe("p9");
    expect(res.body.items[1].externalId).toBe("p4");
    // Then catalogue order.
    expect(ids(res.body).slice(2, 5)).toEqual(["p1", "p2", "p3"]);
    for (const item of res.body.items) {
      expect(typeof item.name).toBe("string");
      expect(typeof item.score).toBe("number");
      expect(item.explanation).toBeUndefined();
    }
  });

  test("a cold user with preferences sees their categories and price range first", async () => {
    const ctx = await sharedTestContext();
    const { tenant, byId } = await createShop(ctx);
    await createEndUser(ctx, tenant, {
      externalId: "reader",
      preferredCategories: ["books"],
      priceRangeMin: 0,
      priceRangeMax: 150,
    });
    const res = await ctx.request("POST", PATH, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "reader", limit: 20 },
    });
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(20);
    const fitting = [...byId.values()].filter(
      (p) => p.category.startsWith("books/") && p.price <= 150,
    ).length;
    const head = ids(res.body)
      .slice(0, fitting)
      .map((id) => byId.get(id)!);
    for (const p of head) {
      expect(p.category.startsWith("books/")).toBe(true);
      expect(p.price).toBeLessThanOrEqual(150);
    }
  });

  test("products the user interacted with (dislikes included) are left out", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(8));
    await interact(ctx, tenant, "u1", "p1", "VIEW");
    await interact(ctx, tenant, "u1", "p2", "DISLIKE");
    await interact(ctx, tenant, "u1", "p3", "PURCHASE");
    const res = await ctx.request("POST", PATH, { apiKey: tenant.apiKey, body: { external_user_id: "u1" } });
    expect(res.status).toBe(200);
    expect(ids(res.body)).not.toContain("p1");
    expect(ids(res.body)).not.toContain("p2");
    expect(ids(res.body)).not.toContain("p3");
    expect(res.body.total).toBe(5);
  });

  test("a new interaction changes the next personalised answer", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx);
    const body = {
      external_user_id: "fresh",
      strategy: "content_based",
      limit: 5,
      include_explanation: true,
    };
    const before = await ctx.request("POST", PATH, { apiKey: tenant.apiKey, body });
    expect(before.status).toBe(200);
    await interact(ctx, tenant, "fresh", "p3", "PURCHASE"); // books/fiction, brand Initech
    const after = await ctx.request("POST", PATH, { apiKey: tenant.apiKey, body });
    expect(after.status).toBe(200);
    expect(ids(after.body)).not.toEqual(ids(before.body));
    expect(ids(after.body)).not.toContain("p3");
    // Closest in category and brand to the purchase comes first, and says why.
    expect(after.body.items[0].externalId).toBe("p23");
    expect(after.body.items[0].source).toBe("content_based");
    expect(after.body.items[0].explanation).toContain("Product 3");
  });

  test("soft-deleted products never appear", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(6));
    const first = await ctx.request("POST", PATH, { apiKey: tenant.apiKey, body: { external_user_id: "x" } });
    expect(ids(first.body)).toContain("p2");
    await deleteProduct(ctx, tenant, "p2");
    const res = await ctx.request("POST", PATH, { apiKey: tenant.apiKey, body: { external_user_id: "x" } });
    expect(ids(res.body)).not.toContain("p2");
    expect(res.body.total).toBe(5);
  });

  test("skip and limit page through the ranking and total counts all candidates", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(12));
    const all = await ctx.request("POST", PATH, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "u", limit: 12 },
    });
    const page = await ctx.request("POST", PATH, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "u", limit: 5, skip: 5 },
    });
    expect(page.body.total).toBe(12);
    expect(ids(page.body)).toEqual(ids(all.body).slice(5, 10));
    const beyond = await ctx.request("POST", PATH, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "u", limit: 5, skip: 50 },
    });
    expect(beyond.body.items).toEqual([]);
    expect(beyond.body.total).toBe(12);
  });

  test("the diverse variant spreads the first items across categories", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx);
    const res = await ctx.request("POST", PATH, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "u", model_variant: "diverse", limit: 5 },
    });
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(5);
  });

  test("context.source_external_product_id pulls in products similar to it", async () => {
    const ctx = await sharedTestContext();
    const { tenant, byId } = await createShop(ctx);
    const res = await ctx.request("POST", PATH, {
      apiKey: tenant.apiKey,
      body: {
        external_user_id: "u",
        limit: 3,
        include_explanation: true,
        context: {
          source_external_product_id: "p2",
          page_type: "product_detail",
          device: "mobile",
          time_of_day: "evening",
        },
      },
    });
    expect(res.status).toBe(200);
    for (const item of res.body.items)
      expect(byId.get(item.externalId)!.category).toBe("electronics/laptops");
    expect(res.body.items[0].source).toBe("similar");
    expect(res.body.items[0].explanation).toContain("Product 2");
  });

  test("revenue goal ranks expensive products higher than engagement does", async () => {
    const ctx = await sharedTestContext();
    const { tenant, byId } = await createShop(ctx, catalogue(10));
    for (const p of ["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "p10"])
      await interact(ctx, tenant, "o", p);
    const res = await ctx.request("POST", PATH, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "u", recommendation_goal: "revenue", limit: 3 },
    });
    const prices = ids(res.body).map((id) => byId.get(id)!.price);
    const max = Math.max(...[...byId.values()].map((p) => p.price));
    expect(prices[0]).toBe(max);
  });

  test("a publishable key with recommendations:read works; without that scope it is 403", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(3));
    const allowed = await createKey(ctx, tenant.token, {
      kind: "publishable",
      scopes: ["recommendations:read"],
    });
    const ok = await ctx.request("POST", PATH, {
      apiKey: allowed.apiKey,
      headers: { origin: ALLOWED_ORIGIN },
      body: { external_user_id: "u" },
    });
    expect(ok.status).toBe(200);
    const refused = await createKey(ctx, tenant.token, {
      kind: "publishable",
      scopes: ["interactions:write"],
    });
    const res = await ctx.request("POST", PATH, {
      apiKey: refused.apiKey,
      headers: { origin: ALLOWED_ORIGIN },
      body: { external_user_id: "u" },
    });
    expect(res.status).toBe(403);
    expect(res.body.errorCode).toBe("INSUFFICIENT_SCOPE");
  });

  test("missing or invalid credentials answer 401", async () => {
    const ctx = await sharedTestContext();
    await expectAuthRequired(ctx, "POST", PATH, { body: { external_user_id: "u" } });
  });

  test("another tenant's products never leak into the answer", async () => {
    const ctx = await sharedTestContext();
    const a = await createShop(ctx, catalogue(4));
    const b = await createShop(ctx, [
      { externalId: "b-only", name: "B product", price: 10, category: "books/fiction" },
    ]);
    await interact(ctx, b.tenant, "u", "b-only", "PURCHASE");
    const res = await ctx.request("POST", PATH, {
      apiKey: a.tenant.apiKey,
      body: { external_user_id: "u", limit: 50 },
    });
    expect(ids(res.body).sort()).toEqual(["p1", "p2", "p3", "p4"]);
  });
});
