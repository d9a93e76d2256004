/**
 * The training the service starts itself after end-user erasures (src/modules/training/erasure-retraining.ts):
 * the sweep is called directly with its debounce as the test needs it, and the jobs it queues are trained
 * by the context's own job runner. The sweep reaches every account of its database, so the context has a
 * database of its own on Postgres.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import {
  enqueueErasureRetrainings,
  erasureRetrainingInsert,
  type QueuedRetraining,
} from "../../src/modules/training/erasure-retraining";
import { createTestContext, type TestContext } from "../helpers/context";
import { registerTenant, type Tenant } from "../helpers/tenant";
import { FAST_TRAINING, generateTenant, type JobStatusBody, trainAndWait, waitForJob } from "./fixtures";

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({ TRAININGS_PER_DAY: "2" }, { ownDatabase: true });
});
afterAll(async () => {
  await ctx.close();
});

/** The sweep as the service runs it, with the debounce given; answers what it queued for `tenant`. */
async function sweep(tenant: Tenant, debounceSeconds = 0): Promise<QueuedRetraining[]> {
  const queued = await enqueueErasureRetrainings(ctx.deps, { debounceSeconds });
  return queued.filter((q) => q.accountId === tenant.accountId);
}

async function trainedTenant(options: Parameters<typeof generateTenant>[2] = {}) {
  const tenant = await registerTenant(ctx);
  const data = await generateTenant(ctx, tenant.accountId, options);
  const first = await trainAndWait(ctx, tenant.apiKey);
  expect(first.status).toBe("completed");
  return { tenant, data, first };
}

async function erase(tenant: Tenant, externalId: string): Promise<number> {
  const res = await ctx.request("DELETE", `/api/v1/end-users/external/${externalId}`, {
    apiKey: tenant.apiKey,
  });
  expect(res.status).toBe(200);
  return res.body.deleted.interactions;
}

async function jobsOf(tenant: Tenant): Promise<JobStatusBody[]> {
  const res = await ctx.request<JobStatusBody[]>("GET", "/api/v1/pipeline/jobs", { apiKey: tenant.apiKey });
  expect(res.status).toBe(200);
  return res.body;
}

