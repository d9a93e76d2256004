import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { sql } from "drizzle-orm";
import { answerLabels } from "../../src/modules/recommendations/respond";
import {
  EMBEDDED_FLUSH_AT,
  RecommendationLogQueue,
} from "../../src/modules/recommendations/serving/log-queue";
import { sharedTestContext } from "../helpers/context";
import { expectAuthRequired } from "../helpers/security";
import { catalogue, createShop, deleteProduct, ids, interact } from "./fixtures";

// Each test signs up a tenant and builds its catalogue through the API; shared machines are slow.
setDefaultTimeout(60_000);

const CATEGORY = "/api/v1/recommendations/category";
const similar = (id: string) => `/api/v1/recommendations/products/external/${id}/similar`;

describe("GET /recommendations/category/{category}", () => {
  test("includes sub-categories, plain or %2F-encoded, and sorts by popularity by default", async () => {
    const ctx = await sharedTestContext();
    const { tenant, byId } = await createShop(ctx);
    await interact(ctx, tenant, "a", "p7", "PURCHASE");
    const res = await ctx.request("GET", `${CATEGORY}/electronics`, { apiKey: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(12);
    expect(res.body.limit).toBe(100);
    expect(res.body.items[0].externalId).toBe("p7");
    for (const id of ids(res.body)) expect(byId.get(id)!.category.startsWith("electronics/")).toBe(true);
    const plain = await ctx.request("GET", `${CATEGORY}/electronics/phones`, { apiKey: tenant.apiKey });
    const encoded = await ctx.request("GET", `${CATEGORY}/electronics%2Fphones`, { apiKey: tenant.apiKey });
    expect(plain.status).toBe(200);
    expect(plain.body.total).toBe(6);
    expect(ids(encoded.body)).toEqual(ids(plain.body));
  });

  test("sorts by price both ways and by mean rating, and pages", async () => {
    const ctx = await sharedTestContext();
    const { tenant, byId } = await createShop(ctx);
    const asc = await ctx.request("GET", `${CATEGORY}/books`, {
      apiKey: tenant.apiKey,
      query: { sort_by: "price_asc" },
    });
    const prices = ids(asc.body).map((id) => byId.get(id)!.price);
    expect(prices).toEqual([...prices].sort((a, b) => a - b));
    const desc = await ctx.request("GET", `${CATEGORY}/books`, {
      apiKey: tenant.apiKey,
      query: { sort_by: "price_desc" },
    });
    expect(ids(desc.body)).toEqual([...ids(asc.body)].reverse());
    await interact(ctx, tenant, "r1", "p3", "RATING", 2);
    await interact(ctx, tenant, "r1", "p4", "RATING", 5);
    await interact(ctx, tenant, "r2", "p4", "RATING", 4);
    const rated = await ctx.request("GET", `${CATEGORY}/books`, {
      apiKey: tenant.apiKey,
      query: { sort_by: "rating" },
    });
    expect(ids(rated.body).slice(0, 2)).toEqual(["p4", "p3"]);
    expect(rated.body.items[0].score).toBe(4.5);
    const page = await ctx.request("GET", `${CATEGORY}/books`, {
      apiKey: tenant.apiKey,
      query: { sort_by: "price_asc", skip: 2, limit: 3 },
    });
    expect(ids(page.body)).toEqual(ids(asc.body).slice(2, 5));
    expect(page.body.total).toBe(asc.body.total);
  });

  test("deleted products and other tenants' products are not listed; bad sort is 422", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(10));
    const other = await createShop(ctx, [
      { externalId: "x1", name: "X", price: 3, category: "books/fiction" },
    ]);
    await deleteProduct(ctx, tenant, "p3");
    const res = await ctx.request("GET", `${CATEGORY}/books`, { apiKey: tenant.apiKey });
    expect(ids(res.body)).not.toContain("p3");
    expect(ids(res.body)).not.toContain("x1");
    expect(ids(res.body).sort()).toEqual(["p4", "p8", "p9"]);
    const bad = await ctx.request("GET", `${CATEGORY}/books`, {
      apiKey: other.tenant.apiKey,
      query: { sort_by: "nope" },
    });
    expect(bad.status).toBe(422);
    await expectAuthRequired(ctx, "GET", `${CATEGORY}/books`);
  });
});

