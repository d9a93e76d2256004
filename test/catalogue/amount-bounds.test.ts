/**
 * Prices, interaction values and price ranges are at most 10^12. A larger value, which a publishable key can
 * send, used to be stored and then overflow the account's mean ratings and revenue sums: every recommendation
 * route answered 422 for the whole account, category listings by rating and the online metrics 500.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { MAX_AMOUNT } from "../../src/http/schema-types";
import { createLogger } from "../../src/shared/logger";
import { OutboxMailer } from "../../src/shared/mailer/outbox";
import { sharedTestContext, type TestContext } from "../helpers/context";
import { removeTempDir, trackTempDir } from "../helpers/temp-dirs";
import { ALLOWED_ORIGIN, createKey, registerTenant, type Tenant } from "../helpers/tenant";

beforeAll(() => sharedTestContext().then(() => undefined), 120_000);

async function shopWithProducts(ctx: TestContext): Promise<Tenant> {
  const tenant = await registerTenant(ctx);
  for (const externalId of ["p1", "p2", "p3"]) {
    const res = await ctx.request("POST", "/api/v1/products/", {
      apiKey: tenant.apiKey,
      body: { externalId, name: externalId, price: 10, category: "c" },
    });
    expect(res.status).toBe(201);
  }
  return tenant;
}

const interaction = (user: string, product: string, type: string, value?: number) => ({
  external_user_id: user,
  external_product_id: product,
  interaction_type: type,
  ...(value !== undefined && { value }),
});

/** Every route that reads the account's mean ratings and popularity answers, and answers finite numbers. */
async function expectServing(ctx: TestContext, tenant: Tenant): Promise<void> {
  const key = { apiKey: tenant.apiKey };
  const answers = [
    await ctx.request("POST", "/api/v1/recommendations/personalized/query", {
      ...key,
      body: { external_user_id: "someone", limit: 5 },
    }),
    await ctx.request("POST", "/api/v1/recommendations/ecommerce/homepage", {
      ...key,
      body: { external_user_id: "someone" },
    }),
    await ctx.request("GET", "/api/v1/recommendations/category/c", { ...key, query: { sort_by: "rating" } }),
    await ctx.request("GET", "/api/v1/recommendations/category/c", {
      ...key,
      query: { sort_by: "price_desc" },
    }),
  ];
  for (const answer of answers) {
    expect(answer.status).toBe(200);
    for (const item of (answer.body as { items: { score: number }[] }).items)
      expect(Number.isFinite(item.score)).toBe(true);
  }
}

