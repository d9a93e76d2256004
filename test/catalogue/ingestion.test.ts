import { beforeAll, describe, expect, test } from "bun:test";
import { sharedTestContext, type TestContext } from "../helpers/context";
import { expectAuthRequired, expectOtherTenantNotFound, expectPublishableRefused } from "../helpers/security";
import { registerTenant } from "../helpers/tenant";

// Opening the store and applying migrations can take a while on a busy machine.
beforeAll(() => sharedTestContext().then(() => undefined), 120_000);

async function finished(ctx: TestContext, apiKey: string, jobId: number) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await ctx.request("GET", `/api/v1/ingestion/batch/${jobId}`, { apiKey });
    if (res.body.status !== "processing" || Date.now() > deadline) return res;
    await Bun.sleep(50);
  }
}

describe("POST /api/v1/ingestion/batch", () => {
  test("applies the valid records of a mixed batch, reports each invalid one, and answers 207", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    const accepted = await ctx.request("POST", "/api/v1/ingestion/batch", {
      apiKey,
      body: {
        products: [
          { externalId: "p1", name: "Phone", price: 100, category: "electronics/phones", brand: "Acme" },
          { externalId: "p2", name: "Case", price: 0, category: "electronics" },
          { externalId: "p3", price: 5, category: "books" },
          { externalId: "p4", name: "Book", price: 5, category: "books" },
        ],
        users: [
          { externalId: "u1", preferredCategories: ["books"] },
          { externalId: "u2", priceRangeMin: -5 },
        ],
        interactions: [
          { external_user_id: "u1", external_product_id: "p1", interaction_type: "purchase", value: 180 },
          {
            external_user_id: "u9",
            external_product_id: "p4",
            interaction_type: "SEARCH",
            value: 1,
            query: "novel",
          },
          { external_user_id: "u1", external_product_id: "p2", interaction_type: "VIEW", value: 1 },
          { external_user_id: "u1", external_product_id: "p4", interaction_type: "HUG", value: 1 },
          { external_user_id: "u1", external_product_id: "p4", interaction_type: "RATING", value: 0 },
        ],
      },
    });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({
      message: expect.any(String),
      status: "processing",
      jobId: expect.any(Number),
      taskId: expect.any(String),
      totalUsers: 2,
      totalProducts: 4,
      totalInteractions: 5,
    });

    const job = await finished(ctx, apiKey, accepted.body.jobId);
    expect(job.status).toBe(207);
    expect(job.body).toMatchObject({
      jobId: accepted.body.jobId,
      taskId: accepted.body.taskId,
      status: "completed_with_errors",
      processedProducts: 4,
      processedUsers: 2,
      processedInteractions: 5,
      failureReason: null,
    });
    expect(job.body.finishedAt).toEqual(expect.any(String));
    expect(job.body.estimatedCompletionAt).toBe(job.body.finishedAt);
    const errors = job.body.errors as { recordType: string; externalId: string; errorMessage: string }[];
    expect(errors.map((e) => [e.recordType, e.externalId])).toEqual([
      ["product", "p2"],
      ["product", "p3"],
      ["user", "u2"],
      ["interaction", "u1:p4"],
      ["interaction", "u1:p4"],
      ["interaction", "u1:p2"],
    ]);
    expect(errors[0]!.errorMessage).toContain("price");
    expect(errors[1]!.errorMessage).toContain("name");
    expect(errors[5]!.errorMessage).toContain("not found");

    // The valid part is readable through the single-record routes.
    expect((await ctx.request("GET", "/api/v1/products/external/p1", { apiKey })).body.brand).toBe("Acme");
    expect((await ctx.request("GET", "/api/v1/products/external/p2", { apiKey })).status).toBe(404);
    expect(
      (await ctx.request("GET", "/api/v1/end-users/external/u1", { apiKey })).body.preferredCategories,
    ).toEqual(["books"]);
    expect((await ctx.request("GET", "/api/v1/end-users/external/u2", { apiKey })).status).toBe(404);
    const u1 = await ctx.request("GET", "/api/v1/end-users/external/u1/export", { apiKey });
    expect(u1.body.interactions.map((i: { interaction_type: string }) => i.interaction_type)).toEqual([
      "PURCHASE",
    ]);
    expect(u1.body.orders).toEqual([
      { external_product_id: "p1", quantity: 1, unit_price: 180, timestamp: expect.any(String) },
    ]);
    // An interaction's unknown end user is created; its SEARCH is recorded as a search.
    const u9 = await ctx.request("GET", "/api/v1/end-users/external/u9/export", { apiKey });
    expect(u9.body.searches).toEqual([
      { query: "novel", external_product_id: "p4", timestamp: expect.any(String) },
    ]);
  }, 60_000);

  test("a fully valid batch upserts (updates existing, revives deleted) and completes with 200", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    await ctx.request("POST", "/api/v1/products/", {
      apiKey,
      body: { externalId: "old", name: "Old", price: 1, category: "a" },
    });
    await ctx.request("POST", "/api/v1/products/", {
      apiKey,
      body: { externalId: "dead", name: "Dead", price: 1, category: "a" },
    });
    await ctx.request("DELETE", "/api/v1/products/external/dead", { apiKey });
    await ctx.request("POST", "/api/v1/end-users/", {
      apiKey,
      body: { externalId: "u", attributes: { a: 1 } },
    });
    const accepted = await ctx.request("POST", "/api/v1/ingestion/batch", {
      apiKey,
      body: {
        products: [
          { externalId: "old", name: "Renamed", price: 2, category: "a/b" },
          { externalId: "dead", name: "Alive", price: 3, category: "a" },
          { externalId: "dup", name: "First", price: 1, category: "a" },
          { externalId: "dup", name: "Second", price: 1, category: "a" },
        ],
        users: [{ externalId: "u", attributes: { a: 2 } }],
      },
    });
    expect(accepted.status).toBe(202);
    expect(accepted.body.totalInteractions).toBe(0);
    const job = await finished(ctx, apiKey, accepted.body.jobId);
    expect(job.status).toBe(200);
    expect(job.body.status).toBe("completed");
    expect(job.body.errors).toEqual([]);
    expect((await ctx.request("GET", "/api/v1/products/external/old", { apiKey })).body.name).toBe("Renamed");
    expect((await ctx.request("GET", "/api/v1/products/external/dead", { apiKey })).body.name).toBe("Alive");
    expect((await ctx.request("GET", "/api/v1/products/external/dup", { apiKey })).body.name).toBe("Second");
    expect((await ctx.request("GET", "/api/v1/end-users/external/u", { apiKey })).body.attributes).toEqual({
      a: 2,
    });
    const list = await ctx.request("GET", "/api/v1/products/", { apiKey, query: { category: "a" } });
    expect(list.body.total).toBe(3);
  }, 60_000);

  test("the envelope is checked before any work: over 1000 records, non-object records, unknown keys → 422", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    const tooMany = Array.from({ length: 1001 }, (_, i) => ({ externalId: `u${i}` }));
    for (const body of [
      { users: tooMany },
      { products: ["not an object"] },
      { products: [], extra: [] },
      { users: {} },
    ]) {
      const res = await ctx.request("POST", "/api/v1/ingestion/batch", { apiKey, body });
      expect(res.status).toBe(422);
      expect(res.body.errorCode).toBe("VALIDATION_ERROR");
    }
    const jobs = await ctx.request("GET", "/api/v1/ingestion/batch", { apiKey });
    expect(jobs.body).toEqual([]);
  }, 30_000);

  test("a body over 10 MB is refused with 413 PAYLOAD_TOO_LARGE", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    const body = JSON.stringify({ products: [{ externalId: "p", name: "x".repeat(11 * 1024 * 1024) }] });
    // In-process requests carry no Content-Length by themselves; a real client (and Bun's server) sends it.
    const res = await ctx.request("POST", "/api/v1/ingestion/batch", {
      apiKey,
      body,
      headers: { "content-length": String(Buffer.byteLength(body)) },
    });
    expect(res.status).toBe(413);
    expect(res.body.errorCode).toBe("PAYLOAD_TOO_LARGE");
  }, 30_000);

  test("requires credentials and refuses publishable keys", async () => {
    const ctx = await sharedTestContext();
    await expectAuthRequired(ctx, "POST", "/api/v1/ingestion/batch", { body: { users: [] } });
    await expectPublishableRefused(ctx, "POST", "/api/v1/ingestion/batch", { body: { users: [] } });
  }, 30_000);
});

