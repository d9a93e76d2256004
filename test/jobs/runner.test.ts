/**
 * The job runner's recovery rules, exercised with the real ingestion job kind on the test store. Outcomes
 * are checked in the data (each record applied exactly once), not by which worker ran a job: on Postgres
 * the other test files' services share the database and may legitimately pick a released job up.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { createAppEvents } from "../../src/app-events";
import { JobRunner } from "../../src/jobs/runner";
import { ingestionJobKind } from "../../src/modules/ingestion/process";
import { createLogger } from "../../src/shared/logger";
import { createTestContext, type TestContext } from "../helpers/context";

let ctx: TestContext;
const runners: JobRunner[] = [];

beforeAll(async () => {
  // This service runs no workers itself: the tests start their own runners.
  ctx = await createTestContext({ JOB_CONCURRENCY: "0" });
}, 120_000);

afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop()));
  await ctx.close();
});

function runner(instanceId: string, config = { ingestionChunkSize: 2 }, concurrency = 1, chunkDelayMs = 0) {
  const { database } = ctx.deps;
  const r = new JobRunner({
    database,
    logger: createLogger("silent"),
    concurrency,
    instanceId,
    pollMs: 50,
    heartbeatMs: 200,
  });
  r.registerJobKind(ingestionJobKind({ database, config, chunkDelayMs, events: createAppEvents() }));
  runners.push(r);
  return r;
}

const rows = <T>(query: ReturnType<typeof sql>) => ctx.deps.database.rows<T>(query);

async function newAccount(): Promise<number> {
  const [row] = await rows<{ id: number }>(
    sql`insert into accounts (name) values ('runner test') returning id`,
  );
  return Number(row!.id);
}

interface JobSeed {
  products?: unknown[];
  interactions?: unknown[];
  processedProducts?: number;
  claimedBy?: string | null;
  heartbeatAgoSeconds?: number;
  attempts?: number;
}

async function seedJob(accountId: number, seed: JobSeed): Promise<number> {
  const payload = JSON.stringify({
    products: seed.products ?? [],
    users: [],
    interactions: seed.interactions ?? [],
  });
  const [row] = await rows<{ id: number }>(sql`
    insert into ingestion_jobs (account_id, task_id, status, payload, total_products, total_interactions,
      processed_products, claimed_by, heartbeat_at, attempts, started_at)
    values (${accountId}, ${randomUUID()}, 'processing', ${payload}::jsonb, ${seed.products?.length ?? 0},
      ${seed.interactions?.length ?? 0}, ${seed.processedProducts ?? 0}, ${seed.claimedBy ?? null},
      ${seed.claimedBy ? sql`now() - make_interval(secs => ${seed.heartbeatAgoSeconds ?? 0})` : null},
      ${seed.attempts ?? 0}, ${seed.claimedBy ? sql`now()` : null})
    returning id`);
  return Number(row!.id);
}

interface JobState {
  status: string;
  attempts: number;
  failure_reason: string | null;
  claimed_by: string | null;
  processed_products: number;
  processed_interactions: number;
}

async function jobState(id: number): Promise<JobState> {
  const [row] =
    await rows<JobState>(sql`select status, attempts, failure_reason, claimed_by, processed_products,
      processed_interactions from ingestion_jobs where id = ${id}`);
  return row!;
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

const product = (id: string) => ({ externalId: id, name: id, price: 1, category: "c" });

describe("job runner", () => {
  test("a job an earlier run of this instance left claimed resumes at start-up from its committed cursor", async () => {
    const accountId = await newAccount();
    const instance = `t${randomUUID().slice(0, 8)}`;
    // Two of four products were committed before the crash (cursor 2); the heartbeat is fresh, so only the
    // same instance's restart may take the claim over at once.
    const id = await seedJob(accountId, {
      products: ["p1", "p2", "p3", "p4"].map(product),
      processedProducts: 2,
      claimedBy: `${instance}:oldboot:ingestion:0`,
      attempts: 1,
    });
    await runner(instance).start();
    await until(async () => (await jobState(id)).status !== "processing", "the job to finish");
    const state = await jobState(id);
    expect(state.status).toBe("completed");
    expect(state.attempts).toBe(2);
    const applied = await rows<{ external_id: string }>(
      sql`select external_id from products where account_id = ${accountId} order by external_id`,
    );
    // Records before the cursor are never applied again; the rest exactly once.
    expect(applied.map((r) => r.external_id)).toEqual(["p3", "p4"]);
  }, 60_000);

  test("a dead claim that has used up its attempts is failed with a reason instead of retried", async () => {
    const accountId = await newAccount();
    const id = await seedJob(accountId, {
      products: [product("p1")],
      claimedBy: "someone-else:boot:ingestion:0",
      heartbeatAgoSeconds: 600,
      attempts: 3,
    });
    await runner(`t${randomUUID().slice(0, 8)}`).start();
    await until(async () => (await jobState(id)).status !== "processing", "the job to be failed");
    const state = await jobState(id);
    expect(state.status).toBe("failed");
    expect(state.failure_reason).toContain("interrupted 3 times");
    const applied = await rows(sql`select 1 from products where account_id = ${accountId}`);
    expect(applied).toHaveLength(0);
  }, 60_000);

  test("a claim whose heartbeat went stale is taken over and finished", async () => {
    const accountId = await newAccount();
    const id = await seedJob(accountId, {
      products: [product("p1"), product("p2")],
      claimedBy: "vanished:boot:ingestion:0",
      heartbeatAgoSeconds: 600,
      attempts: 1,
    });
    await runner(`t${randomUUID().slice(0, 8)}`).start();
    await until(async () => (await jobState(id)).status !== "processing", "the job to finish");
    expect((await jobState(id)).status).toBe("completed");
  }, 60_000);

  test("several runners sharing the database apply every job exactly once", async () => {
    const accountId = await newAccount();
    await rows(sql`insert into products (account_id, external_id, name, price, category)
      values (${accountId}, 'p', 'p', 5, 'c')`);
    const interactions = Array.from({ length: 5 }, (_, i) => ({
      external_user_id: `u${i}`,
      external_product_id: "p",
      interaction_type: "PURCHASE",
      value: 1,
    }));
    const ids: number[] = [];
    for (let n = 0; n < 8; n++) ids.push(await seedJob(accountId, { interactions }));
    await Promise.all([
      runner(`a${randomUUID().slice(0, 8)}`, undefined, 2).start(),
      runner(`b${randomUUID().slice(0, 8)}`, undefined, 2).start(),
    ]);
    for (const r of runners.slice(-2)) r.announce("ingestion");
    await until(
      async () => (await Promise.all(ids.map(jobState))).every((s) => s.status === "completed"),
      "all jobs to finish",
    );
    const [counts] = await rows<{ interactions: number; orders: number; users: number }>(sql`select
      (select count(*)::int from interactions where account_id = ${accountId}) as interactions,
      (select count(*)::int from orders where account_id = ${accountId}) as orders,
      (select count(*)::int from end_users where account_id = ${accountId}) as users`);
    expect(counts).toEqual({ interactions: 40, orders: 40, users: 5 });
  }, 60_000);

  test("a graceful stop finishes the current chunk and gives the job back without counting an attempt", async () => {
    const accountId = await newAccount();
    const products = Array.from({ length: 6 }, (_, i) => product(`p${i}`));
    const id = await seedJob(accountId, { products });
    const slow = runner(`s${randomUUID().slice(0, 8)}`, { ingestionChunkSize: 1 }, 1, 150);
    await slow.start();
    await slow.announce("ingestion");
    await until(async () => (await jobState(id)).processed_products > 0, "the first chunk");
    await slow.stop();
    const stopped = await jobState(id);
    if (stopped.claimed_by === null && stopped.status === "processing") {
      // Unless another service on a shared database took it over already, it waits unclaimed, unfinished,
      // and the interrupted run does not count against its attempts.
      expect(stopped.processed_products).toBeLessThan(6);
      expect(stopped.attempts).toBe(0);
    }
    const [committed] = await rows<{ n: number }>(
      sql`select count(*)::int as n from products where account_id = ${accountId}`,
    );
    // Every committed chunk advanced the cursor with its write: the two always agree.
    const after = await jobState(id);
    if (after.status === "processing") expect(committed!.n).toBe(after.processed_products);

    await runner(`f${randomUUID().slice(0, 8)}`).start();
    await until(async () => (await jobState(id)).status !== "processing", "the job to finish");
    expect((await jobState(id)).status).toBe("completed");
    const names = await rows<{ external_id: string }>(
      sql`select external_id from products where account_id = ${accountId} order by external_id`,
    );
    expect(names.map((r) => r.external_id)).toEqual(products.map((p) => p.externalId));
  }, 60_000);
});
