import { describe, expect, test } from "bun:test";
import { sharedTestContext } from "../helpers/context";
import { expectAuthRequired, expectPublishableRefused } from "../helpers/security";
import { registerTenant } from "../helpers/tenant";
import { FAST_TRAINING, generateTenant, trainAndWait, waitForJob } from "./fixtures";

describe("POST /api/v1/pipeline/train", () => {
  test("end to end: 202 queued → job completes with metrics → model listed and published → snapshot loads", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const data = await generateTenant(ctx, tenant.accountId);

    const accepted = await ctx.request("POST", "/api/v1/pipeline/train", {
      apiKey: tenant.apiKey,
      body: FAST_TRAINING,
    });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({
      jobId: expect.any(Number),
      taskId: expect.any(String),
      status: "queued",
      message: expect.any(String),
    });

    const job = await waitForJob(ctx, tenant.apiKey, accepted.body.jobId);
    expect(job.error).toBeNull();
    expect(job.status).toBe("completed");
    expect(job.progress).toBe(100);
    expect(job.stage).toBe("done");
    expect(job.modelId).toEqual(expect.any(Number));
    expect(job.metrics).toMatchObject({
      ndcgAt10: expect.any(Number),
      recallAt20: expect.any(Number),
      coverageAt10: expect.any(Number),
      popularityNdcgAt10: expect.any(Number),
      decision: { published: true, comparedOn: "first-model", previousModelId: null },
    });

    const status = await ctx.request("GET", "/api/v1/pipeline/status", { apiKey: tenant.apiKey });
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({
      modelId: job.modelId,
      version: 1,
      isPublished: true,
      counts: { users: 40, items: data.products.length, interactions: data.interactions },
      metrics: { ndcgAt10: job.metrics?.ndcgAt10 },
    });
    expect(["als", "ease"]).toContain(status.body.algorithm);
    expect(status.body.trainingSeconds).toBeGreaterThan(0);

    const listed = await ctx.request("GET", "/api/v1/pipeline/models", { apiKey: tenant.apiKey });
    expect(listed.status).toBe(200);
    expect(listed.body.map((m: { modelId: number }) => m.modelId)).toEqual([job.modelId]);

    const snapshot = await ctx.deps.snapshots.getSnapshot(tenant.accountId);
    expect(snapshot?.modelId).toBe(job.modelId!);
    expect(snapshot?.items.count).toBe(data.products.length);
    expect([...(snapshot?.items.externalIds ?? [])].sort()).toEqual([...data.products].sort());
    expect(snapshot?.users.indexByExternalId.has("u-0")).toBe(true);
  }, 120_000);

  test("learns the generated structure: NDCG@10 beats the popularity baseline on the hold-out", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    await generateTenant(ctx, tenant.accountId, { users: 60, interactionsPerUser: 15 });
    const job = await trainAndWait(ctx, tenant.apiKey, {
      ...FAST_TRAINING,
      algorithm: "ease",
      regularization: 10,
    });
    expect(job.status).toBe("completed");
    expect(job.metrics?.ndcgAt10 as number).toBeGreaterThan(job.metrics?.popularityNdcgAt10 as number);
  }, 120_000);

  test("a JWT may start a training, and the body is optional (defaults)", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("POST", "/api/v1/pipeline/train", { token: tenant.token });
    expect(res.status).toBe(202);
    expect(res.body.status).toBe("queued");
  });

  test("an account without products gets a failed job with a reason, not a lost one", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const job = await trainAndWait(ctx, tenant.apiKey);
    expect(job.status).toBe("failed");
    expect(job.error).toContain("no products");
    const status = await ctx.request("GET", "/api/v1/pipeline/status", { apiKey: tenant.apiKey });
    expect(status.status).toBe(404);
    expect(status.body.errorCode).toBe("NO_MODEL");
  }, 120_000);

  test("data too small to evaluate: metrics say so and the first model is still published", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    await generateTenant(ctx, tenant.accountId, { users: 3, interactionsPerUser: 6, categories: 2 });
    const job = await trainAndWait(ctx, tenant.apiKey);
    expect(job.status).toBe("completed");
    expect(job.metrics).toMatchObject({ ndcgAt10: null, note: expect.stringContaining("insufficient") });
    expect(job.metrics?.decision).toMatchObject({ published: true, comparedOn: "first-model" });
  }, 120_000);

  test.each([
    ["unknown field", { epochs: 3 }, "epochs"],
    ["factors below 4", { factors: 1 }, "factors"],
    ["iterations not an integer", { iterations: 2.5 }, "iterations"],
    ["regularization not positive", { regularization: 0 }, "regularization"],
    ["unknown algorithm", { algorithm: "svd" }, "algorithm"],
  ])("%s is a 422 VALIDATION_ERROR naming the field", async (_label, body, field) => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const res = await ctx.request("POST", "/api/v1/pipeline/train", { apiKey: tenant.apiKey, body });
    expect(res.status).toBe(422);
    expect(res.body.errorCode).toBe("VALIDATION_ERROR");
    expect(JSON.stringify(res.body.detail)).toContain(field);
  });

  test("past the plan's trainings per day: 429 TRAINING_TOO_FREQUENT with Retry-After", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const limit = ctx.deps.plans.FREE!.limits.trainingsPerDay;
    for (let i = 0; i < limit; i++) {
      const ok = await ctx.request("POST", "/api/v1/pipeline/train", { apiKey: tenant.apiKey });
      expect(ok.status).toBe(202);
    }
    const refused = await ctx.request("POST", "/api/v1/pipeline/train", { apiKey: tenant.apiKey });
    expect(refused.status).toBe(429);
    expect(refused.body.errorCode).toBe("TRAINING_TOO_FREQUENT");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // The rate-limit headers describe the daily cap that refused, not the per-minute limit.
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(refused.headers.get("x-ratelimit-reset")).toBe(refused.headers.get("retry-after"));
    expect(refused.headers.get("x-ratelimit-limit")).toBe(String(limit));
  });

  test("security: no credentials → 401; a publishable key → 403 INSUFFICIENT_SCOPE", async () => {
    const ctx = await sharedTestContext();
    await expectAuthRequired(ctx, "POST", "/api/v1/pipeline/train", { body: {} });
    await expectPublishableRefused(ctx, "POST", "/api/v1/pipeline/train", { body: {} });
  });
});
