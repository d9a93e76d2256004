import { beforeAll, describe, expect, test } from "bun:test";
import { sharedTestContext } from "../helpers/context";
import { expectAuthRequired, expectOtherTenantNotFound, expectPublishableRefused } from "../helpers/security";
import { registerTenant } from "../helpers/tenant";

beforeAll(() => sharedTestContext().then(() => undefined), 120_000);

const PRODUCT = {
  externalId: "p-1",
  name: "Phone",
  description: "A phone",
  price: 100,
  category: "electronics/phones",
  brand: "Acme",
  inStock: true,
  attributes: { color: "red" },
};

describe("PATCH /api/v1/products/external/{id}", () => {
  test("changes only the fields given: a price-only patch keeps brand, attributes and the rest", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    expect((await ctx.request("POST", "/api/v1/products/", { apiKey, body: PRODUCT })).status).toBe(201);
    const patched = await ctx.request("PATCH", "/api/v1/products/external/p-1", {
      apiKey,
      body: { price: 79.5 },
    });
    expect(patched.status).toBe(200);
    const { externalId, name, description, category, brand, inStock, attributes } = PRODUCT;
    expect(patched.body).toMatchObject({
      externalId,
      name,
      description,
      category,
      brand,
      inStock,
      attributes,
    });
    expect(patched.body.price).toBe(79.5);
    const read = await ctx.request("GET", "/api/v1/products/external/p-1", { apiKey });
    expect(read.body).toEqual(patched.body);

    const cleared = await ctx.request("PATCH", "/api/v1/products/external/p-1", {
      apiKey,
      body: { brand: null, attributes: { size: "M" }, inStock: false },
    });
    expect(cleared.body).toMatchObject({
      brand: null,
      attributes: { size: "M" },
      inStock: false,
      price: 79.5,
    });
  }, 30_000);

  test("PUT still replaces the whole product: omitted brand and attributes go back to their defaults", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/products/", { apiKey, body: PRODUCT });
    const { externalId: _, brand: __, attributes: ___, ...required } = PRODUCT;
    const replaced = await ctx.request("PUT", "/api/v1/products/external/p-1", { apiKey, body: required });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ brand: null, attributes: {} });
  }, 30_000);

  test("unknown or deleted products answer 404; invalid fields 422 and nothing changes", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    const missing = await ctx.request("PATCH", "/api/v1/products/external/nope", {
      apiKey,
      body: { price: 1 },
    });
    expect([missing.status, missing.body.errorCode]).toEqual([404, "NOT_FOUND"]);
    await ctx.request("POST", "/api/v1/products/", { apiKey, body: PRODUCT });
    for (const body of [{ price: 0 }, { price: "cheap" }, { externalId: "p-2" }, { unknown: 1 }]) {
      const bad = await ctx.request("PATCH", "/api/v1/products/external/p-1", { apiKey, body });
      expect({ body, status: bad.status, code: bad.body.errorCode }).toEqual({
        body,
        status: 422,
        code: "VALIDATION_ERROR",
      });
    }
    expect((await ctx.request("GET", "/api/v1/products/external/p-1", { apiKey })).body.price).toBe(100);
    await ctx.request("DELETE", "/api/v1/products/external/p-1", { apiKey });
    const deleted = await ctx.request("PATCH", "/api/v1/products/external/p-1", {
      apiKey,
      body: { price: 1 },
    });
    expect(deleted.status).toBe(404);
  }, 30_000);

  test("needs a secret key or token; publishable keys are refused; another tenant's product is 404", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/products/", { apiKey, body: PRODUCT });
    const path = "/api/v1/products/external/p-1";
    await expectAuthRequired(ctx, "PATCH", path, { body: { price: 1 } });
    await expectPublishableRefused(ctx, "PATCH", path, { body: { price: 1 } });
    await expectOtherTenantNotFound(ctx, "PATCH", path, { body: { price: 1 } });
    expect((await ctx.request("GET", path, { apiKey })).body.price).toBe(100);
  }, 30_000);
});

