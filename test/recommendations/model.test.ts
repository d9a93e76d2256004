import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { sql } from "drizzle-orm";
import { denseHistory } from "../../src/engine/ranking/components";
import { scoreForUser } from "../../src/engine/ranking/personal";
import { topK } from "../../src/engine/topk";
import { HISTORY_LENGTH } from "../../src/modules/recommendations/serving/history-cache";
import { sharedTestContext, type TestContext } from "../helpers/context";
import { ALLOWED_ORIGIN, createKey, registerTenant, type Tenant } from "../helpers/tenant";
import { FAST_TRAINING, generateTenant, trainAndWait } from "../pipeline/fixtures";
import { deleteProduct, ids, interact } from "./fixtures";

// Each test signs up a tenant and builds its catalogue through the API; shared machines are slow.
setDefaultTimeout(60_000);

const QUERY = "/api/v1/recommendations/personalized/query";

let ctx: TestContext;
let tenant: Tenant;

/** One trained tenant for the suite: 4 categories × 10 products, users who favour one category. */
beforeAll(async () => {
  ctx = await sharedTestContext();
  tenant = await registerTenant(ctx);
  await generateTenant(ctx, tenant.accountId, { users: 60, interactionsPerUser: 15 });
  const job = await trainAndWait(ctx, tenant.apiKey, FAST_TRAINING);
  expect(job.status).toBe("completed");
}, 180_000);

const category = (externalId: string): string => externalId.split("-")[1]!;

