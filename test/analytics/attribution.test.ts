import { beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { sharedTestContext, type TestContext } from "../helpers/context";
import type { Tenant } from "../helpers/tenant";
import { catalogue, createShop, interact } from "../recommendations/fixtures";

beforeAll(() => sharedTestContext().then(() => undefined), 120_000);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Answer {
  items: { externalId: string }[];
  recommendationId: string;
}

async function personalised(ctx: TestContext, tenant: Tenant, user: string, limit = 5): Promise<Answer> {
  const res = await ctx.request("POST", "/api/v1/recommendations/personalized/query", {
    apiKey: tenant.apiKey,
    body: { external_user_id: user, limit },
  });
  expect(res.status).toBe(200);
  return res.body;
}

async function send(
  ctx: TestContext,
  tenant: Tenant,
  body: Record<string, unknown>,
): Promise<{ status: number; body: any }> {
  return ctx.request("POST", "/api/v1/interactions/", { apiKey: tenant.apiKey, body });
}

interface AttributionRow {
  recommendation_id: string;
  external_id: string;
  position: number;
  interaction_type: string;
  revenue: number;
  endpoint: string;
  end_user: string;
}

/** Writes what is queued (the answers first), then reads the account's attributions. */
async function attributions(ctx: TestContext, tenant: Tenant): Promise<AttributionRow[]> {
  await ctx.deps.attributions.flush();
  const rows = await ctx.deps.database.rows<AttributionRow>(sql`
    select a.recommendation_id::text as recommendation_id, p.external_id, a.position, a.interaction_type,
           a.revenue, a.endpoint, u.external_id as end_user
    from recommendation_attributions a
    join products p on p.id = a.product_id
    join end_users u on u.id = a.end_user_id
    where a.account_id = ${tenant.accountId}
    order by a.created_at, a.interaction_type, p.external_id`);
  return rows.map((r) => ({ ...r, position: Number(r.position), revenue: Number(r.revenue) }));
}

describe("recommendation ids", () => {
  test("every answer of every endpoint carries a recommendation id of its own, also when served again from the page cache", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(12));
    await interact(ctx, tenant, "u1", "p1");
    const key = { apiKey: tenant.apiKey };
    const user = { external_user_id: "u1" };
    const answers = [
      await ctx.request("POST", "/api/v1/recommendations/personalized/query", { ...key, body: user }),
      await ctx.request("POST", "/api/v1/recommendations/personalized/query", { ...key, body: user }),
      await ctx.request("POST", "/api/v1/recommendations/ecommerce/homepage", { ...key, body: user }),
      await ctx.request("POST", "/api/v1/recommendations/ecommerce/product-page", {
        ...key,
        body: user,
        query: { current_product_id: "p2" },
      }),
      await ctx.request("POST", "/api/v1/recommendations/ecommerce/cart", {
        ...key,
        body: user,
        query: { cart_items: ["p2"] },
      }),
      await ctx.request("POST", "/api/v1/recommendations/ecommerce/checkout", { ...key, body: user }),
      await ctx.request("GET", "/api/v1/recommendations/products/external/p2/similar", key),
      await ctx.request("GET", "/api/v1/recommendations/products/external/p2/similar", key),
      await ctx.request("GET", "/api/v1/recommendations/category/electronics", key),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body.recommendationId).toMatch(UUID);
      // The id is in the JSON text sent, not only in the checked body.
      expect(JSON.parse(answer.text).recommendationId).toBe(answer.body.recommendationId);
    }
    const sent = answers.map((a) => a.body.recommendationId as string);
    expect(new Set(sent).size).toBe(sent.length);
    expect(answers[1]!.body.items).toEqual(answers[0]!.body.items);

    await ctx.deps.recommendations.logs.flush();
    const logged = await ctx.deps.database.rows<{
      recommendation_id: string;
      end_user_id: string | number | null;
      endpoint: string;
      strategy: string | null;
      model_variant: string | null;
      items: string;
    }>(sql`
      select recommendation_id::text as recommendation_id, end_user_id, endpoint, strategy, model_variant, items
      from recommendation_logs where account_id = ${tenant.accountId}`);
    const byId = new Map(logged.map((row) => [row.recommendation_id, row]));
    answers.forEach((answer, n) => {
      const row = byId.get(sent[n]!);
      expect(row).toBeDefined();
      expect(JSON.parse(row!.items)).toEqual(
        answer.body.items.map((i: { externalId: string }) => i.externalId),
      );
    });
    const first = byId.get(sent[0]!)!;
    expect([first.endpoint, first.strategy, first.model_variant]).toEqual([
      "personalized/query",
      "hybrid",
      "standard",
    ]);
    expect(first.end_user_id).not.toBeNull();
    // Similar products and category listings are for nobody in particular.
    expect(byId.get(sent[6]!)!.end_user_id).toBeNull();
    expect(byId.get(sent[8]!)!.endpoint).toBe("category");
  });
});

