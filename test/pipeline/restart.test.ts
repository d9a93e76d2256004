/**
 * Jobs survive restarts: a service is stopped with a job claimed "mid-training" by a process that no longer
 * exists, a new service opens the same store, and the job is finished (or failed with a reason once it has
 * used up its attempts). Also: two workers never claim the same job, and a run whose claim was taken over
 * stores nothing.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { createApp } from "../../src/app";
import { loadConfig } from "../../src/config";
import { createDeps } from "../../src/deps";
import { createLogger } from "../../src/shared/logger";
import { trainingJobKind } from "../../src/training/job-kind";
import { ClaimLostError, storeModel } from "../../src/training/store-model";
import { createTestContext, type TestContext, usingPostgres } from "../helpers/context";
import { rejectionOf } from "../helpers/rejection";
import { makeTempDir } from "../helpers/temp-dirs";
import { registerTenant } from "../helpers/tenant";
import { FAST_TRAINING, generateTenant, waitForJob } from "./fixtures";

/** A service on a store that outlives it (a PGlite directory, or the test Postgres). */
async function openService(dataDir: string, env: Record<string, string>): Promise<TestContext> {
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: "debug",
    JWT_SECRET: "test-secret-test-secret-test-secret-0123456789",
    PUBLIC_BASE_URL: "http://localhost:8000",
    ...(usingPostgres() ? { DATABASE_URL: process.env.TEST_DATABASE_URL! } : {}),
    ...env,
  });
  const logs: string[] = [];
  const deps = await createDeps(config, {
    logger: createLogger("debug", (line) => logs.push(line)),
    pgliteDataDir: join(dataDir, "pglite"),
  });
  await deps.start();
  const app = createApp(deps);
  return {
    app,
    deps,
    logs,
    close: () => deps.stop(),
    async request(method, path, options = {}) {
      const url = new URL(path, "http://localhost");
      const headers: Record<string, string> = { ...options.headers };
      if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey;
      if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
      let body: string | undefined;
      if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers["content-type"] = "application/json";
      }
      const response = await app.handle(new Request(url.toString(), { method, headers, body }));
      const text = await response.text();
      return {
        status: response.status,
        headers: response.headers,
        body: text ? JSON.parse(text) : undefined,
        text,
      };
    },
  };
}

/** Puts a queued job in the state a crashed process leaves behind: running, claimed, heartbeat long gone. */
async function simulateCrashedClaim(ctx: TestContext, jobId: number, attempts: number): Promise<void> {
  await ctx.deps.database.rows(sql`
    update training_jobs set status = 'running', claimed_by = 'igone0000000:dead:training:0',
      heartbeat_at = now() - interval '10 minutes', started_at = now() - interval '10 minutes',
      attempts = ${attempts}, stage = 'training', progress = 40
    where id = ${jobId}`);
}

