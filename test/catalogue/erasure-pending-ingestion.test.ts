/**
 * An erasure wins over a bulk-ingestion job accepted before it: whether the job is still queued, paused
 * between two chunks, or in the middle of a chunk's transaction, none of the erased end user's records is
 * applied afterwards, the stored request no longer holds them, and the other records are applied as usual.
 * Each job is created claimed by this test's worker and run by the test (the real job kind), so no other
 * worker sharing the store takes it.
 */
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { offerPayload } from "../../src/modules/ingestion/handoff";
import { ingestionJobKind } from "../../src/modules/ingestion/process";
import { sharedTestContext, type TestContext } from "../helpers/context";
import { registerTenant } from "../helpers/tenant";

const view = (user: string, product: string) => ({
  external_user_id: user,
  external_product_id: product,
  interaction_type: "VIEW",
});
const purchase = (user: string, product: string) => ({
  ...view(user, product),
  interaction_type: "PURCHASE",
});
const search = (user: string, product: string) => ({
  ...view(user, product),
  interaction_type: "SEARCH",
  query: `${user} looked for ${product}`,
});

/** Two chunks of two interactions each with a record of both users, and a bad record of each in the first. */
const BATCH = {
  products: [],
  users: [
    { externalId: "victim", attributes: { city: "Springfield" } },
    { externalId: "bystander", attributes: { city: "Shelbyville" } },
  ],
  interactions: [
    view("victim", "p1"),
    view("victim", "ghost"),
    view("bystander", "p1"),
    view("bystander", "ghost"),
    purchase("victim", "p2"),
    purchase("bystander", "p2"),
    search("victim", "p1"),
    search("bystander", "p2"),
  ],
};

interface Setup {
  ctx: TestContext;
  apiKey: string;
  accountId: number;
  jobId: number;
}

/** A tenant whose victim already has one interaction, and a job of BATCH claimed by `workerId`. */
async function setUp(workerId: string): Promise<Setup> {
  const ctx = await sharedTestContext();
  const { apiKey, accountId } = await registerTenant(ctx);
  for (const id of ["p1", "p2"]) {
    const res = await ctx.request("POST", "/api/v1/products/", {
      apiKey,
      body: { externalId: id, name: id, price: 5, category: "c" },
    });
    expect(res.status).toBe(201);
  }
  const earlier = await ctx.request("POST", "/api/v1/interactions/", { apiKey, body: view("victim", "p2") });
  expect(earlier.status).toBe(200);
  const [row] = await ctx.deps.database.rows<{ id: number }>(
    sql`insert into ingestion_jobs (account_id, task_id, status, payload, total_users, total_interactions,
          claimed_by, heartbeat_at, attempts, started_at)
        values (${accountId}, ${crypto.randomUUID()}, 'processing', ${JSON.stringify(BATCH)}::jsonb,
          ${BATCH.users.length}, ${BATCH.interactions.length}, ${workerId}, now(), 1, now())
        returning id::int as id`,
  );
  return { ctx, apiKey, accountId, jobId: row!.id };
}

/** Runs the job with the real job kind, two records a chunk. */
function runJob(
  { ctx, accountId, jobId }: Setup,
  workerId: string,
  options: { afterChunk?: (jobId: number) => Promise<void>; chunkDelayMs?: number } = {},
): Promise<void> {
  const kind = ingestionJobKind({
    database: ctx.deps.database,
    config: { ingestionChunkSize: 2 },
    events: ctx.deps.events,
    ...options,
  });
  return kind.run({ id: jobId, accountId, attempts: 1 }, { signal: new AbortController().signal, workerId });
}

async function storedJob({ ctx, jobId }: Setup) {
  const [row] = await ctx.deps.database.rows<{ payload: string | null; errors: string; revision: number }>(
    sql`select payload::text as payload, errors::text as errors, payload_revision as revision
        from ingestion_jobs where id = ${jobId}`,
  );
  return row!;
}

