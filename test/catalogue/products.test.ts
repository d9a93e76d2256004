import { beforeAll, describe, expect, test } from "bun:test";
import { sharedTestContext } from "../helpers/context";
import { expectAuthRequired, expectOtherTenantNotFound, expectPublishableRefused } from "../helpers/security";
import { registerTenant } from "../helpers/tenant";

// Opening the store and applying migrations can take a while on a busy machine.
beforeAll(() => sharedTestContext().then(() => undefined), 120_000);

const product = (externalId: string, extra: Record<string, unknown> = {}) => ({
  externalId,
  name: `Product ${externalId}`,
  price: 19.9,
  category: "electronics/phones",
  ...extra,
});

describe("POST /api/v1/products/", () => {
  test("creates a product (201) and returns the full record with defaults", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    const res = await ctx.request("POST", "/api/v1/products/", {
      apiKey,
      body: product("p-1", { brand: "Acme", attributes: { color: "red" } }),
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      externalId: "p-1",
      name: "Product p-1",
      description: null,
      price: 19.9,
      category: "electronics/phones",
      brand: "Acme",
      inStock: true,
      attributes: { color: "red" },
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
  }, 30_000);

  test("a live externalId answers 409 CONFLICT", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    expect((await ctx.request("POST", "/api/v1/products/", { apiKey, body: product("dup") })).status).toBe(
      201,
    );
    const again = await ctx.request("POST", "/api/v1/products/", { apiKey, body: product("dup") });
    expect(again.status).toBe(409);
    expect(again.body.errorCode).toBe("CONFLICT");
  }, 30_000);

  test("re-creating a soft-deleted externalId revives it with the new fields", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/products/", { apiKey, body: product("phoenix") });
    expect((await ctx.request("DELETE", "/api/v1/products/external/phoenix", { apiKey })).status).toBe(204);
    const revived = await ctx.request("POST", "/api/v1/products/", {
      apiKey,
      body: product("phoenix", { name: "Reborn", price: 5 }),
    });
    expect(revived.status).toBe(201);
    expect(revived.body.name).toBe("Reborn");
    const got = await ctx.request("GET", "/api/v1/products/external/phoenix", { apiKey });
    expect(got.status).toBe(200);
    expect(got.body.price).toBe(5);
  }, 30_000);

  test.each([
    ["price 0", { price: 0 }, "price"],
    ["negative price", { price: -1 }, "price"],
    ["name over 500 chars", { name: "n".repeat(501) }, "name"],
    ["category over 255 chars", { category: "c".repeat(256) }, "category"],
    ["externalId over 255 chars", { externalId: "e".repeat(256) }, "externalId"],
    ["unknown field", { colour: "red" }, "colour"],
  ])(
    "%s is a 422 with detail naming the field",
    async (_label, patch, field) => {
      const ctx = await sharedTestContext();
      const { apiKey } = await registerTenant(ctx);
      const res = await ctx.request("POST", "/api/v1/products/", {
        apiKey,
        body: { ...product("bad"), ...patch },
      });
      expect(res.status).toBe(422);
      expect(res.body.errorCode).toBe("VALIDATION_ERROR");
      expect(res.body.detail.some((d: { loc: string[] }) => d.loc.includes(field))).toBe(true);
    },
    30_000,
  );

  test("missing required fields are a 422 listing them", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    const res = await ctx.request("POST", "/api/v1/products/", { apiKey, body: { externalId: "x" } });
    expect(res.status).toBe(422);
    const fields = res.body.detail.map((d: { loc: string[] }) => d.loc.at(-1));
    expect(fields).toEqual(expect.arrayContaining(["name", "price", "category"]));
  }, 30_000);

  test("requires credentials and refuses publishable keys", async () => {
    const ctx = await sharedTestContext();
    await expectAuthRequired(ctx, "POST", "/api/v1/products/", { body: product("x") });
    await expectPublishableRefused(ctx, "POST", "/api/v1/products/", { body: product("x") });
  }, 30_000);
});

