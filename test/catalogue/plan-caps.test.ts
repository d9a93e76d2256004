import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestContext, type TestContext } from "../helpers/context";
import { trackTempDir } from "../helpers/temp-dirs";
import { registerTenant } from "../helpers/tenant";

// A FREE plan with a tiny catalogue, so the caps are reached with a handful of records.
const PLANS = {
  FREE: {
    name: "FREE",
    priceMonthly: 0,
    currency: "USD",
    limits: {
      requestsPerMinute: 1000,
      monthlyRequests: 100_000,
      maxProducts: 2,
      maxEndUsers: 2,
      trainingsPerDay: 1,
    },
    features: [],
  },
};

let ctx: TestContext;

beforeAll(async () => {
  const path = join(tmpdir(), `plans-caps-${crypto.randomUUID()}.json`);
  writeFileSync(path, JSON.stringify(PLANS));
  trackTempDir(path);
  ctx = await createTestContext({ PLANS_FILE: path });
}, 120_000);
afterAll(() => ctx.close());

const product = (externalId: string) => ({
  externalId,
  name: `Product ${externalId}`,
  price: 10,
  category: "books",
});

async function finished(apiKey: string, jobId: number) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await ctx.request("GET", `/api/v1/ingestion/batch/${jobId}`, { apiKey });
    if (res.body.status !== "processing" || Date.now() > deadline) return res;
    await Bun.sleep(50);
  }
}