/** What the account holds per end user: their row, interactions, orders and searches. */
async function holdings({ ctx, accountId }: Setup, externalId: string) {
  const [row] = await ctx.deps.database.rows<Record<string, number>>(sql`
    with u as (select id from end_users where account_id = ${accountId} and external_id = ${externalId})
    select (select count(*)::int from u) as "endUser",
      (select count(*)::int from interactions where account_id = ${accountId} and end_user_id in (select id from u)) as interactions,
      (select count(*)::int from orders where account_id = ${accountId} and end_user_id in (select id from u)) as orders,
      (select count(*)::int from searches where account_id = ${accountId} and end_user_id in (select id from u)) as searches,
      (select count(*)::int from interactions where account_id = ${accountId}) as "accountInteractions"`);
  return row!;
}

/** After the job: the victim never came back, the bystander got every valid record, no error names the victim. */
async function expectOnlyBystanderApplied(setup: Setup) {
  const job = await setup.ctx.request("GET", `/api/v1/ingestion/batch/${setup.jobId}`, {
    apiKey: setup.apiKey,
  });
  expect(job.body).toMatchObject({
    status: "completed_with_errors",
    processedUsers: 2,
    processedInteractions: 8,
  });
  expect(job.body.errors.map((e: { externalId: string }) => e.externalId)).toEqual(["bystander:ghost"]);
  expect(await holdings(setup, "victim")).toEqual({
    endUser: 0,
    interactions: 0,
    orders: 0,
    searches: 0,
    accountInteractions: 3,
  });
  expect(await holdings(setup, "bystander")).toEqual({
    endUser: 1,
    interactions: 3,
    orders: 1,
    searches: 1,
    accountInteractions: 3,
  });
  const stored = await storedJob(setup);
  expect(stored.payload).toBeNull();
  expect(stored.errors).not.toContain("victim");
  const lookup = await setup.ctx.request("GET", "/api/v1/end-users/external/victim", {
    apiKey: setup.apiKey,
  });
  expect(lookup.status).toBe(404);
}

/** The stored request right after the erasure: the victim's records are nulls in place, the rest untouched. */
function expectScrubbed(stored: { payload: string | null; revision: number }) {
  expect(stored.payload).not.toContain("victim");
  const payload = JSON.parse(stored.payload!) as {
    users: unknown[];
    interactions: ({ external_user_id: string } | null)[];
  };
  expect(payload.users).toEqual([null, BATCH.users[1]!]);
  expect(payload.interactions.map((r) => r?.external_user_id ?? null)).toEqual([
    null,
    null,
    "bystander",
    "bystander",
    null,
    "bystander",
    null,
    "bystander",
  ]);
  expect(stored.revision).toBe(1);
}

const erase = (setup: Setup) =>
  setup.ctx.request("DELETE", "/api/v1/end-users/external/victim", { apiKey: setup.apiKey });

const noneDeleted = { searches: 0, recommendations: 0, orders: 0, attributions: 0 };

