import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { ingestionQueue } from "../../src/modules/ingestion/process";
import { sharedTestContext, type TestContext } from "../helpers/context";
import { registerTenant } from "../helpers/tenant";

async function finished(ctx: TestContext, apiKey: string, jobId: number) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await ctx.request("GET", `/api/v1/ingestion/batch/${jobId}`, { apiKey });
    if (res.body.status !== "processing" || Date.now() > deadline) return res;
    await Bun.sleep(50);
  }
}

describe("export and erasure include recommendation logs still queued in memory", () => {
  test("two answers given just before the export are in it; erasure counts and removes them", async () => {
    const ctx = await sharedTestContext();
    const { apiKey, accountId } = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/products/", {
      apiKey,
      body: { externalId: "p1", name: "P1", price: 4, category: "c" },
    });
    await ctx.request("POST", "/api/v1/end-users/", { apiKey, body: { externalId: "vera" } });
    for (let i = 0; i < 2; i++) {
      const res = await ctx.request("POST", "/api/v1/recommendations/personalized/query", {
        apiKey,
        body: { external_user_id: "vera", limit: 5 },
      });
      expect(res.status).toBe(200);
    }
    expect(ctx.deps.recommendations.logs.pending).toBeGreaterThan(0);
    const exported = await ctx.request("GET", "/api/v1/end-users/external/vera/export", { apiKey });
    expect(exported.status).toBe(200);
    expect(exported.body.recommendations).toHaveLength(2);

    await ctx.request("POST", "/api/v1/recommendations/personalized/query", {
      apiKey,
      body: { external_user_id: "vera", limit: 5 },
    });
    const erased = await ctx.request("DELETE", "/api/v1/end-users/external/vera", { apiKey });
    expect(erased.status).toBe(200);
    expect(erased.body.deleted.recommendations).toBe(3);
    await ctx.deps.recommendations.logs.flush();
    const [left] = await ctx.deps.database.rows<{ n: number }>(
      sql`select count(*)::int as n from recommendation_logs where account_id = ${accountId}`,
    );
    expect(left!.n).toBe(0);
  });
});

describe("erasure leaves no external id in ingestion jobs", () => {
  test("record errors naming the user (as a user or as `user:product`) are removed; others stay", async () => {
    const ctx = await sharedTestContext();
    const { apiKey, accountId } = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/end-users/", { apiKey, body: { externalId: "victim" } });
    const accepted = await ctx.request("POST", "/api/v1/ingestion/batch", {
      apiKey,
      body: {
        products: [{ externalId: "p1", name: "P1", price: 1, category: "c" }],
        users: [{ externalId: "victim", priceRangeMin: -5 }],
        interactions: [
          { external_user_id: "victim", external_product_id: "ghost", interaction_type: "VIEW", value: 1 },
          { external_user_id: "bystander", external_product_id: "ghost", interaction_type: "VIEW", value: 1 },
        ],
      },
    });
    expect(accepted.status).toBe(202);
    const done = await finished(ctx, apiKey, accepted.body.jobId);
    const ids = (body: { errors: { externalId: string }[] }) => body.errors.map((e) => e.externalId).sort();
    expect(ids(done.body)).toEqual(["bystander:ghost", "victim", "victim:ghost"]);

    const erased = await ctx.request("DELETE", "/api/v1/end-users/external/victim", { apiKey });
    expect(erased.status).toBe(200);
    const after = await ctx.request("GET", `/api/v1/ingestion/batch/${accepted.body.jobId}`, { apiKey });
    expect(ids(after.body)).toEqual(["bystander:ghost"]);
    const [raw] = await ctx.deps.database.rows<{ text: string }>(
      sql`select errors::text || coalesce(payload::text, '') as text from ingestion_jobs where account_id = ${accountId}`,
    );
    expect(raw!.text).not.toContain("victim");
  });

  test("a job that fails for good drops its stored request; erasure clears one left on a finished job", async () => {
    const ctx = await sharedTestContext();
    const { apiKey, accountId } = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/end-users/", { apiKey, body: { externalId: "victim" } });
    const body = { users: [{ externalId: "victim", attributes: { city: "Springfield" } }] };
    // A job a worker holds (claimed by this test, so no other worker of the shared store takes it).
    const [row] = await ctx.deps.database.rows<{ id: number }>(
      sql`insert into ingestion_jobs (account_id, task_id, status, payload, total_users, claimed_by, heartbeat_at, attempts)
          values (${accountId}, ${crypto.randomUUID()}, 'processing', ${JSON.stringify(body)}::jsonb, 1,
                  'test-worker', now(), 1)
          returning id::int as id`,
    );
    const jobId = row!.id;
    const payloadOf = async () =>
      (
        await ctx.deps.database.rows<{ payload: unknown; status: string }>(
          sql`select payload, status from ingestion_jobs where id = ${jobId}`,
        )
      )[0]!;
    expect((await payloadOf()).payload).not.toBeNull();
    await ingestionQueue.fail(
      ctx.deps.database,
      { id: jobId, accountId, attempts: 1 },
      "test-worker",
      "a test failure",
    );
    expect(await payloadOf()).toEqual({ payload: null, status: "failed" });

    // A finished job still holding a request (as rows written by older versions do) is cleared too.
    await ctx.deps.database.rows(
      sql`update ingestion_jobs set payload = ${JSON.stringify(body)}::jsonb where id = ${jobId}`,
    );
    expect((await ctx.request("DELETE", "/api/v1/end-users/external/victim", { apiKey })).status).toBe(200);
    expect((await payloadOf()).payload).toBeNull();
  });
});