describe("catalogue caps of the plan", () => {
  test("POST /products past maxProducts answers 429 PLAN_LIMIT_EXCEEDED and stores nothing", async () => {
    const { apiKey } = await registerTenant(ctx);
    for (const id of ["a", "b"]) {
      expect((await ctx.request("POST", "/api/v1/products/", { apiKey, body: product(id) })).status).toBe(
        201,
      );
    }
    const refused = await ctx.request("POST", "/api/v1/products/", { apiKey, body: product("c") });
    expect(refused.status).toBe(429);
    expect(refused.body.errorCode).toBe("PLAN_LIMIT_EXCEEDED");
    expect(refused.headers.get("retry-after")).toBeTruthy();
    expect((await ctx.request("GET", "/api/v1/products/external/c", { apiKey })).status).toBe(404);
    // Updating an existing product is not growth and stays allowed.
    const { externalId: _, ...fields } = product("a");
    const update = await ctx.request("PUT", "/api/v1/products/external/a", {
      apiKey,
      body: { ...fields, price: 12 },
    });
    expect(update.status).toBe(200);
  });

  test("POST /end-users past maxEndUsers answers 429 PLAN_LIMIT_EXCEEDED", async () => {
    const { apiKey } = await registerTenant(ctx);
    for (const id of ["u1", "u2"]) {
      expect(
        (await ctx.request("POST", "/api/v1/end-users/", { apiKey, body: { externalId: id } })).status,
      ).toBe(200);
    }
    const refused = await ctx.request("POST", "/api/v1/end-users/", { apiKey, body: { externalId: "u3" } });
    expect(refused.status).toBe(429);
    expect(refused.body.errorCode).toBe("PLAN_LIMIT_EXCEEDED");
  });

  test("an interaction naming a new end user past maxEndUsers answers 429 and writes nothing; known users still interact", async () => {
    const { apiKey } = await registerTenant(ctx);
    expect((await ctx.request("POST", "/api/v1/products/", { apiKey, body: product("p") })).status).toBe(201);
    const interact = (user: string) =>
      ctx.request("POST", "/api/v1/interactions/", {
        apiKey,
        body: { external_user_id: user, external_product_id: "p", interaction_type: "view" },
      });
    // Two users created on the way by their first interaction fill the plan's two end users.
    for (const user of ["v1", "v2"]) expect((await interact(user)).status).toBe(200);
    const refused = await interact("v3");
    expect(refused.status).toBe(429);
    expect(refused.body.errorCode).toBe("PLAN_LIMIT_EXCEEDED");
    expect(refused.headers.get("retry-after")).toBeTruthy();
    expect((await ctx.request("GET", "/api/v1/end-users/external/v3", { apiKey })).status).toBe(404);
    const listed = await ctx.request("GET", "/api/v1/interactions/", { apiKey });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).toContain('"v2"');
    expect(JSON.stringify(listed.body)).not.toContain('"v3"');
    expect((await interact("v1")).status).toBe(200);
  });

  test("concurrent creates that meet at the cap admit exactly up to it", async () => {
    const { apiKey } = await registerTenant(ctx);
    const statuses = async (requests: Promise<{ status: number }>[]) =>
      (await Promise.all(requests)).map((r) => r.status).sort();
    const products = await statuses(
      Array.from({ length: 8 }, (_, i) =>
        ctx.request("POST", "/api/v1/products/", { apiKey, body: product(`race-${i}`) }),
      ),
    );
    expect(products).toEqual([201, 201, 429, 429, 429, 429, 429, 429]);
    const stored = await ctx.request("GET", "/api/v1/products/", { apiKey });
    expect(stored.body.total).toBe(2);
    const existing = stored.body.items[0].externalId as string;
    const users = await statuses(
      Array.from({ length: 4 }, (_, i) =>
        ctx.request("POST", "/api/v1/end-users/", { apiKey, body: { externalId: `race-u${i}` } }),
      ).concat(
        Array.from({ length: 4 }, (_, i) =>
          ctx.request("POST", "/api/v1/interactions/", {
            apiKey,
            body: { external_user_id: `race-v${i}`, external_product_id: existing, interaction_type: "view" },
          }),
        ),
      ),
    );
    expect(users.filter((status) => status !== 429)).toHaveLength(2);
    expect(users.every((status) => status === 200 || status === 429)).toBe(true);
    const listed = await ctx.request("GET", "/api/v1/end-users/", { apiKey });
    expect(listed.body.total).toBe(2);
  });

  test("a bulk batch applies updates and the new records that fit, and reports the rest as record errors", async () => {
    const { apiKey } = await registerTenant(ctx);
    expect((await ctx.request("POST", "/api/v1/products/", { apiKey, body: product("old") })).status).toBe(
      201,
    );
    const accepted = await ctx.request("POST", "/api/v1/ingestion/batch", {
      apiKey,
      body: {
        products: [product("old"), product("n1"), product("n2"), product("n3")],
        users: [{ externalId: "x1" }, { externalId: "x2" }, { externalId: "x3" }],
      },
    });
    expect(accepted.status).toBe(202);
    const job = await finished(apiKey, accepted.body.jobId);
    expect(job.status).toBe(207);
    expect(job.body.status).toBe("completed_with_errors");
    const refused = job.body.errors.map(
      (e: { recordType: string; externalId: string }) => `${e.recordType}:${e.externalId}`,
    );
    expect(refused.sort()).toEqual(["product:n2", "product:n3", "user:x3"]);
    for (const e of job.body.errors) expect(e.errorMessage).toContain("plan limit exceeded");
    const listed = await ctx.request("GET", "/api/v1/products/", { apiKey });
    expect(listed.body.items.map((p: { externalId: string }) => p.externalId).sort()).toEqual(["n1", "old"]);
  });

  test("bulk interactions naming new end users past maxEndUsers become record errors; the rest are applied", async () => {
    const { apiKey } = await registerTenant(ctx);
    expect((await ctx.request("POST", "/api/v1/products/", { apiKey, body: product("p") })).status).toBe(201);
    expect(
      (await ctx.request("POST", "/api/v1/end-users/", { apiKey, body: { externalId: "known" } })).status,
    ).toBe(200);
    const view = (user: string) => ({
      external_user_id: user,
      external_product_id: "p",
      interaction_type: "VIEW",
      value: 1,
    });
    const accepted = await ctx.request("POST", "/api/v1/ingestion/batch", {
      apiKey,
      body: { interactions: [view("known"), view("new1"), view("new2"), view("new1"), view("known")] },
    });
    expect(accepted.status).toBe(202);
    const job = await finished(apiKey, accepted.body.jobId);
    expect(job.body.status).toBe("completed_with_errors");
    const refused = job.body.errors.map((e: { externalId: string; errorMessage: string }) => e.externalId);
    // One new user fits (cap 2, one already there): the first named; the other's interaction is refused.
    expect(refused).toEqual(["new2:p"]);
    expect(job.body.errors[0].errorMessage).toContain("plan limit exceeded");
    const users = await ctx.request("GET", "/api/v1/end-users/", { apiKey });
    expect(users.body.total).toBe(2);
    const stored = await ctx.request("GET", "/api/v1/interactions/", { apiKey });
    expect(stored.body.total).toBe(4);
  });

  test("records applied by single creates and bulk jobs are counted in the account's usage", async () => {
    const { apiKey } = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/products/", { apiKey, body: product("p") });
    const accepted = await ctx.request("POST", "/api/v1/ingestion/batch", {
      apiKey,
      body: {
        interactions: [
          { external_user_id: "u", external_product_id: "p", interaction_type: "VIEW", value: 1 },
        ],
      },
    });
    await finished(apiKey, accepted.body.jobId);
    const usage = await ctx.request("GET", "/api/v1/accounts/usage", { apiKey });
    expect(usage.status).toBe(200);
    expect(usage.body.ingestedRecords).toBe(2);
  });
});
