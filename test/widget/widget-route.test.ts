import { beforeAll, describe, expect, test } from "bun:test";
import { gunzipSync } from "node:zlib";
import { sharedTestContext, type TestContext } from "../helpers/context";
import { expectAuthRequired } from "../helpers/security";
import { ALLOWED_ORIGIN, createKey, registerTenant, type Tenant } from "../helpers/tenant";

const CARDS = "/api/v1/recommendations/product-cards";
let ctx: TestContext;

beforeAll(async () => {
  ctx = await sharedTestContext();
});

async function shopWithProducts(): Promise<{ tenant: Tenant; publishable: string }> {
  const tenant = await registerTenant(ctx);
  const products = [
    {
      externalId: "kettle",
      name: "Kettle",
      price: 25,
      category: "kitchen",
      attributes: {
        image_url: "https://cdn.shop.example.com/kettle.jpg",
        url: "https://shop.example.com/p/kettle",
      },
    },
    {
      externalId: "mug",
      name: "Mug",
      price: 7.5,
      category: "kitchen",
      attributes: { url: "/p/mug", image_url: 42 },
    },
    { externalId: "gone", name: "Gone", price: 1, category: "kitchen" },
  ];
  for (const body of products) {
    expect((await ctx.request("POST", "/api/v1/products/", { apiKey: tenant.apiKey, body })).status).toBe(
      201,
    );
  }
  expect(
    (await ctx.request("DELETE", "/api/v1/products/external/gone", { apiKey: tenant.apiKey })).status,
  ).toBe(204);
  const { apiKey } = await createKey(ctx, tenant.token, { kind: "publishable" });
  return { tenant, publishable: apiKey };
}

describe("GET /widget.js", () => {
  test("serves the minified widget as JavaScript, cacheable with an ETag, gzipped when accepted", async () => {
    const plain = await ctx.app.handle(new Request("http://localhost/widget.js"));
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(plain.headers.get("cache-control")).toBe("public, max-age=600");
    expect(plain.headers.get("x-content-type-options")).toBe("nosniff");
    const etag = plain.headers.get("etag");
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const js = await plain.text();
    expect(js).toContain("data-recs");
    // Minified: a single script without the source's comments.
    expect(js).not.toContain("A click records a CLICK");

    const gzipped = await ctx.app.handle(
      new Request("http://localhost/widget.js", { headers: { "accept-encoding": "gzip, br" } }),
    );
    expect(gzipped.headers.get("content-encoding")).toBe("gzip");
    const bytes = new Uint8Array(await gzipped.arrayBuffer());
    expect(bytes.byteLength).toBeLessThan(15 * 1024);
    expect(gunzipSync(bytes).toString()).toBe(js);

    const again = await ctx.app.handle(
      new Request("http://localhost/widget.js", { headers: { "if-none-match": etag! } }),
    );
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
  });

  test("the widget names no host of its own: it calls only the service it was loaded from", async () => {
    const js = await (await ctx.app.handle(new Request("http://localhost/widget.js"))).text();
    expect(js.match(/https?:\/\/[a-z0-9.-]+/gi) ?? []).toEqual([]);
    expect(js).not.toContain("sendBeacon");
    expect(js).toContain("keepalive");
  });

  test("a stale ETag or a cache-busting query gets the whole script", async () => {
    const res = await ctx.app.handle(
      new Request("http://localhost/widget.js?v=2024-01", { headers: { "if-none-match": '"stale"' } }),
    );
    expect(res.status).toBe(200);
    expect((await res.text()).length).toBeGreaterThan(1000);
  });
});

describe("GET /api/v1/recommendations/product-cards", () => {
  test("answers name, price, image and link of live products in the order asked, for a publishable key", async () => {
    const { publishable } = await shopWithProducts();
    const res = await ctx.request("GET", CARDS, {
      apiKey: publishable,
      headers: { origin: ALLOWED_ORIGIN },
      query: { ids: ["mug", "gone", "nope", "kettle", "mug"] },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED_ORIGIN);
    expect(res.body).toEqual({
      items: [
        { externalId: "mug", name: "Mug", price: 7.5, imageUrl: null, url: "/p/mug" },
        {
          externalId: "kettle",
          name: "Kettle",
          price: 25,
          imageUrl: "https://cdn.shop.example.com/kettle.jpg",
          url: "https://shop.example.com/p/kettle",
        },
      ],
    });
  });

  test("refuses no ids or more than 100 with 422", async () => {
    const { tenant } = await shopWithProducts();
    const none = await ctx.request("GET", CARDS, { apiKey: tenant.apiKey });
    expect(none.status).toBe(422);
    expect(none.body.errorCode).toBe("VALIDATION_ERROR");
    const many = await ctx.request("GET", CARDS, {
      apiKey: tenant.apiKey,
      query: { ids: Array.from({ length: 101 }, (_, i) => `p${i}`) },
    });
    expect(many.status).toBe(422);
  });

  test("needs a key or token, the recommendations:read scope and an allowed origin; another account's products are left out", async () => {
    await expectAuthRequired(ctx, "GET", CARDS, { query: { ids: "kettle" } });
    const { tenant } = await shopWithProducts();
    const writeOnly = await createKey(ctx, tenant.token, {
      kind: "publishable",
      scopes: ["interactions:write"],
    });
    const scope = await ctx.request("GET", CARDS, {
      apiKey: writeOnly.apiKey,
      headers: { origin: ALLOWED_ORIGIN },
      query: { ids: "kettle" },
    });
    expect(scope.status).toBe(403);
    expect(scope.body.errorCode).toBe("INSUFFICIENT_SCOPE");
    const other = await registerTenant(ctx);
    const { apiKey } = await createKey(ctx, other.token, { kind: "publishable" });
    const foreign = await ctx.request("GET", CARDS, {
      apiKey,
      headers: { origin: "https://evil.example.net" },
      query: { ids: "kettle" },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.errorCode).toBe("ORIGIN_NOT_ALLOWED");
    const cross = await ctx.request("GET", CARDS, {
      apiKey,
      headers: { origin: ALLOWED_ORIGIN },
      query: { ids: ["kettle", "mug"] },
    });
    expect(cross.status).toBe(200);
    expect(cross.body.items).toEqual([]);
  });
});