describe("retraining after end-user erasures", () => {
  test("an erasure leads the sweep to queue exactly one training, which publishes a model trained without the user", async () => {
    const { tenant, data, first } = await trainedTenant();
    expect(await sweep(tenant)).toEqual([]);

    // An end user without interactions left nothing in the model: no erasure is counted for them.
    const created = await ctx.request("POST", "/api/v1/end-users/", {
      apiKey: tenant.apiKey,
      body: { externalId: "quiet" },
    });
    expect(created.status).toBe(200);
    expect(await erase(tenant, "quiet")).toBe(0);
    expect(await sweep(tenant)).toEqual([]);

    const erasedInteractions = await erase(tenant, "u-5");
    expect(erasedInteractions).toBeGreaterThan(0);
    // Within the debounce nothing is queued yet, so a burst of erasures makes one training.
    expect(await sweep(tenant, 900)).toEqual([]);
    const queued = await sweep(tenant);
    expect(queued).toEqual([{ accountId: tenant.accountId, jobId: expect.any(Number) }]);
    expect(await sweep(tenant)).toEqual([]);

    // An ordinary job of the account, with the options of the training that made the published model.
    const listed = await jobsOf(tenant);
    expect(listed.map((job) => job.jobId)).toEqual([queued[0]!.jobId, first.jobId]);
    expect(["queued", "running"]).toContain(listed[0]!.status);
    const [row] = await ctx.deps.database.rows<{ options: unknown; started_by: string }>(
      sql`select options, started_by from training_jobs where id = ${queued[0]!.jobId}`,
    );
    expect(row).toEqual({ options: FAST_TRAINING, started_by: "erasure" });

    const job = await waitForJob(ctx, tenant.apiKey, queued[0]!.jobId);
    expect(job.status).toBe("completed");
    expect(job.metrics?.decision).toMatchObject({
      published: true,
      previousModelId: first.modelId,
      reason: expect.stringContaining("erased"),
    });

    const status = await ctx.request("GET", "/api/v1/pipeline/status", { apiKey: tenant.apiKey });
    expect(status.body).toMatchObject({
      modelId: job.modelId,
      isPublished: true,
      counts: { users: data.users.length - 1, interactions: data.interactions - erasedInteractions },
    });
    const snapshot = await ctx.deps.snapshots.getSnapshot(tenant.accountId);
    expect(snapshot?.modelId).toBe(job.modelId!);
    expect(snapshot?.users.indexByExternalId.has("u-5")).toBe(false);
    expect(snapshot?.users.indexByExternalId.has("u-6")).toBe(true);

    // The published model has seen the erasure: nothing more to do.
    expect(await sweep(tenant)).toEqual([]);
  }, 120_000);

  test("an account without a published model gets none", async () => {
    const tenant = await registerTenant(ctx);
    await generateTenant(ctx, tenant.accountId, { users: 5 });
    expect(await erase(tenant, "u-1")).toBeGreaterThan(0);
    expect(await sweep(tenant)).toEqual([]);
    expect(await jobsOf(tenant)).toEqual([]);
  });

  test("an account with a training queued or running gets none; that training publishes past the erasure", async () => {
    const { tenant } = await trainedTenant();
    await erase(tenant, "u-1");
    const accepted = await ctx.request("POST", "/api/v1/pipeline/train", {
      apiKey: tenant.apiKey,
      body: FAST_TRAINING,
    });
    expect(accepted.status).toBe(202);
    expect(await sweep(tenant)).toEqual([]);
    const job = await waitForJob(ctx, tenant.apiKey, accepted.body.jobId);
    expect(job.status).toBe("completed");
    expect(job.metrics?.decision).toMatchObject({ published: true });
    expect(await sweep(tenant)).toEqual([]);
    expect((await jobsOf(tenant)).length).toBe(2);
  }, 120_000);

  test("the retraining is not refused by, and does not use up, the plan's trainings per day", async () => {
    // TRAININGS_PER_DAY is 2 in this file: the customer's first training and one more.
    const { tenant } = await trainedTenant();
    await erase(tenant, "u-2");
    const [queued] = await sweep(tenant);
    expect((await waitForJob(ctx, tenant.apiKey, queued!.jobId)).status).toBe("completed");

    const second = await trainAndWait(ctx, tenant.apiKey);
    expect(second.status).toBe("completed");
    const third = await ctx.request("POST", "/api/v1/pipeline/train", { apiKey: tenant.apiKey });
    expect(third.status).toBe(429);
    expect(third.body.errorCode).toBe("TRAINING_TOO_FREQUENT");

    // Past the customer's limit, the service still retrains after an erasure.
    await erase(tenant, "u-3");
    const [again] = await sweep(tenant);
    expect((await waitForJob(ctx, tenant.apiKey, again!.jobId)).status).toBe("completed");
  }, 120_000);

  test("two sweeps racing queue one job, also when one waits on the other's uncommitted insert", async () => {
    const { tenant } = await trainedTenant();
    const queuedJobs = async () =>
      Number(
        (
          await ctx.deps.database.rows<{ n: number }>(
            sql`select count(*)::int as n from training_jobs
                where account_id = ${tenant.accountId} and started_by = 'erasure'`,
          )
        )[0]!.n,
      );

    await erase(tenant, "u-1");
    const together = (await Promise.all([sweep(tenant), sweep(tenant)])).flat();
    expect(together.length).toBe(1);
    expect(await queuedJobs()).toBe(1);
    expect((await waitForJob(ctx, tenant.apiKey, together[0]!.jobId)).status).toBe("completed");

    // A second process sweeps while the first one's insert is not committed yet: on Postgres it sees no
    // queued job, tries its own insert and must wait for the first and then insert nothing.
    await erase(tenant, "u-2");
    const { database } = ctx.deps;
    let second: Promise<QueuedRetraining[]> | undefined;
    await database.db.transaction(async (tx) => {
      const inserted = await database.rows<{ id: number; account_id: number }>(
        erasureRetrainingInsert(0),
        tx,
      );
      expect(inserted.filter((row) => Number(row.account_id) === tenant.accountId).length).toBe(1);
      second = sweep(tenant);
      await Bun.sleep(300);
    });
    expect(await second).toEqual([]);
    expect(await queuedJobs()).toBe(2);
    const [latest] = await jobsOf(tenant);
    expect((await waitForJob(ctx, tenant.apiKey, latest!.jobId)).status).toBe("completed");
  }, 120_000);

  test("a retraining that failed since the latest erasure is not queued again until the next erasure", async () => {
    const { tenant } = await trainedTenant();
    await erase(tenant, "u-1");
    await ctx.deps.database.rows(sql`
      insert into training_jobs (account_id, task_id, status, started_by, stage, error, finished_at)
      values (${tenant.accountId}, 'failed-retraining', 'failed', 'erasure', 'failed', 'worker crashed', now())`);
    expect(await sweep(tenant)).toEqual([]);

    await erase(tenant, "u-2");
    const [queued] = await sweep(tenant);
    expect(queued).toBeDefined();
    expect((await waitForJob(ctx, tenant.apiKey, queued!.jobId)).status).toBe("completed");
  }, 120_000);

  test("when nothing is left to train on, the model trained on erased users' data stops serving", async () => {
    const { tenant, data, first } = await trainedTenant({ users: 3, interactionsPerUser: 6, categories: 2 });
    for (const user of data.users) await erase(tenant, user);
    const [queued] = await sweep(tenant);
    const job = await waitForJob(ctx, tenant.apiKey, queued!.jobId);
    expect(job.status).toBe("failed");
    expect(job.error).toStartWith("Retraining after end-user erasures: ");
    expect(job.error).toContain("no interactions");

    const status = await ctx.request("GET", "/api/v1/pipeline/status", { apiKey: tenant.apiKey });
    expect(status.body).toMatchObject({ modelId: first.modelId, published: false, isPublished: false });
    expect(await ctx.deps.snapshots.getSnapshot(tenant.accountId)).toBeUndefined();
    // Recommendations still answer, without the withdrawn model.
    const answer = await ctx.request("POST", "/api/v1/recommendations/personalized/query", {
      apiKey: tenant.apiKey,
      body: { external_user_id: "someone-new", limit: 3 },
    });
    expect(answer.status).toBe(200);
    expect(await sweep(tenant)).toEqual([]);
  }, 120_000);
});
