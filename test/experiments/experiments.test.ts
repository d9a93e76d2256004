import { beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { assignArm } from "../../src/modules/experiments/assignment";
import { RunningExperiments } from "../../src/modules/experiments/running";
import { sharedTestContext, type TestContext } from "../helpers/context";
import { expectAuthRequired, expectOtherTenantNotFound, expectPublishableRefused } from "../helpers/security";
import type { Tenant } from "../helpers/tenant";
import { catalogue, createShop, interact } from "../recommendations/fixtures";

beforeAll(() => sharedTestContext().then(() => undefined), 120_000);

const BASE = "/api/v1/experiments";
const QUERY = "/api/v1/recommendations/personalized/query";

const twoArms = (overrides: Record<string, unknown> = { strategy: "popularity" }) => ({
  name: "Popularity against hybrid",
  endpoint: "personalized/query",
  variants: [
    { name: "A", traffic: 0.5 },
    { name: "B", traffic: 0.5, overrides },
  ],
});

async function start(ctx: TestContext, tenant: Tenant, body: unknown = twoArms()) {
  const res = await ctx.request("POST", `${BASE}/`, { apiKey: tenant.apiKey, body });
  expect(res.status).toBe(201);
  return res.body as { id: number; variants: { name: string; traffic: number }[] };
}

describe("experiments", () => {
  test("create, list, get and stop; one running experiment per endpoint", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(5));
    const created = await start(ctx, tenant);
    expect(created).toMatchObject({
      name: "Popularity against hybrid",
      endpoint: "personalized/query",
      status: "running",
      minimumEffect: 0.1,
      stoppedAt: null,
      variants: twoArms().variants,
    });
    const second = await ctx.request("POST", `${BASE}/`, { apiKey: tenant.apiKey, body: twoArms() });
    expect(second.status).toBe(409);
    expect(second.body.errorCode).toBe("CONFLICT");

    const list = await ctx.request("GET", `${BASE}/`, { token: tenant.token });
    expect(list.status).toBe(200);
    expect(list.body.items.map((e: { id: number }) => e.id)).toEqual([created.id]);
    const got = await ctx.request("GET", `${BASE}/${created.id}`, { apiKey: tenant.apiKey });
    expect(got.body).toEqual(created);

    const stopped = await ctx.request("POST", `${BASE}/${created.id}/stop`, { apiKey: tenant.apiKey });
    expect(stopped.status).toBe(200);
    expect(stopped.body.status).toBe("stopped");
    expect(stopped.body.stoppedAt).toEqual(expect.any(String));
    const again = await ctx.request("POST", `${BASE}/${created.id}/stop`, { apiKey: tenant.apiKey });
    expect(again.body).toEqual(stopped.body);
    // Once stopped, the endpoint is free for the next experiment.
    await start(ctx, tenant);
  });

  test("bad arms (shares not summing to 1, duplicate names, one arm, unknown endpoint, override or version) are a 422", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(2));
    const arms = twoArms().variants;
    for (const body of [
      { ...twoArms(), variants: [arms[0], { ...arms[1], traffic: 0.6 }] },
      { ...twoArms(), variants: [arms[0], { ...arms[1], name: "A" }] },
      { ...twoArms(), variants: [{ name: "A", traffic: 1 }] },
      { ...twoArms(), endpoint: "search" },
      { ...twoArms(), endpoint: "category" },
      { ...twoArms({ strategy: "random" }) },
      { ...twoArms({ model_version: 0 }) },
      { ...twoArms({ model_version: 3 }) },
    ]) {
      const res = await ctx.request("POST", `${BASE}/`, { apiKey: tenant.apiKey, body });
      expect(res.status).toBe(422);
      expect(res.body.errorCode).toBe("VALIDATION_ERROR");
    }
    const list = await ctx.request("GET", `${BASE}/`, { apiKey: tenant.apiKey });
    expect(list.body.items).toEqual([]);
    const missing = await ctx.request("GET", `${BASE}/2147483647`, { apiKey: tenant.apiKey });
    expect(missing.status).toBe(404);
  });

  test("need a secret key or JWT; another tenant's experiment is 404 to get, stop and read", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(2));
    const created = await start(ctx, tenant);
    for (const [method, path] of [
      ["GET", `${BASE}/`],
      ["POST", `${BASE}/`],
      ["GET", `${BASE}/${created.id}`],
      ["POST", `${BASE}/${created.id}/stop`],
      ["GET", `${BASE}/${created.id}/results`],
    ] as const) {
      const body = method === "POST" && path === `${BASE}/` ? twoArms() : undefined;
      await expectAuthRequired(ctx, method, path, { body });
      await expectPublishableRefused(ctx, method, path, { body });
    }
    for (const [method, path] of [
      ["GET", `${BASE}/${created.id}`],
      ["POST", `${BASE}/${created.id}/stop`],
      ["GET", `${BASE}/${created.id}/results`],
    ] as const) {
      await expectOtherTenantNotFound(ctx, method, path);
    }
    const still = await ctx.request("GET", `${BASE}/${created.id}`, { apiKey: tenant.apiKey });
    expect(still.body.status).toBe("running");
  }, 60_000);
});