describe("PATCH /api/v1/end-users/external/{id}", () => {
  test("updates preferred categories, price range and attributes, each only when given", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/end-users/", {
      apiKey,
      body: {
        externalId: "u-1",
        preferredCategories: ["books"],
        priceRangeMin: 5,
        attributes: { tier: "gold" },
      },
    });
    const patched = await ctx.request("PATCH", "/api/v1/end-users/external/u-1", {
      apiKey,
      body: { preferredCategories: ["electronics", "toys"], priceRangeMax: 50 },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      externalId: "u-1",
      preferredCategories: ["electronics", "toys"],
      priceRangeMin: 5,
      priceRangeMax: 50,
      attributes: { tier: "gold" },
    });
    const cleared = await ctx.request("PATCH", "/api/v1/end-users/external/u-1", {
      apiKey,
      body: { priceRangeMin: null, attributes: { tier: "silver" } },
    });
    expect(cleared.body).toMatchObject({
      priceRangeMin: null,
      priceRangeMax: 50,
      attributes: { tier: "silver" },
    });
    const read = await ctx.request("GET", "/api/v1/end-users/external/u-1", { apiKey });
    expect(read.body).toEqual(cleared.body);
  }, 30_000);

  test("the next recommendation sees the new preferences (the cached profile is dropped)", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    for (const [id, category, price] of [
      ["b-1", "books", 10],
      ["b-2", "books", 12],
      ["t-1", "toys", 500],
      ["t-2", "toys", 600],
    ] as const) {
      await ctx.request("POST", "/api/v1/products/", {
        apiKey,
        body: { externalId: id, name: id, price, category },
      });
    }
    await ctx.request("POST", "/api/v1/end-users/", { apiKey, body: { externalId: "u-1" } });
    const ask = async () =>
      (
        await ctx.request("POST", "/api/v1/recommendations/personalized/query", {
          apiKey,
          body: { external_user_id: "u-1", limit: 2 },
        })
      ).body;
    const ids = (answer: { items: { externalId: string }[] }) => answer.items.map((item) => item.externalId);
    const before = ids(await ask());
    expect(before.every((id) => id.startsWith("t-"))).toBe(false);
    await ctx.request("PATCH", "/api/v1/end-users/external/u-1", {
      apiKey,
      body: { preferredCategories: ["toys"] },
    });
    expect(ids(await ask()).sort()).toEqual(["t-1", "t-2"]);
  }, 30_000);

  test("a minimum above the maximum (given or stored) is 422 and nothing changes; unknown users 404", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/end-users/", {
      apiKey,
      body: { externalId: "u-1", priceRangeMax: 50 },
    });
    const above = await ctx.request("PATCH", "/api/v1/end-users/external/u-1", {
      apiKey,
      body: { priceRangeMin: 80 },
    });
    expect([above.status, above.body.errorCode]).toEqual([422, "VALIDATION_ERROR"]);
    expect(above.body.detail[0].loc).toEqual(["body", "priceRangeMin"]);
    for (const body of [{ priceRangeMin: -1 }, { preferredCategories: "books" }, { externalId: "u-2" }]) {
      const bad = await ctx.request("PATCH", "/api/v1/end-users/external/u-1", { apiKey, body });
      expect({ body, status: bad.status }).toEqual({ body, status: 422 });
    }
    const read = await ctx.request("GET", "/api/v1/end-users/external/u-1", { apiKey });
    expect(read.body).toMatchObject({ priceRangeMin: null, priceRangeMax: 50 });
    const missing = await ctx.request("PATCH", "/api/v1/end-users/external/ghost", {
      apiKey,
      body: { priceRangeMax: 1 },
    });
    expect([missing.status, missing.body.errorCode]).toEqual([404, "NOT_FOUND"]);
  }, 30_000);

  test("needs a secret key or token; publishable keys are refused; another tenant's end user is 404", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/end-users/", { apiKey, body: { externalId: "u-1" } });
    const path = "/api/v1/end-users/external/u-1";
    const body = { preferredCategories: ["books"] };
    await expectAuthRequired(ctx, "PATCH", path, { body });
    await expectPublishableRefused(ctx, "PATCH", path, { body });
    await expectOtherTenantNotFound(ctx, "PATCH", path, { body });
    expect((await ctx.request("GET", path, { apiKey })).body.preferredCategories).toEqual([]);
  }, 30_000);
});

describe("interaction value", () => {
  test("defaults to 1 on a single interaction and on a bulk record", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/products/", { apiKey, body: PRODUCT });
    const single = await ctx.request("POST", "/api/v1/interactions/", {
      apiKey,
      body: { external_user_id: "u-1", external_product_id: "p-1", interaction_type: "view" },
    });
    expect(single.status).toBeLessThan(300);
    const batch = await ctx.request("POST", "/api/v1/ingestion/batch", {
      apiKey,
      body: {
        interactions: [{ external_user_id: "u-2", external_product_id: "p-1", interaction_type: "CLICK" }],
      },
    });
    expect(batch.status).toBe(202);
    let job: { status: string; errors: unknown[] } = { status: "processing", errors: [] };
    for (let i = 0; i < 200 && job.status === "processing"; i++) {
      await Bun.sleep(50);
      job = (await ctx.request("GET", `/api/v1/ingestion/batch/${batch.body.jobId}`, { apiKey })).body;
    }
    expect(job).toMatchObject({ status: "completed", errors: [] });
    const listed = await ctx.request("GET", "/api/v1/interactions/", { apiKey });
    expect(listed.body.items.map((i: { value: number }) => i.value)).toEqual([1, 1]);
  }, 30_000);
});

describe("PATCH routes hold the contract's input limits, as create and PUT do", () => {
  test("attributes past 100 keys or 16 KB, and a brand past 500 characters, answer 422 and change nothing", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/products/", { apiKey, body: PRODUCT });
    await ctx.request("POST", "/api/v1/end-users/", { apiKey, body: { externalId: "u-1" } });
    const manyKeys = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i]));
    const huge = { blob: "x".repeat(17 * 1024) };
    for (const [path, body] of [
      ["/api/v1/products/external/p-1", { attributes: manyKeys }],
      ["/api/v1/products/external/p-1", { attributes: huge }],
      ["/api/v1/products/external/p-1", { brand: "b".repeat(501) }],
      ["/api/v1/end-users/external/u-1", { attributes: manyKeys }],
      ["/api/v1/end-users/external/u-1", { attributes: huge }],
    ] as const) {
      const res = await ctx.request("PATCH", path, { apiKey, body });
      expect({ path, body: Object.keys(body), status: res.status }).toEqual({
        path,
        body: Object.keys(body),
        status: 422,
      });
      expect(res.body.errorCode).toBe("VALIDATION_ERROR");
    }
    expect((await ctx.request("GET", "/api/v1/products/external/p-1", { apiKey })).body.attributes).toEqual({
      color: "red",
    });
    expect((await ctx.request("GET", "/api/v1/end-users/external/u-1", { apiKey })).body.attributes).toEqual(
      {},
    );
  }, 30_000);
});