describe("GET /api/v1/ingestion/batch[/{job_id}]", () => {
  test("lists the account's jobs newest first with limit and status filters", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    const ids: number[] = [];
    for (const price of [1, 0, 2]) {
      const res = await ctx.request("POST", "/api/v1/ingestion/batch", {
        apiKey,
        body: { products: [{ externalId: `p${price}`, name: "n", price, category: "c" }] },
      });
      ids.push(res.body.jobId);
      await finished(ctx, apiKey, res.body.jobId);
    }
    const all = await ctx.request("GET", "/api/v1/ingestion/batch", { apiKey });
    expect(all.status).toBe(200);
    expect(all.body.map((j: { jobId: number }) => j.jobId)).toEqual([...ids].reverse());
    const limited = await ctx.request("GET", "/api/v1/ingestion/batch", { apiKey, query: { limit: 1 } });
    expect(limited.body.map((j: { jobId: number }) => j.jobId)).toEqual([ids[2]]);
    const withErrors = await ctx.request("GET", "/api/v1/ingestion/batch", {
      apiKey,
      query: { status: "completed_with_errors" },
    });
    expect(withErrors.body.map((j: { jobId: number }) => j.jobId)).toEqual([ids[1]]);
    for (const limit of [0, 101]) {
      expect((await ctx.request("GET", "/api/v1/ingestion/batch", { apiKey, query: { limit } })).status).toBe(
        422,
      );
    }
  }, 60_000);

  test("another account's job is 404 and absent from its list; unknown ids are 404; ids must be integers", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await registerTenant(ctx);
    const res = await ctx.request("POST", "/api/v1/ingestion/batch", {
      apiKey,
      body: { users: [{ externalId: "u" }] },
    });
    const path = `/api/v1/ingestion/batch/${res.body.jobId}`;
    await expectOtherTenantNotFound(ctx, "GET", path);
    const stranger = await registerTenant(ctx);
    expect((await ctx.request("GET", "/api/v1/ingestion/batch", { apiKey: stranger.apiKey })).body).toEqual(
      [],
    );
    expect((await ctx.request("GET", "/api/v1/ingestion/batch/999999999", { apiKey })).status).toBe(404);
    expect((await ctx.request("GET", "/api/v1/ingestion/batch/abc", { apiKey })).status).toBe(422);
    await expectAuthRequired(ctx, "GET", path);
    await expectPublishableRefused(ctx, "GET", path);
    await expectPublishableRefused(ctx, "GET", "/api/v1/ingestion/batch");
  }, 60_000);
});