describe("assignment", () => {
  test("each end user keeps the arm the hash gives, in this process and in a fresh one; the arm's overrides apply", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(20));
    const created = await start(ctx, tenant);
    // As another process would: its own cache of the running experiments, loaded from the database.
    const elsewhere = new RunningExperiments(ctx.deps.database, ctx.deps.logger);
    await elsewhere.refresh();
    const users = Array.from({ length: 12 }, (_, n) => `user-${n}`);
    for (const user of users) {
      const expected = assignArm(created.id, user, created.variants).name;
      expect(elsewhere.assign(tenant.accountId, "personalized/query", user)?.arm).toBe(expected);
      for (let n = 0; n < 2; n++) {
        const res = await ctx.request("POST", QUERY, {
          apiKey: tenant.apiKey,
          body: { external_user_id: user, limit: 5 },
        });
        expect(res.status).toBe(200);
        // No model trained yet: nothing ranked with a model version.
        const served = { id: created.id, variant: expected, modelVersion: null };
        expect(res.body.experiment).toEqual(served);
        expect(JSON.parse(res.text).experiment).toEqual(served);
      }
    }
    await ctx.deps.recommendations.logs.flush();
    const logged = await ctx.deps.database.rows<{
      experiment_arm: string;
      strategy: string;
      n: number | string;
    }>(sql`
      select experiment_arm, strategy, count(*) as n from recommendation_logs
      where account_id = ${tenant.accountId} and experiment_id = ${created.id}
      group by 1, 2 order by 1`);
    // Arm B's override is logged as the strategy that served it.
    for (const row of logged) expect(row.strategy).toBe(row.experiment_arm === "B" ? "popularity" : "hybrid");
    expect(logged.reduce((sum, r) => sum + Number(r.n), 0)).toBe(24);
  });

  test("a request naming its own model variant is served as asked, outside the experiment, and logged so", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(20));
    await start(ctx, tenant, twoArms({ model_variant: "diverse" }));
    await interact(ctx, tenant, "u1", "p1");
    const res = await ctx.request("POST", QUERY, {
      apiKey: tenant.apiKey,
      body: { external_user_id: "u1", model_variant: "standard" },
    });
    expect(res.status).toBe(200);
    expect(res.body.experiment).toBeUndefined();
    await ctx.deps.recommendations.logs.flush();
    const [row] = await ctx.deps.database.rows<{ model_variant: string; experiment_id: number | null }>(sql`
      select model_variant, experiment_id from recommendation_logs
      where account_id = ${tenant.accountId} and recommendation_id = ${res.body.recommendationId}::uuid`);
    expect(row).toEqual({ model_variant: "standard", experiment_id: null });
  });

  test("traffic shares hold over many end users", () => {
    const arms = [
      { name: "A", traffic: 0.8 },
      { name: "B", traffic: 0.2 },
    ];
    let b = 0;
    for (let n = 0; n < 20_000; n++) if (assignArm(7, `visitor-${n}`, arms).name === "B") b++;
    expect(b / 20_000).toBeGreaterThan(0.19);
    expect(b / 20_000).toBeLessThan(0.21);
    // Another experiment splits the same users independently.
    let both = 0;
    for (let n = 0; n < 20_000; n++) {
      if (assignArm(7, `visitor-${n}`, arms).name === "B" && assignArm(8, `visitor-${n}`, arms).name === "B")
        both++;
    }
    expect(both / 20_000).toBeGreaterThan(0.03);
    expect(both / 20_000).toBeLessThan(0.05);
  });
});