describe("GET /recommendations/products/external/{id}/similar without a model", () => {
  test("lists related products without the product itself", async () => {
    const ctx = await sharedTestContext();
    const { tenant, byId } = await createShop(ctx);
    const res = await ctx.request("GET", similar("p1"), {
      apiKey: tenant.apiKey,
      query: { limit: 5, include_explanation: true },
    });
    expect(res.status).toBe(200);
    expect(ids(res.body)).not.toContain("p1");
    expect(res.body.items).toHaveLength(5);
    expect(byId.get(res.body.items[0].externalId)!.category).toBe("electronics/phones");
    expect(res.body.items[0].explanation).toContain("Product 1");
  });

  test("unknown, deleted and other tenants' products answer 404", async () => {
    const ctx = await sharedTestContext();
    const a = await createShop(ctx, catalogue(4));
    const b = await createShop(ctx, [{ externalId: "b1", name: "B", price: 3, category: "books/fiction" }]);
    expect((await ctx.request("GET", similar("nope"), { apiKey: a.tenant.apiKey })).status).toBe(404);
    expect((await ctx.request("GET", similar("b1"), { apiKey: a.tenant.apiKey })).status).toBe(404);
    await deleteProduct(ctx, a.tenant, "p2");
    const deleted = await ctx.request("GET", similar("p2"), { apiKey: a.tenant.apiKey });
    expect(deleted.status).toBe(404);
    expect(deleted.body.errorCode).toBe("NOT_FOUND");
    const bad = await ctx.request("GET", similar("b1"), {
      apiKey: b.tenant.apiKey,
      query: { explanation_level: "x" },
    });
    expect(bad.status).toBe(422);
    await expectAuthRequired(ctx, "GET", similar("p1"));
  });
});

/** A log entry as `respond` queues one, for an endpoint without strategy, variant or experiment. */
const logEntry = (
  accountId: number,
  endUserId: number | null,
  endpoint: string,
  items: readonly string[],
) => ({
  accountId,
  endUserId,
  recommendationId: crypto.randomUUID(),
  labels: answerLabels(endpoint),
  items,
});