describe("erasure while a bulk-ingestion job with the end user's records is still to be applied", () => {
  test("a queued job (its request also handed over in memory) completes without bringing the user back", async () => {
    const workerId = `erasure-test:${crypto.randomUUID()}`;
    const setup = await setUp(workerId);
    // As the route does when a worker of this process may take the job: the worker uses this copy.
    offerPayload(setup.ctx.deps.database, setup.jobId, structuredClone(BATCH));

    const erased = await erase(setup);
    expect(erased.status).toBe(200);
    expect(erased.body.deleted).toEqual({ ...noneDeleted, interactions: 1 });
    expectScrubbed(await storedJob(setup));

    await runJob(setup, workerId);
    await expectOnlyBystanderApplied(setup);
  });

  test("an end user only named by a queued job is erased from it (200, nothing else to delete), not 404", async () => {
    const workerId = `erasure-test:${crypto.randomUUID()}`;
    const setup = await setUp(workerId);
    // A second job names "newcomer", who is not stored.
    const [row] = await setup.ctx.deps.database.rows<{ id: number }>(
      sql`insert into ingestion_jobs (account_id, task_id, status, payload, total_interactions, claimed_by,
            heartbeat_at, attempts, started_at)
          values (${setup.accountId}, ${crypto.randomUUID()}, 'processing',
            ${JSON.stringify({ interactions: [view("newcomer", "p1"), view("bystander", "p2")] })}::jsonb, 2,
            ${workerId}, now(), 1, now())
          returning id::int as id`,
    );
    const second = { ...setup, jobId: row!.id };
    const erased = await setup.ctx.request("DELETE", "/api/v1/end-users/external/newcomer", {
      apiKey: setup.apiKey,
    });
    expect(erased.status).toBe(200);
    expect(erased.body).toMatchObject({ externalId: "newcomer", erased: true });
    expect(erased.body.deleted).toEqual({ ...noneDeleted, interactions: 0 });
    expect((await storedJob(second)).payload).not.toContain("newcomer");
    await runJob(second, workerId);
    expect((await holdings(second, "newcomer")).endUser).toBe(0);
    expect((await holdings(second, "bystander")).interactions).toBe(1);
    // Named by no job and not stored: 404 as before.
    const unknown = await setup.ctx.request("DELETE", "/api/v1/end-users/external/stranger", {
      apiKey: setup.apiKey,
    });
    expect(unknown.status).toBe(404);
  });

  test("a job paused between chunks applies none of the user's remaining records; deleted counts what it wrote", async () => {
    const workerId = `erasure-test:${crypto.randomUUID()}`;
    const setup = await setUp(workerId);
    let chunks = 0;
    let reachedPause!: () => void;
    const paused = new Promise<void>((resolve) => {
      reachedPause = resolve;
    });
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => {
      resume = resolve;
    });
    // After the users' chunk and the first interactions' chunk (the victim's view of p1 applied).
    const running = runJob(setup, workerId, {
      afterChunk: async () => {
        if (++chunks !== 2) return;
        reachedPause();
        await resumed;
      },
    });
    await paused;
    expect(await holdings(setup, "victim")).toMatchObject({ endUser: 1, interactions: 2 });
    expect((await storedJob(setup)).errors).toContain("victim:ghost");

    const erased = await erase(setup);
    expect(erased.status).toBe(200);
    expect(erased.body.deleted).toEqual({ ...noneDeleted, interactions: 2 });
    const stored = await storedJob(setup);
    expectScrubbed(stored);
    expect(stored.errors).not.toContain("victim");

    resume();
    await running;
    await expectOnlyBystanderApplied(setup);
  });

  test("an erasure arriving while a chunk's transaction is open waits for it, then deletes and counts what it wrote", async () => {
    const workerId = `erasure-test:${crypto.randomUUID()}`;
    const setup = await setUp(workerId);
    let chunks = 0;
    let erasure: ReturnType<typeof erase> | undefined;
    let answeredBeforeChunkCommitted: boolean | undefined;
    let answered = false;
    const running = runJob(setup, workerId, {
      // Each chunk holds its transaction this long; the erasure is sent inside the second chunk's.
      chunkDelayMs: 800,
      afterChunk: async () => {
        chunks++;
        if (chunks === 1) {
          erasure = Bun.sleep(200)
            .then(() => erase(setup))
            .then((res) => {
              answered = true;
              return res;
            });
        }
        if (chunks === 2) answeredBeforeChunkCommitted = answered;
      },
    });
    await running;
    const erased = await erasure!;
    expect(answeredBeforeChunkCommitted).toBe(false);
    expect(erased.status).toBe(200);
    // The earlier view, and the view of p1 the second chunk wrote while the erasure waited. On a busy machine
    // the erasure can be sent, or reach the store, only after the third chunk began: it then waits for that
    // one too and also deletes and counts its purchase (an interaction and an order). Either way nothing of
    // the end user is left once it answers, and nothing comes back after.
    const { interactions, orders } = erased.body.deleted;
    expect([
      { interactions: 2, orders: 0 },
      { interactions: 3, orders: 1 },
    ]).toContainEqual({ interactions, orders });
    expect(erased.body.deleted).toEqual({ ...noneDeleted, interactions, orders });
    await expectOnlyBystanderApplied(setup);
  }, 30_000);
});
