import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { sharedTestContext } from "../helpers/context";
import { catalogue, createShop } from "./fixtures";

// Each test signs up a tenant and builds its catalogue through the API; shared machines are slow.
setDefaultTimeout(60_000);

const PATH = "/api/v1/recommendations/personalized/query";

describe("personalised query validation", () => {
  test("training-only and other unknown fields are 422", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(2));
    for (const extra of [{ target_scores: [1] }, { group_ids: ["g"] }, { context: { weather: "rain" } }]) {
      const res = await ctx.request("POST", PATH, {
        apiKey: tenant.apiKey,
        body: { external_user_id: "u", ...extra },
      });
      expect(res.status).toBe(422);
      expect(res.body.errorCode).toBe("VALIDATION_ERROR");
    }
  });

  test("a page defaults to 100 items; skip runs from 0 to 2^31-1, beyond it 422 naming skip", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(30));
    const page = await ctx.request("POST", PATH, { apiKey: tenant.apiKey, body: { external_user_id: "u" } });
    expect(page.status).toBe(200);
    expect(page.body.limit).toBe(100);
    expect(page.body.items).toHaveLength(30);
    const last = await ctx.request("POST", PATH, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "u", skip: 2 ** 31 - 1 },
    });
    expect(last.status).toBe(200);
    expect(last.body.items).toEqual([]);
    for (const skip of [2 ** 31, 3_000_000_000, -1]) {
      const res = await ctx.request("POST", PATH, {
        apiKey: tenant.apiKey,
        body: { external_user_id: "u", skip },
      });
      expect(res.status).toBe(422);
      expect(res.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([["body", "skip"]]);
    }
  });

  test("bad filters are 422 naming the condition", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(2));
    const cases = [
      { field: "colour", op: "eq", value: "red" },
      { field: "price", op: "between", value: 3 },
      { field: "price", op: "lt", value: "cheap" },
      { field: "in_stock", op: "eq", value: "yes" },
      { field: "category", op: "gt", value: "a" },
      { field: "brand", op: "in", value: "Acme" },
      { field: "attributes.size", op: "gte", value: "big" },
    ];
    for (const filter of cases) {
      const res = await ctx.request("POST", PATH, {
        apiKey: tenant.apiKey,
        body: { external_user_id: "u", filters: { logic: "and", filters: [filter] } },
      });
      expect(res.status).toBe(422);
      expect(res.body.detail.length).toBeGreaterThan(0);
    }
    const logic = await ctx.request("POST", PATH, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "u", filters: { logic: "xor", filters: [] } },
    });
    expect(logic.status).toBe(422);
    const limit = await ctx.request("POST", PATH, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "u", limit: 0 },
    });
    expect(limit.status).toBe(422);
  });

  test("every op and field filters correctly; or-logic unions", async () => {
    const ctx = await sharedTestContext();
    const { tenant, products } = await createShop(ctx, catalogue(20));
    const run = async (filters: unknown[], logic = "and") => {
      const res = await ctx.request("POST", PATH, {
        apiKey: tenant.apiKey,
        body: { external_user_id: "u", limit: 100, filters: { logic, filters } },
      });
      expect(res.status).toBe(200);
      return (res.body.items as { externalId: string }[]).map((i) => i.externalId).sort();
    };
    const expectIds = (pred: (p: (typeof products)[number]) => boolean) =>
      products
        .filter(pred)
        .map((p) => p.externalId)
        .sort();
    expect(await run([{ field: "category", op: "eq", value: "books" }])).toEqual(
      expectIds((p) => p.category.startsWith("books/")),
    );
    expect(await run([{ field: "category", op: "ne", value: "books" }])).toEqual(
      expectIds((p) => !p.category.startsWith("books/")),
    );
    expect(await run([{ field: "price", op: "gt", value: 100 }])).toEqual(expectIds((p) => p.price > 100));
    expect(await run([{ field: "price", op: "in", value: [42, 79] }])).toEqual(["p1", "p2"]);
    expect(await run([{ field: "brand", op: "nin", value: ["Acme"] }])).toEqual(
      expectIds((p) => p.brand !== "Acme"),
    );
    expect(await run([{ field: "brand", op: "contains", value: "glob" }])).toEqual(
      expectIds((p) => p.brand === "Globex"),
    );
    expect(await run([{ field: "in_stock", op: "eq", value: false }])).toEqual(
      expectIds((p) => p.inStock === false),
    );
    expect(await run([{ field: "attributes.color", op: "eq", value: "red" }])).toEqual(
      expectIds((p) => p.attributes?.color === "red"),
    );
    expect(await run([{ field: "attributes.size", op: "gte", value: 2 }])).toEqual(
      expectIds((p) => (p.attributes?.size as number) >= 2),
    );
    expect(await run([{ field: "rating", op: "gte", value: 1 }])).toEqual([]);
    expect(
      await run(
        [
          { field: "category", op: "in", value: ["home"] },
          { field: "price", op: "lte", value: 30 },
        ],
        "or",
      ),
    ).toEqual(expectIds((p) => p.category.startsWith("home/") || p.price <= 30));
  });
});