describe("recommendation logs", () => {
  test("a queued entry of an end user erased before the flush is dropped; the rest of the batch is written", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(3));
    await interact(ctx, tenant, "stays", "p1");
    await interact(ctx, tenant, "goes", "p1");
    const ids = await ctx.deps.database.rows<{ id: number | string; external_id: string }>(sql`
      select id, external_id from end_users where account_id = ${tenant.accountId}`);
    const idOf = (external: string) => Number(ids.find((r) => r.external_id === external)!.id);
    const logs = ctx.deps.recommendations.logs;
    for (const user of ["stays", "goes"]) {
      logs.enqueue(logEntry(tenant.accountId, idOf(user), "test", ["p2"]));
    }
    // Erased behind the queue's back (as another process would), so the queued entry is still there.
    await ctx.deps.database.db.execute(sql`delete from end_users where id = ${idOf("goes")}`);
    const errorsBefore = ctx.logs.filter((line) => line.includes("recommendation log flush failed")).length;
    await logs.flush();
    const rows = await ctx.deps.database.rows<{ end_user_id: number | string }>(sql`
      select end_user_id from recommendation_logs where account_id = ${tenant.accountId} and endpoint = 'test'`);
    expect(rows.map((r) => Number(r.end_user_id))).toEqual([idOf("stays")]);
    expect(ctx.logs.filter((line) => line.includes("recommendation log flush failed")).length).toBe(
      errorsBefore,
    );
  });

  test("a full queue is written without waiting for the timer, sooner on the embedded store", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(3));
    const flushAt = ctx.deps.database.kind === "pglite" ? EMBEDDED_FLUSH_AT : 2000;
    // A queue of its own (no timer): only the size can start its write.
    const queue = new RecommendationLogQueue(ctx.deps.database, ctx.deps.logger, {
      ...(ctx.deps.database.kind === "pglite" ? { flushAt: EMBEDDED_FLUSH_AT } : {}),
    });
    const count = async () =>
      (
        await ctx.deps.database.rows<{ n: number }>(sql`
          select count(*)::int as n from recommendation_logs
          where account_id = ${tenant.accountId} and endpoint = 'early'`)
      )[0]!.n;
    for (let i = 0; i < flushAt - 1; i++) queue.enqueue(logEntry(tenant.accountId, null, "early", ["p1"]));
    await Bun.sleep(50);
    expect(queue.pending).toBe(flushAt - 1);
    queue.enqueue(logEntry(tenant.accountId, null, "early", ["p1"]));
    expect(queue.pending).toBe(0);
    await queue.flush();
    expect(await count()).toBe(flushAt);
  });

  test("a flush that meets an erasure still in progress waits for it and writes nothing for the erased user", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(3));
    await interact(ctx, tenant, "stays", "p1");
    await interact(ctx, tenant, "goes", "p1");
    const idOf = await endUserIds(ctx, tenant.accountId);
    const logs = ctx.deps.recommendations.logs;
    for (const user of ["stays", "goes"]) {
      logs.enqueue(logEntry(tenant.accountId, idOf(user), "race", ["p2"]));
    }
    const committed = Promise.withResolvers<void>();
    const userDeleted = Promise.withResolvers<void>();
    // The erasure deletes the user and holds its transaction open while the flush starts.
    const erasing = ctx.deps.database.db.transaction(async (tx) => {
      await tx.execute(sql`delete from end_users where id = ${idOf("goes")}`);
      userDeleted.resolve();
      await committed.promise;
    });
    await userDeleted.promise;
    const flushing = logs.flush();
    await Bun.sleep(100);
    committed.resolve();
    await erasing;
    await flushing;
    const rows = await ctx.deps.database.rows<{ end_user_id: number | string }>(sql`
      select end_user_id from recommendation_logs where account_id = ${tenant.accountId} and endpoint = 'race'`);
    expect(rows.map((r) => Number(r.end_user_id))).toEqual([idOf("stays")]);
  });

  test("an erasure that meets a log write still in progress waits for it and deletes what it wrote", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(3));
    await interact(ctx, tenant, "goes", "p1");
    const idOf = await endUserIds(ctx, tenant.accountId);
    const committed = Promise.withResolvers<void>();
    const rowWritten = Promise.withResolvers<void>();
    // A writer as the log queue is one: the account's lock held shared, the row inserted, not yet committed.
    const writing = ctx.deps.database.db.transaction(async (tx) => {
      await tx.execute(
        sql`select pg_advisory_xact_lock_shared(hashtext('recommendation_logs'), ${tenant.accountId})`,
      );
      await tx.execute(sql`insert into recommendation_logs (account_id, end_user_id, endpoint, items)
        values (${tenant.accountId}, ${idOf("goes")}, 'race', '["p2"]')`);
      rowWritten.resolve();
      await committed.promise;
    });
    await rowWritten.promise;
    const erasing = ctx.request("DELETE", "/api/v1/end-users/external/goes", { apiKey: tenant.apiKey });
    await Bun.sleep(100);
    committed.resolve();
    await writing;
    expect((await erasing).status).toBe(200);
    const rows = await ctx.deps.database.rows(
      sql`select 1 from recommendation_logs where account_id = ${tenant.accountId}`,
    );
    expect(rows).toHaveLength(0);
  });

  test("item ids are stored exactly as shown, whatever their characters, once per response", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(2));
    await interact(ctx, tenant, "quoted", "p1");
    const [user] = await ctx.deps.database.rows<{ id: number | string }>(sql`
      select id from end_users where account_id = ${tenant.accountId} and external_id = 'quoted'`);
    const shown = ['say "hi"', "back\\slash", "naïve ☕", "tab\tline\nbreak", "</script>"];
    const logs = ctx.deps.recommendations.logs;
    // The same list object twice, as a page served again from the page cache is logged.
    for (let n = 0; n < 2; n++)
      logs.enqueue(logEntry(tenant.accountId, Number(user!.id), 'odd "name"', shown));
    await logs.flush();
    const rows = await ctx.deps.database.rows<{ endpoint: string; items: string }>(sql`
      select endpoint, items from recommendation_logs where account_id = ${tenant.accountId} order by id`);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.endpoint).toBe('odd "name"');
      expect(JSON.parse(row.items)).toEqual(shown);
    }
  });

  test("each response is logged per existing end user in the background", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(5));
    await interact(ctx, tenant, "logged", "p1");
    const res = await ctx.request("POST", "/api/v1/recommendations/personalized/query", {
      apiKey: tenant.apiKey,
      body: { external_user_id: "logged", limit: 2 },
    });
    await ctx.request("POST", "/api/v1/recommendations/personalized/query", {
      apiKey: tenant.apiKey,
      body: { external_user_id: "never-seen", limit: 2 },
    });
    await ctx.deps.recommendations.logs.flush();
    const rows = await ctx.deps.database.rows<{ endpoint: string; items: string; external_id: string }>(sql`
      select l.endpoint, l.items, u.external_id from recommendation_logs l join end_users u on u.id = l.end_user_id
      where l.account_id = ${tenant.accountId}`);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.external_id).toBe("logged");
    expect(rows[0]!.endpoint).toBe("personalized/query");
    expect(JSON.parse(rows[0]!.items)).toEqual(ids(res.body));
  });

  test("a deleted account takes its logs with it (through its end users' delete trigger)", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(3));
    await interact(ctx, tenant, "shopper", "p1");
    await ctx.request("POST", "/api/v1/recommendations/personalized/query", {
      apiKey: tenant.apiKey,
      body: { external_user_id: "shopper", limit: 2 },
    });
    await ctx.deps.recommendations.logs.flush();
    const count = async () =>
      (
        await ctx.deps.database.rows<{ n: number }>(sql`
          select count(*)::int as n from recommendation_logs where account_id = ${tenant.accountId}`)
      )[0]!.n;
    expect(await count()).toBe(1);
    await ctx.deps.database.db.execute(sql`delete from accounts where id = ${tenant.accountId}`);
    expect(await count()).toBe(0);
  });

  test("an erased end user is forgotten: no cached history, no queued logs; an answer for their id afterwards is for nobody", async () => {
    const ctx = await sharedTestContext();
    const { tenant } = await createShop(ctx, catalogue(4));
    await interact(ctx, tenant, "gone", "p1", "PURCHASE");
    const body = { external_user_id: "gone", limit: 10 };
    const before = await ctx.request("POST", "/api/v1/recommendations/personalized/query", {
      apiKey: tenant.apiKey,
      body,
    });
    expect(ids(before.body)).not.toContain("p1");
    const erased = await ctx.request("DELETE", "/api/v1/end-users/external/gone", { apiKey: tenant.apiKey });
    expect(erased.status).toBe(200);
    const after = await ctx.request("POST", "/api/v1/recommendations/personalized/query", {
      apiKey: tenant.apiKey,
      body,
    });
    expect(ids(after.body)).toContain("p1");
    await ctx.deps.recommendations.logs.flush();
    const rows = await ctx.deps.database.rows<{ end_user_id: number | null }>(
      sql`select end_user_id from recommendation_logs where account_id = ${tenant.accountId}`,
    );
    // The later answer went to an unknown user: logged (for attribution by its id) without an end user.
    expect(rows).toEqual([{ end_user_id: null }]);
  });
});

async function endUserIds(
  ctx: Awaited<ReturnType<typeof sharedTestContext>>,
  accountId: number,
): Promise<(externalId: string) => number> {
  const rows = await ctx.deps.database.rows<{ id: number | string; external_id: string }>(sql`
    select id, external_id from end_users where account_id = ${accountId}`);
  return (externalId) => Number(rows.find((r) => r.external_id === externalId)!.id);
}