describe("training jobs across restarts", () => {
  test("a restarted service loads the published model and serves it", async () => {
    const dataDir = makeTempDir("rs-restart-");
    const first = await openService(dataDir, { JOB_CONCURRENCY: "1" });
    const tenant = await registerTenant(first);
    await generateTenant(first, tenant.accountId);
    let modelId: number;
    try {
      const accepted = await first.request("POST", "/api/v1/pipeline/train", {
        apiKey: tenant.apiKey,
        body: FAST_TRAINING,
      });
      const job = await waitForJob(first, tenant.apiKey, accepted.body.jobId);
      expect(job.status).toBe("completed");
      modelId = job.modelId!;
    } finally {
      await first.close();
    }
    // On Postgres the next process has a data directory of its own (no local copy: the artifact comes from
    // the database); on the embedded store the data directory is the store, artifact files included.
    const second = await openService(usingPostgres() ? makeTempDir("rs-restart-") : dataDir, {
      JOB_CONCURRENCY: "0",
    });
    try {
      expect((await second.deps.snapshots.getSnapshot(tenant.accountId))?.modelId).toBe(modelId);
      const answer = await second.request("POST", "/api/v1/recommendations/personalized/query", {
        apiKey: tenant.apiKey,
        body: { external_user_id: "u-1", limit: 5 },
      });
      expect(answer.status).toBe(200);
      expect(answer.body.items.length).toBe(5);
    } finally {
      await second.close();
    }
  }, 180_000);

  test("a job whose process died mid-training is finished by the next service on the same store", async () => {
    const dataDir = makeTempDir("rs-restart-");
    const first = await openService(dataDir, { JOB_CONCURRENCY: "0" });
    const tenant = await registerTenant(first);
    await generateTenant(first, tenant.accountId);
    const accepted = await first.request("POST", "/api/v1/pipeline/train", {
      apiKey: tenant.apiKey,
      body: FAST_TRAINING,
    });
    expect(accepted.status).toBe(202);
    await simulateCrashedClaim(first, accepted.body.jobId, 1);
    await first.close();

    const second = await openService(dataDir, { JOB_CONCURRENCY: "1" });
    try {
      const job = await waitForJob(second, tenant.apiKey, accepted.body.jobId);
      expect(job.error).toBeNull();
      expect(job.status).toBe("completed");
      expect(job.modelId).toEqual(expect.any(Number));
      const [row] = await second.deps.database.rows<{ attempts: number }>(
        sql`select attempts from training_jobs where id = ${accepted.body.jobId}`,
      );
      expect(row?.attempts).toBe(2);
      expect((await second.deps.snapshots.getSnapshot(tenant.accountId))?.modelId).toBe(job.modelId!);
    } finally {
      await second.close();
    }
  }, 180_000);

  test("a job interrupted as often as its attempts allow is marked failed with the reason", async () => {
    const dataDir = makeTempDir("rs-restart-");
    const first = await openService(dataDir, { JOB_CONCURRENCY: "0" });
    const tenant = await registerTenant(first);
    const accepted = await first.request("POST", "/api/v1/pipeline/train", { apiKey: tenant.apiKey });
    await simulateCrashedClaim(first, accepted.body.jobId, 3);
    await first.close();

    const second = await openService(dataDir, { JOB_CONCURRENCY: "1" });
    try {
      const job = await waitForJob(second, tenant.apiKey, accepted.body.jobId);
      expect(job.status).toBe("failed");
      expect(job.error).toContain("interrupted");
      expect(job.finishedAt).not.toBeNull();
    } finally {
      await second.close();
    }
  }, 180_000);
});

describe("claims", () => {
  test("two workers claiming at once never get the same training job", async () => {
    const ctx = await createTestContext({ JOB_CONCURRENCY: "0" });
    try {
      const tenant = await registerTenant(ctx);
      const accepted = await ctx.request("POST", "/api/v1/pipeline/train", { apiKey: tenant.apiKey });
      const kind = trainingJobKind(ctx.deps);
      const claims = await Promise.all([
        kind.claimNext(ctx.deps.database, "worker-a"),
        kind.claimNext(ctx.deps.database, "worker-b"),
        kind.claimNext(ctx.deps.database, "worker-c"),
      ]);
      const won = claims.filter((c) => c !== undefined);
      // On a shared Postgres another test service's runner may win the race; either way one claim in total.
      expect(won.length).toBeLessThanOrEqual(1);
      const [row] = await ctx.deps.database.rows<{ attempts: number }>(
        sql`select attempts from training_jobs where id = ${accepted.body.jobId}`,
      );
      expect(row?.attempts).toBe(1);
      if (!usingPostgres()) expect(won[0]?.id).toBe(accepted.body.jobId);
    } finally {
      await ctx.close();
    }
  }, 120_000);

  test("a run that lost its claim to another worker stores no model", async () => {
    const ctx = await createTestContext({ JOB_CONCURRENCY: "0" });
    try {
      const tenant = await registerTenant(ctx);
      const accepted = await ctx.request("POST", "/api/v1/pipeline/train", { apiKey: tenant.apiKey });
      await ctx.deps.database.rows(
        sql`update training_jobs set status = 'running', claimed_by = 'worker-new' where id = ${accepted.body.jobId}`,
      );
      const attempt = storeModel(ctx.deps.database, {
        jobId: accepted.body.jobId,
        accountId: tenant.accountId,
        workerId: "worker-old",
        artifact: { bytes: new Uint8Array(16), length: 16, path: null },
        counts: { users: 1, items: 1, interactions: 1 },
        erasuresSeen: 0,
        result: {
          type: "done",
          engineBytes: null,
          artifact: null,
          algorithm: "als",
          params: {},
          trainingSeconds: 0.1,
          metrics: {
            ndcgAt10: null,
            recallAt20: null,
            coverageAt10: null,
            popularityNdcgAt10: null,
            evaluatedUsers: 0,
            note: "insufficient data",
          },
          baselineMetrics: null,
          baseline: null,
        },
      });
      expect(await rejectionOf(attempt)).toBeInstanceOf(ClaimLostError);
      const models = await ctx.deps.database.rows<{ n: number }>(
        sql`select count(*)::int as n from models where account_id = ${tenant.accountId}`,
      );
      expect(models[0]?.n).toBe(0);
    } finally {
      await ctx.close();
    }
  }, 120_000);
});