describe("amounts are at most 10^12", () => {
  test("a larger interaction value is 422 naming it, from a publishable key too, and nothing is stored", async () => {
    const ctx = await sharedTestContext();
    const tenant = await shopWithProducts(ctx);
    const browser = await createKey(ctx, tenant.token, {
      kind: "publishable",
      scopes: ["interactions:write"],
    });
    for (const [apiKey, headers] of [
      [tenant.apiKey, {}],
      [browser.apiKey, { origin: ALLOWED_ORIGIN }],
    ] as const) {
      const res = await ctx.request("POST", "/api/v1/interactions/", {
        apiKey,
        headers,
        body: interaction("attacker", "p1", "RATING", 1e160),
      });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ errorCode: "VALIDATION_ERROR", requestId: expect.any(String) });
      expect((res.body as { detail: { loc: unknown[] }[] }).detail[0]!.loc).toEqual(["body", "value"]);
    }
    const stored = await ctx.request("GET", "/api/v1/end-users/external/attacker", { apiKey: tenant.apiKey });
    expect(stored.status).toBe(404);
    await expectServing(ctx, tenant);
  });

  test("the largest values are taken, and ratings, prices and revenue of that size keep every route answering", async () => {
    const ctx = await sharedTestContext();
    const tenant = await shopWithProducts(ctx);
    const big = await ctx.request("POST", "/api/v1/products/", {
      apiKey: tenant.apiKey,
      body: { externalId: "dear", name: "dear", price: MAX_AMOUNT, category: "c" },
    });
    expect(big.status).toBe(201);
    const home = await ctx.request("POST", "/api/v1/recommendations/ecommerce/homepage", {
      apiKey: tenant.apiKey,
      body: { external_user_id: "buyer" },
    });
    expect(home.status).toBe(200);
    const recommendationId = (home.body as { recommendationId: string }).recommendationId;
    for (const body of [
      interaction("rater1", "p1", "RATING", MAX_AMOUNT),
      interaction("rater2", "p1", "RATING", MAX_AMOUNT),
      interaction("rater3", "p1", "RATING", 1),
      { ...interaction("buyer", "dear", "PURCHASE", MAX_AMOUNT), recommendation_id: recommendationId },
      { ...interaction("buyer", "dear", "PURCHASE"), recommendation_id: recommendationId },
    ]) {
      const res = await ctx.request("POST", "/api/v1/interactions/", { apiKey: tenant.apiKey, body });
      expect(res.status).toBe(200);
    }
    await expectServing(ctx, tenant);
    await ctx.deps.recommendations.logs.flush();
    await ctx.deps.attributions.flush();
    const metrics = await ctx.request("GET", "/api/v1/analytics/recommendations", { apiKey: tenant.apiKey });
    expect(metrics.status).toBe(200);
    expect(JSON.stringify(metrics.body)).not.toContain("null");
  });

  test("a larger price or price range is 422 on create, replace, patch and as a bulk record error", async () => {
    const ctx = await sharedTestContext();
    const tenant = await shopWithProducts(ctx);
    const key = { apiKey: tenant.apiKey };
    const tooDear = { name: "x", price: MAX_AMOUNT * 10, category: "c" };
    const refusals = [
      await ctx.request("POST", "/api/v1/products/", { ...key, body: { externalId: "x", ...tooDear } }),
      await ctx.request("PUT", "/api/v1/products/external/p1", { ...key, body: tooDear }),
      await ctx.request("PATCH", "/api/v1/products/external/p1", { ...key, body: { price: 1e300 } }),
      await ctx.request("POST", "/api/v1/end-users/", {
        ...key,
        body: { externalId: "u", priceRangeMax: 1e300 },
      }),
    ];
    for (const res of refusals) expect(res.status).toBe(422);
    const bulk = await ctx.request("POST", "/api/v1/ingestion/batch", {
      ...key,
      body: {
        products: [
          { externalId: "ok", name: "ok", price: 5, category: "c" },
          { externalId: "bad", ...tooDear },
        ],
        interactions: [interaction("u1", "p2", "VIEW"), interaction("u2", "p2", "PURCHASE", 1e200)],
      },
    });
    expect(bulk.status).toBe(202);
    const path = `/api/v1/ingestion/batch/${(bulk.body as { jobId: number }).jobId}`;
    let job = await ctx.request("GET", path, key);
    for (let i = 0; i < 600 && (job.body as { status: string }).status === "processing"; i++) {
      await Bun.sleep(50);
      job = await ctx.request("GET", path, key);
    }
    expect(job.status).toBe(207);
    const errors = (job.body as { errors: { recordType: string; externalId: string }[] }).errors;
    expect(errors.map((e) => [e.recordType, e.externalId]).sort()).toEqual([
      ["interaction", "u2:p2"],
      ["product", "bad"],
    ]);
    expect((await ctx.request("GET", "/api/v1/products/external/ok", key)).status).toBe(200);
    expect((await ctx.request("GET", "/api/v1/products/external/bad", key)).status).toBe(404);
    expect((await ctx.request("GET", "/api/v1/end-users/external/u1", key)).status).toBe(200);
    expect((await ctx.request("GET", "/api/v1/end-users/external/u2", key)).status).toBe(404);
    const p1 = await ctx.request("GET", "/api/v1/products/external/p1", key);
    expect((p1.body as { price: number }).price).toBe(10);
  });

  test("the migration brings amounts stored before the bound within it", async () => {
    const ctx = await sharedTestContext();
    const tenant = await shopWithProducts(ctx);
    const db = ctx.deps.database;
    const ok = await ctx.request("POST", "/api/v1/interactions/", {
      apiKey: tenant.apiKey,
      body: interaction("rater", "p1", "RATING", 4),
    });
    expect(ok.status).toBe(200);
    // What an earlier version stored.
    await db.rows(sql`update interactions set value = 1e300 where account_id = ${tenant.accountId}`);
    await db.rows(sql`update products set price = 1e305 where account_id = ${tenant.accountId}`);
    const migration = readFileSync(join(import.meta.dir, "../../drizzle/0014_clamp_amounts.sql"), "utf8");
    for (const statement of migration.split("--> statement-breakpoint")) await db.rows(sql.raw(statement));
    const [row] = await db.rows<{ value: number; price: number }>(sql`
      select max(i.value) as value, max(p.price) as price from interactions i, products p
      where i.account_id = ${tenant.accountId} and p.account_id = ${tenant.accountId}`);
    expect([Number(row!.value), Number(row!.price)]).toEqual([MAX_AMOUNT, MAX_AMOUNT]);
  });
});

test("the outbox logs a mail's link but not its addressee", async () => {
  const lines: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), "outbox-"));
  trackTempDir(dir);
  const mailer = new OutboxMailer(
    dir,
    createLogger("info", (line) => lines.push(line)),
  );
  await mailer.send({
    to: "owner@shop.example.com",
    subject: "Verify your e-mail",
    text: "Open https://x.example/verify?token=t",
    actionLink: "https://x.example/verify?token=t",
  });
  expect(lines.join("\n")).toContain("https://x.example/verify?token=t");
  expect(lines.join("\n")).not.toContain("owner@shop.example.com");
  removeTempDir(dir);
});
