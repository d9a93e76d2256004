import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { sharedTestContext, type TestContext } from "../helpers/context";
import { expectAuthRequired, expectOtherTenantNotFound, expectPublishableRefused } from "../helpers/security";
import { registerTenant } from "../helpers/tenant";

/** Inserts job rows directly (no worker picks them: they are not "queued"), newest last. */
async function insertJobs(ctx: TestContext, accountId: number, statuses: string[]): Promise<number[]> {
  const ids: number[] = [];
  for (const status of statuses) {
    const [row] = await ctx.deps.database.rows<{ id: number }>(sql`
      insert into training_jobs (account_id, task_id, status, stage, progress, error, finished_at)
      values (${accountId}, ${crypto.randomUUID()}, ${status}, ${status === "failed" ? "failed" : "done"},
              ${status === "completed" ? 100 : 0}, ${status === "failed" ? "boom" : null}, now())
      returning id`);
    ids.push(Number(row!.id));
  }
  return ids;
}

describe("GET /api/v1/pipeline/jobs/{job_id}/status", () => {
  test("returns the job's state with every contract field", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const [id] = await insertJobs(ctx, tenant.accountId, ["failed"]);
    const res = await ctx.request("GET", `/api/v1/pipeline/jobs/${id}/status`, { apiKey: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      jobId: id,
      taskId: expect.any(String),
      status: "failed",
      progress: 0,
      stage: "failed",
      createdAt: expect.any(String),
      startedAt: null,
      finishedAt: expect.any(String),
      error: "boom",
      modelId: null,
      metrics: null,
    });
  }, 120_000);

  test("an unknown job id is 404 NOT_FOUND; a non-integer id is 422", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const missing = await ctx.request("GET", "/api/v1/pipeline/jobs/999999999/status", {
      apiKey: tenant.apiKey,
    });
    expect(missing.status).toBe(404);
    expect(missing.body.errorCode).toBe("NOT_FOUND");
    const bad = await ctx.request("GET", "/api/v1/pipeline/jobs/abc/status", { apiKey: tenant.apiKey });
    expect(bad.status).toBe(422);
  });

  test("security: 401 without credentials, 403 for a publishable key, 404 for another tenant's job", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const [id] = await insertJobs(ctx, tenant.accountId, ["completed"]);
    const path = `/api/v1/pipeline/jobs/${id}/status`;
    await expectAuthRequired(ctx, "GET", path);
    await expectPublishableRefused(ctx, "GET", path);
    await expectOtherTenantNotFound(ctx, "GET", path);
  });
});

describe("GET /api/v1/pipeline/jobs", () => {
  test("lists the account's jobs newest first, honours limit and the status filter", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const ids = await insertJobs(ctx, tenant.accountId, ["completed", "failed", "completed"]);
    const all = await ctx.request("GET", "/api/v1/pipeline/jobs", { apiKey: tenant.apiKey });
    expect(all.status).toBe(200);
    expect(all.body.map((j: { jobId: number }) => j.jobId)).toEqual([...ids].reverse());
    const limited = await ctx.request("GET", "/api/v1/pipeline/jobs", {
      apiKey: tenant.apiKey,
      query: { limit: 1 },
    });
    expect(limited.body.map((j: { jobId: number }) => j.jobId)).toEqual([ids[2]]);
    const failed = await ctx.request("GET", "/api/v1/pipeline/jobs", {
      apiKey: tenant.apiKey,
      query: { status: "failed" },
    });
    expect(failed.body.map((j: { jobId: number }) => j.jobId)).toEqual([ids[1]]);
    const unknownState = await ctx.request("GET", "/api/v1/pipeline/jobs", {
      apiKey: tenant.apiKey,
      query: { status: "exploded" },
    });
    expect(unknownState.status).toBe(200);
    expect(unknownState.body).toEqual([]);
  });

  test.each([
    ["limit 0", { limit: 0 }],
    ["limit 101", { limit: 101 }],
  ])("%s is a 422 at [query, limit]", async (_label, query) => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("GET", "/api/v1/pipeline/jobs", { apiKey: tenant.apiKey, query });
    expect(res.status).toBe(422);
    expect(res.body.errorCode).toBe("VALIDATION_ERROR");
    expect(res.body.detail[0].loc).toEqual(["query", "limit"]);
  });

  test("an unknown query parameter is ignored", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("GET", "/api/v1/pipeline/jobs", {
      apiKey: tenant.apiKey,
      query: { page: 2 },
    });
    expect(res.status).toBe(200);
  });

  test("security: 401 without credentials, 403 for a publishable key, another tenant's jobs are not listed", async () => {
    const ctx = await sharedTestContext();
    await expectAuthRequired(ctx, "GET", "/api/v1/pipeline/jobs");
    await expectPublishableRefused(ctx, "GET", "/api/v1/pipeline/jobs");
    const owner = await registerTenant(ctx);
    await insertJobs(ctx, owner.accountId, ["completed"]);
    const stranger = await registerTenant(ctx);
    const res = await ctx.request("GET", "/api/v1/pipeline/jobs", { apiKey: stranger.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });
});
