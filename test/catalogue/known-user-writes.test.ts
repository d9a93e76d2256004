import { beforeAll, describe, expect, test } from "bun:test";
import type { SQL } from "drizzle-orm";
import { sql } from "drizzle-orm";
import { type Database, type DbOrTx, openDatabase } from "../../src/db/client";
import { type KnownUserInteraction, KnownUserWriter } from "../../src/modules/interactions/known-user-writes";
import { sharedTestContext, type TestContext } from "../helpers/context";
import { registerTenant } from "../helpers/tenant";

// Opening the store and applying migrations can take a while on a busy machine.
beforeAll(() => sharedTestContext().then(() => undefined), 120_000);

/** The real database, with the statements it was handed counted. */
function counting(database: Database): { database: Pick<Database, "rows">; statements: () => number } {
  let statements = 0;
  return {
    database: {
      rows: <T>(query: SQL, on?: DbOrTx) => {
        statements++;
        return database.rows<T>(query, on);
      },
    },
    statements: () => statements,
  };
}

async function tenantWith(ctx: TestContext, users: number, products: number) {
  const { apiKey, accountId } = await registerTenant(ctx);
  for (let p = 0; p < products; p++) {
    const res = await ctx.request("POST", "/api/v1/products/", {
      apiKey,
      body: { externalId: `p${p}`, name: `p${p}`, price: 10 + p, category: "c" },
    });
    expect(res.status).toBe(201);
  }
  for (let u = 0; u < users; u++) {
    const res = await ctx.request("POST", "/api/v1/interactions/", {
      apiKey,
      body: { external_user_id: `u${u}`, external_product_id: "p0", interaction_type: "VIEW" },
    });
    expect(res.status).toBe(200);
  }
  return { apiKey, accountId };
}

const view = (accountId: number, u: string, p: string, value = 1): KnownUserInteraction => ({
  accountId,
  externalUserId: u,
  externalProductId: p,
  type: "VIEW",
  value,
  query: null,
  occurredAt: new Date(),
});

async function storedRow(database: Database, id: number) {
  const [row] = await database.rows<{ account_id: number; u: string; p: string; value: number }>(sql`
    select i.account_id, eu.external_id as u, p.external_id as p, i.value
    from interactions i join end_users eu on eu.id = i.end_user_id join products p on p.id = i.product_id
    where i.id = ${id}`);
  return row;
}