describe("GET /api/v1/products/", () => {
  test("category filter includes sub-categories but not look-alike prefixes", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    const categories = ["a/b", "a/b/c", "a/b/c/d", "a/bc", "a/b-x", "a", "a_b", "a%b/c"];
    for (const [i, category] of categories.entries()) {
      await ctx.request("POST", "/api/v1/products/", { apiKey, body: product(`p${i}`, { category }) });
    }
    const names = async (category: string) => {
      const res = await ctx.request("GET", "/api/v1/products/", { apiKey, query: { category } });
      expect(res.status).toBe(200);
      return res.body.items.map((p: { category: string }) => p.category).sort();
    };
    expect(await names("a/b")).toEqual(["a/b", "a/b/c", "a/b/c/d"]);
    expect(await names("a")).toEqual(["a", "a/b", "a/b/c", "a/b/c/d", "a/b-x", "a/bc"].sort());
    // LIKE wildcards in the filter are plain characters.
    expect(await names("a_b")).toEqual(["a_b"]);
    expect(await names("a%b")).toEqual(["a%b/c"]);
  }, 30_000);

  test("answers the pagination envelope with skip/limit and leaves out deleted products", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    for (let i = 0; i < 5; i++)
      await ctx.request("POST", "/api/v1/products/", { apiKey, body: product(`p${i}`) });
    await ctx.request("DELETE", "/api/v1/products/external/p0", { apiKey });
    const res = await ctx.request("GET", "/api/v1/products/", { apiKey, query: { skip: 1, limit: 2 } });
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(4);
    expect(res.body.skip).toBe(1);
    expect(res.body.limit).toBe(2);
    expect(res.body.items.map((p: { externalId: string }) => p.externalId)).toEqual(["p2", "p3"]);
    const defaults = await ctx.request("GET", "/api/v1/products/", { apiKey });
    expect(defaults.body).toMatchObject({ skip: 0, limit: 100, total: 4 });
  }, 30_000);

  test("limit outside 1..1000 and negative skip are 422", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    for (const query of [{ limit: 0 }, { limit: 1001 }, { skip: -1 }, { limit: "ten" }]) {
      const res = await ctx.request("GET", "/api/v1/products/", { apiKey, query });
      expect(res.status).toBe(422);
    }
  }, 30_000);

  test("lists only the caller's products", async () => {
    const ctx = await sharedTestContext();
    const a = await registerTenant(ctx);
    const b = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/products/", { apiKey: a.apiKey, body: product("mine") });
    const res = await ctx.request("GET", "/api/v1/products/", { apiKey: b.apiKey });
    expect(res.body).toEqual({ items: [], total: 0, skip: 0, limit: 100 });
    await expectAuthRequired(ctx, "GET", "/api/v1/products/");
    await expectPublishableRefused(ctx, "GET", "/api/v1/products/");
  }, 30_000);
});

describe("/api/v1/products/external/{external_id}", () => {
  test("get, full update and soft delete by an external id with reserved characters", async () => {
    const ctx = await sharedTestContext();
    const { apiKey, token } = await registerTenant(ctx);
    const id = "sku/42 ü?&#";
    const path = `/api/v1/products/external/${encodeURIComponent(id)}`;
    await ctx.request("POST", "/api/v1/products/", {
      apiKey,
      body: product(id, { brand: "Acme", description: "old", attributes: { a: 1 } }),
    });
    const got = await ctx.request("GET", path, { token });
    expect(got.status).toBe(200);
    expect(got.body.externalId).toBe(id);

    const put = await ctx.request("PUT", path, {
      apiKey,
      body: { name: "New name", price: 7.5, category: "books", inStock: false },
    });
    expect(put.status).toBe(200);
    // Full update: optional fields that were left out return to their defaults.
    expect(put.body).toMatchObject({
      externalId: id,
      name: "New name",
      price: 7.5,
      category: "books",
      inStock: false,
      brand: null,
      description: null,
      attributes: {},
    });

    const del = await ctx.request("DELETE", path, { apiKey });
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect((await ctx.request("GET", path, { apiKey })).status).toBe(404);
    expect(
      (await ctx.request("PUT", path, { apiKey, body: { name: "x", price: 1, category: "c" } })).status,
    ).toBe(404);
    expect((await ctx.request("DELETE", path, { apiKey })).status).toBe(404);
  }, 30_000);

  test("unknown products answer 404 NOT_FOUND; a bad update body is 422", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    const missing = await ctx.request("GET", "/api/v1/products/external/nope", { apiKey });
    expect(missing.status).toBe(404);
    expect(missing.body.errorCode).toBe("NOT_FOUND");
    await ctx.request("POST", "/api/v1/products/", { apiKey, body: product("p") });
    const bad = await ctx.request("PUT", "/api/v1/products/external/p", {
      apiKey,
      body: { name: "x", price: 0, category: "c" },
    });
    expect(bad.status).toBe(422);
    const withId = await ctx.request("PUT", "/api/v1/products/external/p", {
      apiKey,
      body: { externalId: "p", name: "x", price: 1, category: "c" },
    });
    expect(withId.status).toBe(422);
  }, 30_000);

  test("another account's product is 404 on every route; credentials are required", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/products/", { apiKey, body: product("private") });
    const path = "/api/v1/products/external/private";
    await expectOtherTenantNotFound(ctx, "GET", path);
    await expectOtherTenantNotFound(ctx, "PUT", path, { body: { name: "x", price: 1, category: "c" } });
    await expectOtherTenantNotFound(ctx, "DELETE", path);
    // Still there for its owner.
    expect((await ctx.request("GET", path, { apiKey })).body.name).toBe("Product private");
    await expectAuthRequired(ctx, "GET", path);
    await expectAuthRequired(ctx, "DELETE", path);
    await expectPublishableRefused(ctx, "PUT", path, { body: { name: "x", price: 1, category: "c" } });
  }, 30_000);
});