describe("recommendations with a trained model", () => {
  test("publishable-key calls get generic explanations only, never a product the user interacted with; secret keys the full ones", async () => {
    const user = `history-${crypto.randomUUID()}`;
    for (const [product, type] of [
      ["p-1-0", "PURCHASE"],
      ["p-1-1", "CART"],
      ["p-1-2", "VIEW"],
    ] as const)
      await interact(ctx, tenant, user, product, type);
    const publishable = await createKey(ctx, tenant.token, { kind: "publishable" });
    const calls = [
      { path: QUERY, body: { external_user_id: user, limit: 10, include_explanation: true } },
      {
        path: "/api/v1/recommendations/ecommerce/product-page?current_product_id=p-1-3",
        body: { external_user_id: user, limit: 8 },
      },
      { path: "/api/v1/recommendations/ecommerce/checkout", body: { external_user_id: user, limit: 4 } },
      {
        path: "/api/v1/recommendations/products/external/p-1-0/similar?limit=5&include_explanation=true&explanation_level=detailed",
        body: undefined,
      },
    ];
    const secretSentences: string[] = [];
    for (const { path, body } of calls) {
      const method = body === undefined ? "GET" : "POST";
      // The secret call first: its page is cached, and must not be served to the publishable key.
      const full = await ctx.request(method, path, { apiKey: tenant.apiKey, body });
      expect(full.status).toBe(200);
      secretSentences.push(...full.body.items.map((i: { explanation: string }) => i.explanation));
      const generic = await ctx.request(method, path, {
        apiKey: publishable.apiKey,
        body,
        headers: { origin: ALLOWED_ORIGIN },
      });
      expect(generic.status).toBe(200);
      expect(generic.body.items.length).toBeGreaterThan(0);
      for (const item of generic.body.items) {
        expect(item.explanation).toMatch(/^(Popular in [^,]+|Trending now|Matches your interests)$/);
        expect(item.explanation).not.toContain("Item ");
      }
    }
    // The secret key's sentences do name products (the check above would pass vacuously otherwise).
    expect(secretSentences.some((sentence) => /Item \d/.test(sentence))).toBe(true);
  });

  test("a user created after training is personalised from their first interaction", async () => {
    const user = `newbie-${crypto.randomUUID()}`;
    const body = { external_user_id: user, limit: 5, include_explanation: true };
    const cold = await ctx.request("POST", QUERY, { apiKey: tenant.apiKey, body });
    expect(cold.status).toBe(200);
    await interact(ctx, tenant, user, "p-2-0", "PURCHASE");
    await interact(ctx, tenant, user, "p-2-1", "CART");
    const warm = await ctx.request("POST", QUERY, { apiKey: tenant.apiKey, body });
    expect(warm.status).toBe(200);
    expect(ids(warm.body)).not.toEqual(ids(cold.body));
    expect(ids(warm.body)).not.toContain("p-2-0");
    expect(ids(warm.body)).not.toContain("p-2-1");
    const inCategory = ids(warm.body).filter((id) => category(id) === "2").length;
    expect(inCategory).toBeGreaterThanOrEqual(3);
    const first = warm.body.items[0];
    expect(["personalized", "content_based", "trending"]).toContain(first.source);
    expect(first.explanation.length).toBeGreaterThan(5);
  });

  test("every strategy answers a full page and leaves out what the user touched", async () => {
    for (const strategy of ["hybrid", "collab", "content_based", "popularity"]) {
      const res = await ctx.request("POST", QUERY, {
        apiKey: tenant.apiKey,
        body: {
          external_user_id: "u-3",
          strategy,
          limit: 10,
          model_variant: strategy === "hybrid" ? "diverse" : "standard",
        },
      });
      expect(res.status).toBe(200);
      expect(res.body.items).toHaveLength(10);
      const history = await ctx.deps.recommendations.histories.get(tenant.accountId, "u-3");
      const touched = new Set(history.events.map((e) => e.externalProductId));
      for (const id of ids(res.body)) expect(touched.has(id)).toBe(false);
    }
  });

  test("every item satisfies the filters", async () => {
    const res = await ctx.request("POST", QUERY, {
      apiKey: tenant.apiKey,
      body: {
        external_user_id: "filter-user",
        limit: 50,
        filters: {
          logic: "and",
          filters: [
            { field: "category", op: "eq", value: "cat1" },
            { field: "price", op: "lte", value: 15 },
            { field: "brand", op: "in", value: ["brand0", "brand1"] },
          ],
        },
      },
    });
    expect(res.status).toBe(200);
    // cat1 products 0..5 cost ≤ 15; of those, brand0/brand1 are products 0, 1, 3, 4.
    expect(res.body.total).toBe(4);
    expect(res.body.items).toHaveLength(4);
    for (const id of ids(res.body)) {
      const [, c, p] = id.split("-").map(Number) as [number, number, number];
      expect(c).toBe(1);
      expect(10 + p).toBeLessThanOrEqual(15);
      expect([0, 1]).toContain(p % 3);
    }
  });

  test("the default answer is the ranking training measures: the model's tuned blend, own items left out", async () => {
    const user = "u-5";
    const res = await ctx.request("POST", QUERY, {
      apiKey: tenant.apiKey,
      body: { external_user_id: user, limit: 10 },
    });
    expect(res.status).toBe(200);
    const view = await ctx.deps.recommendations.view(tenant.accountId);
    const model = view.snapshot!.model;
    const history = await ctx.deps.recommendations.histories.get(tenant.accountId, user);
    // The history as the model reads it, scored by the engine's blend (what the job's evaluation calls).
    const dense = denseHistory(view.table, history, model.weights);
    expect(dense.items.length).toBeGreaterThan(0);
    const scores = scoreForUser(model, dense);
    const leftOut = [...dense.items];
    for (let i = 0; i < view.table.size; i++) if (view.table.deleted[i] === 1) leftOut.push(i);
    const expected = [...topK(scores, 10, null, Int32Array.from(leftOut))].map(
      (i) => view.table.externalIds[i]!,
    );
    expect(ids(res.body)).toEqual(expected);
  });

  test("every product of a long history is left out, beyond the latest interactions fold-in reads", async () => {
    const user = `long-${crypto.randomUUID()}`;
    const db = ctx.deps.database;
    await db.rows(sql`insert into end_users (account_id, external_id) values (${tenant.accountId}, ${user})`);
    const old = Date.now() - 30 * 86_400_000;
    // One old purchase and one old view, then more recent views than a history read returns.
    const rows = [
      sql`(${"p-0-1"}, 'PURCHASE', ${new Date(old).toISOString()})`,
      sql`(${"p-0-2"}, 'VIEW', ${new Date(old + 1000).toISOString()})`,
      ...Array.from(
        { length: HISTORY_LENGTH + 20 },
        (_, k) => sql`(${`p-2-${k % 10}`}, 'VIEW', ${new Date(old + 86_400_000 + k * 1000).toISOString()})`,
      ),
    ];
    await db.rows(sql`
      insert into interactions (account_id, end_user_id, product_id, interaction_type, value, occurred_at)
      select ${tenant.accountId}, u.id, p.id, v.type, 1, v.at::timestamptz
      from (values ${sql.join(rows, sql`, `)}) as v(product, type, at)
      join end_users u on u.account_id = ${tenant.accountId} and u.external_id = ${user}
      join products p on p.account_id = ${tenant.accountId} and p.external_id = v.product`);
    const history = await ctx.deps.recommendations.histories.get(tenant.accountId, user);
    expect(history.events).toHaveLength(HISTORY_LENGTH);
    expect(history.events.map((e) => e.externalProductId)).not.toContain("p-0-2");
    for (const strategy of ["hybrid", "collab", "content_based", "popularity"]) {
      const res = await ctx.request("POST", QUERY, {
        apiKey: tenant.apiKey,
        body: { external_user_id: user, strategy, limit: 40 },
      });
      expect(res.status).toBe(200);
      const answered = ids(res.body);
      expect(answered.length).toBeGreaterThan(0);
      for (const own of ["p-0-1", "p-0-2", ...Array.from({ length: 10 }, (_, k) => `p-2-${k}`)]) {
        expect(answered).not.toContain(own);
      }
    }
  });

  test("a product deleted after training never appears", async () => {
    const before = await ctx.request("POST", QUERY, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "cold-x", strategy: "popularity", limit: 40 },
    });
    const top = before.body.items[0].externalId as string;
    await deleteProduct(ctx, tenant, top);
    const after = await ctx.request("POST", QUERY, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "cold-x", strategy: "popularity", limit: 40 },
    });
    expect(ids(after.body)).not.toContain(top);
    const similar = await ctx.request("GET", `/api/v1/recommendations/products/external/p-0-5/similar`, {
      apiKey: tenant.apiKey,
    });
    expect(ids(similar.body)).not.toContain(top);
    const gone = await ctx.request("GET", `/api/v1/recommendations/products/external/${top}/similar`, {
      apiKey: tenant.apiKey,
    });
    expect(gone.status).toBe(404);
  });

  test("similar products exclude the product itself and explain at the detailed level", async () => {
    const res = await ctx.request("GET", "/api/v1/recommendations/products/external/p-3-2/similar", {
      apiKey: tenant.apiKey,
      query: { limit: 5, include_explanation: true, explanation_level: "detailed" },
    });
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(5);
    expect(ids(res.body)).not.toContain("p-3-2");
    for (const item of res.body.items) {
      expect(item.source).toBe("similar");
      expect(item.explanation).toContain("signal:");
    }
  });

  test("cart complements exclude the cart items and come from co-occurrence", async () => {
    const res = await ctx.request("POST", "/api/v1/recommendations/ecommerce/cart", {
      apiKey: tenant.apiKey,
      query: { cart_items: ["p-1-0", "p-1-1"] },
      body: { external_user_id: "cart-user" },
    });
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(6);
    expect(ids(res.body)).not.toContain("p-1-0");
    expect(ids(res.body)).not.toContain("p-1-1");
    expect(res.body.items[0].source).toBe("complementary");
    expect(res.body.items[0].explanation).toMatch(/^Often bought together with Item [01] of category 1$/);
  });
});