describe("KnownUserWriter", () => {
  test("interactions arriving together are written in a few statements, each row back to its caller", async () => {
    const ctx = await sharedTestContext();
    const { accountId } = await tenantWith(ctx, 6, 4);
    const { database, statements } = counting(ctx.deps.database);
    const writer = new KnownUserWriter(database, 1);
    const wanted = Array.from({ length: 24 }, (_, i) => view(accountId, `u${i % 6}`, `p${i % 4}`, i + 1));
    const rows = await Promise.all(wanted.map((w) => writer.record(w)));
    // The first is written at once, the rest while it is under way: two statements, not 24.
    expect(statements()).toBe(2);
    expect(new Set(rows.map((r) => r?.id)).size).toBe(24);
    for (let i = 0; i < wanted.length; i++) {
      const stored = await storedRow(ctx.deps.database, rows[i]!.id);
      expect(stored).toEqual({ account_id: accountId, u: `u${i % 6}`, p: `p${i % 4}`, value: i + 1 });
    }
  }, 60_000);

  test("a batch keeps every value as given: ids and queries with any characters, times to the millisecond", async () => {
    const ctx = await sharedTestContext();
    const { apiKey, accountId } = await registerTenant(ctx);
    const odd = ['quote"d', "back\\slash", "{brace},comma", "NULL", "ünïcödé ✓", "tab\there"];
    for (const id of odd) {
      const product = await ctx.request("POST", "/api/v1/products/", {
        apiKey,
        body: { externalId: `p-${id}`, name: id, price: 1, category: "c" },
      });
      expect(product.status).toBe(201);
      const user = await ctx.request("POST", "/api/v1/interactions/", {
        apiKey,
        body: { external_user_id: `u-${id}`, external_product_id: `p-${id}`, interaction_type: "VIEW" },
      });
      expect(user.status).toBe(200);
    }
    const { database, statements } = counting(ctx.deps.database);
    const writer = new KnownUserWriter(database, 1);
    const wanted: KnownUserInteraction[] = odd.map((id, i) => ({
      accountId,
      externalUserId: `u-${id}`,
      externalProductId: `p-${odd[(i + 1) % odd.length]}`,
      type: i % 2 === 0 ? "SEARCH" : "RATING",
      value: i + 0.25,
      query: i % 2 === 0 ? `q ${id}\nline` : null,
      occurredAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 100 + i)),
    }));
    // The first alone, the rest as one batch.
    const rows = await Promise.all(wanted.map((w) => writer.record(w)));
    expect(statements()).toBe(2);
    for (let i = 0; i < wanted.length; i++) {
      const [stored] = await ctx.deps.database.rows<{
        u: string;
        p: string;
        type: string;
        value: number;
        query: string | null;
        at: number;
      }>(sql`
        select eu.external_id as u, p.external_id as p, i.interaction_type as type, i.value, i.query,
               (extract(epoch from i.occurred_at) * 1000)::float8 as at
        from interactions i join end_users eu on eu.id = i.end_user_id join products p on p.id = i.product_id
        where i.id = ${rows[i]!.id}`);
      const w = wanted[i]!;
      expect(stored).toEqual({
        u: w.externalUserId,
        p: w.externalProductId,
        type: w.type,
        value: w.value,
        query: w.query,
        at: w.occurredAt.getTime(),
      });
    }
  }, 60_000);

  test("a missing end user or product is undefined for its caller alone", async () => {
    const ctx = await sharedTestContext();
    const { accountId } = await tenantWith(ctx, 2, 2);
    const other = await tenantWith(ctx, 2, 2);
    const writer = new KnownUserWriter(ctx.deps.database, 1);
    const rows = await Promise.all([
      writer.record(view(accountId, "u0", "p0")),
      writer.record(view(accountId, "u0", "p0")),
      writer.record(view(accountId, "nobody", "p1")),
      writer.record(view(accountId, "u1", "no-such-product")),
      // Another account's end user and product are not this account's.
      writer.record(view(other.accountId, "u1", "p1")),
      writer.record(view(accountId, "u1", "p1")),
    ]);
    expect(rows.map((r) => r === undefined)).toEqual([false, false, true, true, false, false]);
    expect((await storedRow(ctx.deps.database, rows[4]!.id))?.account_id).toBe(other.accountId);
    expect((await storedRow(ctx.deps.database, rows[5]!.id))?.u).toBe("u1");
  }, 60_000);

  test("a batch that fails is written one by one: only the failing caller sees the error", async () => {
    const ctx = await sharedTestContext();
    const { accountId } = await tenantWith(ctx, 3, 1);
    const writer = new KnownUserWriter(ctx.deps.database, 1);
    // Text holding a NUL byte, which Postgres refuses, makes the batch statement fail.
    const results = await Promise.allSettled([
      writer.record(view(accountId, "u0", "p0")),
      writer.record(view(accountId, "u1", "p0")),
      writer.record({ ...view(accountId, "u2", "p0"), query: "bad\u0000query" }),
      writer.record(view(accountId, "u2", "p0", 7)),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    const last = results[3] as PromiseFulfilledResult<{ id: number } | undefined>;
    expect((await storedRow(ctx.deps.database, last.value!.id))?.value).toBe(7);
  }, 60_000);

  test("a batch lost with the store is not written again one by one: each caller gets the error", async () => {
    const closed = await openDatabase({ dataDir: "memory://" });
    await closed.close();
    const { database, statements } = counting(closed);
    const writer = new KnownUserWriter(database, 1);
    const results = await Promise.allSettled([
      writer.record(view(1, "u0", "p0")),
      writer.record(view(1, "u1", "p0")),
      writer.record(view(1, "u2", "p0")),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
    // The lone first write, then the other two together; no third and fourth statement.
    expect(statements()).toBe(2);
  }, 60_000);
});

describe("POST /api/v1/interactions/ under concurrency", () => {
  test("concurrent interactions are all recorded, each answer naming its own row", async () => {
    const ctx = await sharedTestContext();
    const { apiKey } = await tenantWith(ctx, 5, 3);
    const bodies = Array.from({ length: 30 }, (_, i) => ({
      external_user_id: i === 7 ? "brand-new" : `u${i % 5}`,
      external_product_id: i === 11 ? "missing" : `p${i % 3}`,
      interaction_type: "click",
      value: i + 1,
    }));
    const answers = await Promise.all(
      bodies.map((body) => ctx.request("POST", "/api/v1/interactions/", { apiKey, body })),
    );
    expect(answers.map((a) => a.status)).toEqual(bodies.map((_, i) => (i === 11 ? 404 : 200)));
    for (let i = 0; i < bodies.length; i++) {
      if (i === 11) continue;
      const body = answers[i]!.body as { id: number; value: number; external_user_id: string };
      expect(body.value).toBe(i + 1);
      expect(body.external_user_id).toBe(bodies[i]!.external_user_id);
      const stored = await storedRow(ctx.deps.database, body.id);
      expect(stored).toMatchObject({
        u: bodies[i]!.external_user_id,
        p: bodies[i]!.external_product_id,
        value: i + 1,
      });
    }
  }, 60_000);
});
