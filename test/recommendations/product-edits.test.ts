/**
 * A product written through this process is in the very next answer: the model's snapshot takes the change in
 * as the write is made, and requests arriving before it has wait for it rather than rank over the catalogue as
 * it was.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { sql } from "drizzle-orm";
import { sharedTestContext } from "../helpers/context";
import { FAST_TRAINING, trainAndWait } from "../pipeline/fixtures";
import { catalogue, createShop, ids, interact } from "./fixtures";

setDefaultTimeout(60_000);

describe("product edits with a trained model", () => {
  test("the next answer after an edit, a stock change or a new product is over the catalogue the write left", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(12));
    // A plan whose per-minute limit this many requests stay under: what is tested is the snapshot.
    await ctx.deps.database.db.execute(
      sql`update accounts set plan = 'ENTERPRISE', subscription_status = 'active' where id = ${tenant.accountId}`,
    );
    await ctx.deps.identity.accounts.changed(tenant.accountId);
    for (let u = 0; u < 6; u++) {
      for (let k = 0; k < 4; k++)
        await interact(ctx, tenant, `fan-${u}`, `p${1 + ((u + k * 3) % 12)}`, "VIEW");
    }
    expect((await trainAndWait(ctx, tenant.apiKey, FAST_TRAINING)).status).toBe("completed");
    const key = { apiKey: tenant.apiKey };
    const popular = () =>
      ctx.request("POST", "/api/v1/recommendations/personalized/query", {
        ...key,
        body: { external_user_id: "shopper", strategy: "popularity", limit: 50 },
      });
    const listing = () =>
      ctx.request("GET", "/api/v1/recommendations/category/electronics", { ...key, query: { limit: 50 } });
    const before = await popular();
    expect(ids(before.body)).toContain("p1");
    await listing();
    const homepageBefore = await ctx.request("POST", "/api/v1/recommendations/ecommerce/homepage", {
      ...key,
      body: { external_user_id: "shopper", limit: 50 },
    });
    expect(ids(homepageBefore.body)).toContain("p2");

    for (let round = 0; round < 5; round++) {
      const name = `Renamed ${round}`;
      const renamed = await ctx.request("PATCH", "/api/v1/products/external/p1", { ...key, body: { name } });
      expect(renamed.status).toBe(200);
      const answer = await popular();
      expect(answer.body.items.find((i: { externalId: string }) => i.externalId === "p1")?.name).toBe(name);
    }
    const outOfStock = await ctx.request("PATCH", "/api/v1/products/external/p2", {
      ...key,
      body: { inStock: false },
    });
    expect(outOfStock.status).toBe(200);
    // The homepage shows products in stock only.
    const homepage = await ctx.request("POST", "/api/v1/recommendations/ecommerce/homepage", {
      ...key,
      body: { external_user_id: "shopper", limit: 50 },
    });
    expect(ids(homepage.body)).not.toContain("p2");
    const created = await ctx.request("POST", "/api/v1/products/", {
      ...key,
      body: { externalId: "fresh", name: "Fresh", price: 4, category: "electronics/phones" },
    });
    expect(created.status).toBe(201);
    expect(ids((await listing()).body)).toContain("fresh");
  });
});