describe("attribution", () => {
  test("a click sent with a recommendation id is credited to that answer at the product's position", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(12));
    await interact(ctx, tenant, "u1", "p1");
    const first = await personalised(ctx, tenant, "u1");
    const second = await personalised(ctx, tenant, "u1");
    const clicked = first.items[2]!.externalId;
    const res = await send(ctx, tenant, {
      external_user_id: "u1",
      external_product_id: clicked,
      interaction_type: "click",
      recommendation_id: first.recommendationId,
    });
    expect(res.status).toBe(200);
    expect(await attributions(ctx, tenant)).toEqual([
      {
        recommendation_id: first.recommendationId,
        external_id: clicked,
        position: 2,
        interaction_type: "CLICK",
        revenue: 0,
        endpoint: "personalized/query",
        end_user: "u1",
      },
    ]);
    expect(second.recommendationId).not.toBe(first.recommendationId);
  });

  test("without a recommendation id, the latest answer that showed the product to that end user is credited", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(12));
    await interact(ctx, tenant, "u1", "p1");
    await interact(ctx, tenant, "u2", "p1");
    await personalised(ctx, tenant, "u1");
    await ctx.deps.recommendations.logs.flush();
    await Bun.sleep(5);
    const latest = await personalised(ctx, tenant, "u1");
    const other = await personalised(ctx, tenant, "u2");
    const product = latest.items[1]!.externalId;
    expect(other.items.map((i) => i.externalId)).toContain(product);
    await interact(ctx, tenant, "u1", product, "CART");
    const rows = await attributions(ctx, tenant);
    expect(
      rows.map((r) => [r.recommendation_id, r.external_id, r.position, r.interaction_type, r.end_user]),
    ).toEqual([[latest.recommendationId, product, 1, "CART", "u1"]]);
  });

  test("only clicks, carts and purchases of shown products are credited; a click counts once, every purchase counts", async () => {
    const ctx = await sharedTestContext();
    const { tenant, byId } = await createShop(ctx, catalogue(12));
    await interact(ctx, tenant, "u1", "p1");
    const answer = await personalised(ctx, tenant, "u1", 3);
    const shown = answer.items[0]!.externalId;
    const notShown = ["p2", "p3", "p4", "p5", "p6", "p7"].find(
      (p) => !answer.items.some((i) => i.externalId === p),
    )!;
    const rid = { recommendation_id: answer.recommendationId };
    const base = { external_user_id: "u1", ...rid };
    for (const body of [
      { ...base, external_product_id: shown, interaction_type: "VIEW" },
      { ...base, external_product_id: shown, interaction_type: "LIKE" },
      { ...base, external_product_id: shown, interaction_type: "CLICK" },
      { ...base, external_product_id: shown, interaction_type: "CLICK" },
      { ...base, external_product_id: shown, interaction_type: "PURCHASE", value: 30 },
      { ...base, external_product_id: shown, interaction_type: "PURCHASE" },
      { ...base, external_product_id: notShown, interaction_type: "CLICK" },
    ]) {
      expect((await send(ctx, tenant, body)).status).toBe(200);
    }
    const rows = await attributions(ctx, tenant);
    expect(rows.map((r) => [r.interaction_type, r.external_id, r.revenue]).sort()).toEqual(
      [
        ["CLICK", shown, 0],
        ["PURCHASE", shown, 30],
        // No value sent: the product's price.
        ["PURCHASE", shown, byId.get(shown)!.price],
      ].sort(),
    );
  });

  test("another end user's answer is not credited with a click that names it", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(12));
    await interact(ctx, tenant, "u1", "p1");
    await interact(ctx, tenant, "u2", "p1");
    const answer = await personalised(ctx, tenant, "u1");
    const res = await send(ctx, tenant, {
      external_user_id: "u2",
      external_product_id: answer.items[0]!.externalId,
      interaction_type: "CLICK",
      recommendation_id: answer.recommendationId,
    });
    expect(res.status).toBe(200);
    expect(await attributions(ctx, tenant)).toEqual([]);
  });

  test("a click on a similar-products answer, which is for nobody in particular, is credited through its id", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(12));
    const res = await ctx.request("GET", "/api/v1/recommendations/products/external/p2/similar", {
      apiKey: tenant.apiKey,
      query: { limit: 4 },
    });
    const clicked = res.body.items[3].externalId as string;
    await send(ctx, tenant, {
      external_user_id: "visitor",
      external_product_id: clicked,
      interaction_type: "CLICK",
      recommendation_id: res.body.recommendationId,
    });
    const rows = await attributions(ctx, tenant);
    expect(rows.map((r) => [r.recommendation_id, r.external_id, r.position, r.endpoint, r.end_user])).toEqual(
      [[res.body.recommendationId, clicked, 3, "products/similar", "visitor"]],
    );
  });

  test("an interaction that happened more than 24 hours after the answer is not credited to it", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(12));
    await interact(ctx, tenant, "u1", "p1");
    const answer = await personalised(ctx, tenant, "u1");
    await ctx.deps.recommendations.logs.flush();
    // The answer was shown 25 hours before the click.
    await ctx.deps.database.rows(sql`
      update recommendation_logs set created_at = now() - interval '25 hours'
      where account_id = ${tenant.accountId}`);
    await interact(ctx, tenant, "u1", answer.items[0]!.externalId, "CLICK");
    expect(await attributions(ctx, tenant)).toEqual([]);
  });

  test("bulk interactions accept a recommendation id and are credited like single ones", async () => {
    const ctx = await sharedTestContext();
    const { tenant, byId } = await createShop(ctx, catalogue(12));
    await interact(ctx, tenant, "u1", "p1");
    const answer = await personalised(ctx, tenant, "u1");
    const product = answer.items[4]!.externalId;
    const other = answer.items[2]!.externalId;
    const accepted = await ctx.request("POST", "/api/v1/ingestion/batch", {
      apiKey: tenant.apiKey,
      body: {
        interactions: [
          {
            external_user_id: "u1",
            external_product_id: product,
            interaction_type: "PURCHASE",
            value: 12.5,
            recommendation_id: answer.recommendationId,
          },
          // No value sent: credited with the product's price, as a single create is.
          {
            external_user_id: "u1",
            external_product_id: other,
            interaction_type: "PURCHASE",
            recommendation_id: answer.recommendationId,
          },
        ],
      },
    });
    expect(accepted.status).toBe(202);
    const deadline = Date.now() + 30_000;
    let rows: AttributionRow[] = [];
    while (rows.length < 2 && Date.now() < deadline) {
      await Bun.sleep(50);
      rows = await attributions(ctx, tenant);
    }
    expect(rows.map((r) => [r.recommendation_id, r.external_id, r.position, r.revenue]).sort()).toEqual(
      [
        [answer.recommendationId, product, 4, 12.5],
        [answer.recommendationId, other, 2, byId.get(other)!.price],
      ].sort(),
    );
  });

  test("a recommendation id that is not a UUID is a 422 and records nothing", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(3));
    const bad = { external_user_id: "u1", external_product_id: "p1", interaction_type: "CLICK" };
    const res = await send(ctx, tenant, { ...bad, recommendation_id: "not-an-id" });
    expect(res.status).toBe(422);
    expect(res.body.errorCode).toEqual(expect.any(String));
    const rows = await ctx.deps.database.rows(
      sql`select 1 from interactions where account_id = ${tenant.accountId}`,
    );
    expect(rows).toHaveLength(0);
  });
});

