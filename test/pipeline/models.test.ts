import { describe, expect, test } from "bun:test";
import { models, trainingJobs } from "../../src/db/schema";
import { sharedTestContext, type TestContext } from "../helpers/context";
import { expectAuthRequired, expectPublishableRefused } from "../helpers/security";
import { registerTenant } from "../helpers/tenant";

/** Model rows without artifacts: enough for the metadata routes, which never read the bytes. */
async function insertModels(ctx: TestContext, accountId: number, published: boolean[]): Promise<number[]> {
  const ids: number[] = [];
  for (const [i, isPublished] of published.entries()) {
    const [row] = await ctx.deps.database.db
      .insert(models)
      .values({
        accountId,
        version: i + 1,
        algorithm: "ease",
        params: { lambda: 200 },
        trainingSeconds: 1.5,
        counts: { users: 10, items: 20, interactions: 300 },
        metrics: {
          ndcgAt10: 0.3,
          recallAt20: 0.4,
          coverageAt10: 0.5,
          popularityNdcgAt10: 0.1,
          evaluatedUsers: 10,
        },
        isPublished,
      })
      .returning({ id: models.id });
    ids.push(row!.id);
  }
  return ids;
}

/** Training jobs that produced the given models, finished in the given order. */
async function insertTrainings(
  ctx: TestContext,
  accountId: number,
  runs: { modelId: number | null; status: string }[],
): Promise<void> {
  for (const [i, run] of runs.entries()) {
    await ctx.deps.database.db.insert(trainingJobs).values({
      accountId,
      taskId: crypto.randomUUID(),
      status: run.status,
      modelId: run.modelId,
      finishedAt: new Date(Date.now() - (runs.length - i) * 60_000),
    });
  }
}

describe("GET /api/v1/pipeline/status", () => {
  test("returns the latest completed training's model with published: false when it was kept back", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const [serving, keptBack, fromFailedRun] = await insertModels(ctx, tenant.accountId, [
      true,
      false,
      false,
    ]);
    await insertTrainings(ctx, tenant.accountId, [
      { modelId: serving!, status: "completed" },
      { modelId: keptBack!, status: "completed" },
      // A run that failed after writing its model is not a completed training.
      { modelId: fromFailedRun!, status: "failed" },
    ]);
    const res = await ctx.request("GET", "/api/v1/pipeline/status", { apiKey: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      modelId: keptBack,
      version: 2,
      createdAt: expect.any(String),
      algorithm: "ease",
      params: { lambda: 200 },
      trainingSeconds: 1.5,
      counts: { users: 10, items: 20, interactions: 300 },
      metrics: {
        ndcgAt10: 0.3,
        recallAt20: 0.4,
        coverageAt10: 0.5,
        popularityNdcgAt10: 0.1,
        evaluatedUsers: 10,
        note: null,
      },
      isPublished: false,
      published: false,
    });

    // The next completed training publishes: status follows it.
    const [next] = await insertModels(ctx, tenant.accountId, [true]);
    await ctx.deps.database.db.insert(trainingJobs).values({
      accountId: tenant.accountId,
      taskId: crypto.randomUUID(),
      status: "completed",
      modelId: next!,
      finishedAt: new Date(),
    });
    const now = await ctx.request("GET", "/api/v1/pipeline/status", { apiKey: tenant.apiKey });
    expect(now.body).toMatchObject({ modelId: next, published: true });
  }, 120_000);

  test("before any model: 404 NO_MODEL", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("GET", "/api/v1/pipeline/status", { token: tenant.token });
    expect(res.status).toBe(404);
    expect(res.body.errorCode).toBe("NO_MODEL");
  });

  test("security: 401 without credentials, 403 for a publishable key, another tenant's model is not shown", async () => {
    const ctx = await sharedTestContext();
    await expectAuthRequired(ctx, "GET", "/api/v1/pipeline/status");
    await expectPublishableRefused(ctx, "GET", "/api/v1/pipeline/status");
    const owner = await registerTenant(ctx);
    const [model] = await insertModels(ctx, owner.accountId, [true]);
    await insertTrainings(ctx, owner.accountId, [{ modelId: model!, status: "completed" }]);
    const stranger = await registerTenant(ctx);
    const res = await ctx.request("GET", "/api/v1/pipeline/status", { apiKey: stranger.apiKey });
    expect(res.status).toBe(404);
    expect(res.body.errorCode).toBe("NO_MODEL");
  });
});

describe("GET /api/v1/pipeline/models", () => {
  test("lists models newest first with isPublished, default limit 10, limit/offset paging", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const ids = await insertModels(ctx, tenant.accountId, [false, true, ...Array<boolean>(10).fill(false)]);
    const page = await ctx.request("GET", "/api/v1/pipeline/models", { apiKey: tenant.apiKey });
    expect(page.status).toBe(200);
    expect(page.body).toHaveLength(10);
    expect(page.body[0].modelId).toBe(ids[ids.length - 1]);
    const tail = await ctx.request("GET", "/api/v1/pipeline/models", {
      apiKey: tenant.apiKey,
      query: { limit: 5, offset: 10 },
    });
    expect(
      tail.body.map((m: { modelId: number; isPublished: boolean }) => [m.modelId, m.isPublished]),
    ).toEqual([
      [ids[1], true],
      [ids[0], false],
    ]);
  });

  test.each([
    ["limit 0", { limit: 0 }],
    ["negative offset", { offset: -1 }],
    ["limit not a number", { limit: "ten" }],
  ])("%s is a 422", async (_label, query) => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("GET", "/api/v1/pipeline/models", { apiKey: tenant.apiKey, query });
    expect(res.status).toBe(422);
  });

  test("security: 401 without credentials, 403 for a publishable key, another tenant's models are not listed", async () => {
    const ctx = await sharedTestContext();
    await expectAuthRequired(ctx, "GET", "/api/v1/pipeline/models");
    await expectPublishableRefused(ctx, "GET", "/api/v1/pipeline/models");
    const owner = await registerTenant(ctx);
    await insertModels(ctx, owner.accountId, [true]);
    const stranger = await registerTenant(ctx);
    const res = await ctx.request("GET", "/api/v1/pipeline/models", { apiKey: stranger.apiKey });
    expect(res.body).toEqual([]);
  });
});

describe("OpenAPI", () => {
  test("every pipeline route is documented with a summary, description and response schema", async () => {
    const ctx = await sharedTestContext();
    const res = await ctx.request("GET", "/api/v1/public-openapi.json");
    expect(res.status).toBe(200);
    const paths = res.body.paths as Record<string, Record<string, Record<string, unknown>>>;
    const routes: [string, string][] = [
      ["/api/v1/pipeline/train", "post"],
      ["/api/v1/pipeline/status", "get"],
      ["/api/v1/pipeline/jobs/{job_id}/status", "get"],
      ["/api/v1/pipeline/models", "get"],
      ["/api/v1/pipeline/jobs", "get"],
    ];
    for (const [path, method] of routes) {
      const operation = paths[path]?.[method];
      expect(operation?.summary).toEqual(expect.any(String));
      expect(operation?.description).toEqual(expect.any(String));
      expect(operation?.tags).toEqual(["Training pipeline"]);
      expect(Object.keys((operation?.responses as object) ?? {}).length).toBeGreaterThan(0);
    }
    expect(JSON.stringify(paths["/api/v1/pipeline/train"]?.post?.requestBody)).toContain("halfLifeDays");
  }, 120_000);
});
