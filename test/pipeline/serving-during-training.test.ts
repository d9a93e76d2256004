/**
 * Training must never stall the thread that answers requests: the fit runs in a worker, the artifact is
 * written by that worker (a file on the embedded store), and the new snapshot is decoded off the thread.
 * No timing bar here (the bench measures latency): a request stream runs beside the job and must keep being
 * answered through every stage of it.
 */
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createTestContext, type TestContext } from "../helpers/context";
import { registerTenant } from "../helpers/tenant";
import { FAST_TRAINING, generateTenant, type JobStatusBody, trainAndWait } from "./fixtures";

/** A plan that admits the stream below: what is tested is the service's thread, not the plan's rate limit. */
async function unlimited(ctx: TestContext, accountId: number): Promise<void> {
  await ctx.deps.database.db.execute(
    sql`update accounts set plan = 'ENTERPRISE', subscription_status = 'active' where id = ${accountId}`,
  );
  await ctx.deps.identity.accounts.changed(accountId);
}

describe("serving while a model trains", () => {
  test("a concurrent request stream keeps being answered while a job trains, stores and publishes", async () => {
    const ctx = await createTestContext();
    try {
      // Another tenant already served from its snapshot: its answers must keep coming during the run.
      const other = await registerTenant(ctx);
      await unlimited(ctx, other.accountId);
      await generateTenant(ctx, other.accountId, { seed: 3 });
      expect((await trainAndWait(ctx, other.apiKey)).status).toBe("completed");
      const tenant = await registerTenant(ctx);
      await unlimited(ctx, tenant.accountId);
      await generateTenant(ctx, tenant.accountId, {
        categories: 8,
        productsPerCategory: 60,
        users: 300,
        interactionsPerUser: 20,
      });

      // Served before it has a model (the fallback answers): its publication then swaps a snapshot in the
      // background instead of waiting for a first request.
      const before = await ctx.request("POST", "/api/v1/recommendations/personalized/query", {
        apiKey: tenant.apiKey,
        body: { external_user_id: "u-1", limit: 5 },
      });
      expect(before.status).toBe(200);

      const accepted = await ctx.request("POST", "/api/v1/pipeline/train", {
        apiKey: tenant.apiKey,
        body: { ...FAST_TRAINING, iterations: 10 },
      });
      expect(accepted.status).toBe(202);
      let job: JobStatusBody | undefined;
      const answeredIn = new Map<string, number>();
      const statuses: number[] = [];
      let u = 0;
      while (job?.status !== "completed" && job?.status !== "failed") {
        const res = await ctx.request<JobStatusBody>(
          "GET",
          `/api/v1/pipeline/jobs/${accepted.body.jobId}/status`,
          {
            apiKey: tenant.apiKey,
          },
        );
        job = res.body;
        const [health, served] = await Promise.all([
          ctx.request("GET", "/health"),
          ctx.request("POST", "/api/v1/recommendations/personalized/query", {
            apiKey: other.apiKey,
            body: { external_user_id: `u-${u++ % 40}`, limit: 5 },
          }),
        ]);
        statuses.push(health.status, served.status);
        if (job.status === "running") answeredIn.set(job.stage, (answeredIn.get(job.stage) ?? 0) + 1);
        await Bun.sleep(10);
      }
      expect(job.error).toBeNull();
      expect(job.status).toBe("completed");
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      // The fit itself (the worker's stages, the longest part) saw the stream answered again and again, not
      // once after the fact.
      let duringFit = 0;
      for (const [stage, n] of answeredIn) if (stage !== "loading" && stage !== "storing") duringFit += n;
      expect(duringFit).toBeGreaterThan(3);

      // The publication swaps the new snapshot in while both tenants keep being answered.
      const swapStatuses: number[] = [];
      while (ctx.deps.snapshots.peekSnapshot(tenant.accountId)?.modelId !== job.modelId) {
        const answers = await Promise.all([
          ctx.request("GET", "/health"),
          ctx.request("POST", "/api/v1/recommendations/personalized/query", {
            apiKey: other.apiKey,
            body: { external_user_id: `u-${u++ % 40}`, limit: 5 },
          }),
          ctx.request("POST", "/api/v1/recommendations/personalized/query", {
            apiKey: tenant.apiKey,
            body: { external_user_id: `u-${u % 300}`, limit: 5 },
          }),
        ]);
        swapStatuses.push(...answers.map((a) => a.status));
        await Bun.sleep(10);
      }
      expect(swapStatuses.filter((s) => s !== 200)).toEqual([]);

      // The new model's snapshot is loaded and serves the trained tenant.
      const snapshot = await ctx.deps.snapshots.getSnapshot(tenant.accountId);
      expect(snapshot?.modelId).toBe(job.modelId!);
      const answer = await ctx.request<{ items: unknown[] }>(
        "POST",
        "/api/v1/recommendations/personalized/query",
        {
          apiKey: tenant.apiKey,
          body: { external_user_id: "u-1", limit: 5 },
        },
      );
      expect(answer.status).toBe(200);
      expect(answer.body.items.length).toBe(5);
    } finally {
      await ctx.close();
    }
  }, 300_000);
});