describe("erasure and export", () => {
  test("an end user's export lists their attributions and answer ids; erasure deletes them and leaves others'", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(12));
    for (const user of ["goes", "stays"]) await interact(ctx, tenant, user, "p1");
    const answers = new Map<string, Answer>();
    for (const user of ["goes", "stays"]) {
      const answer = await personalised(ctx, tenant, user);
      answers.set(user, answer);
      await interact(ctx, tenant, user, answer.items[0]!.externalId, "CLICK");
    }
    expect(await attributions(ctx, tenant)).toHaveLength(2);

    const exported = await ctx.request("GET", "/api/v1/end-users/external/goes/export", {
      apiKey: tenant.apiKey,
    });
    expect(exported.status).toBe(200);
    const goes = answers.get("goes")!;
    expect(exported.body.attributions).toEqual([
      {
        recommendation_id: goes.recommendationId,
        external_product_id: goes.items[0]!.externalId,
        position: 0,
        interaction_type: "CLICK",
        revenue: 0,
        endpoint: "personalized/query",
        timestamp: expect.any(String),
      },
    ]);
    expect(
      exported.body.recommendations.map((r: { recommendation_id: string }) => r.recommendation_id),
    ).toEqual([goes.recommendationId]);

    const erased = await ctx.request("DELETE", "/api/v1/end-users/external/goes", { apiKey: tenant.apiKey });
    expect(erased.status).toBe(200);
    expect(erased.body.deleted.attributions).toBe(1);
    expect((await attributions(ctx, tenant)).map((r) => r.end_user)).toEqual(["stays"]);
  });

  test("a click still queued when its end user is erased is never credited", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(12));
    await interact(ctx, tenant, "goes", "p1");
    const answer = await personalised(ctx, tenant, "goes");
    await ctx.deps.recommendations.logs.flush();
    await interact(ctx, tenant, "goes", answer.items[0]!.externalId, "CLICK");
    expect(ctx.deps.attributions.pending).toBeGreaterThan(0);
    const erased = await ctx.request("DELETE", "/api/v1/end-users/external/goes", { apiKey: tenant.apiKey });
    expect(erased.status).toBe(200);
    expect(await attributions(ctx, tenant)).toEqual([]);
  });
});
