import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { IdRangePages } from "../../src/db/id-ranges";
import { sharedTestContext } from "../helpers/context";
import { registerTenant } from "../helpers/tenant";

describe("id-range pages", () => {
  test("cover every row of one account exactly once, however its ids interleave with another's", async () => {
    const ctx = await sharedTestContext();
    const database = ctx.deps.database;
    const a = await registerTenant(ctx);
    const b = await registerTenant(ctx);
    // Ids alternate in runs between the two accounts: account a holds a sparse, uneven share of the span.
    for (let run = 0; run < 6; run++) {
      const aRows = run % 2 === 0 ? 700 : 40;
      await database.rows(sql`insert into end_users (account_id, external_id)
        select ${a.accountId}, 'a-' || ${run} || '-' || g from generate_series(1, ${aRows}) g`);
      await database.rows(sql`insert into end_users (account_id, external_id)
        select ${b.accountId}, 'b-' || ${run} || '-' || g from generate_series(1, 1500) g`);
    }
    const expected = (
      await database.rows<{ id: number }>(
        sql`select id::float8 as id from end_users where account_id = ${a.accountId} order by id`,
      )
    ).map((r) => Number(r.id));

    const pages = await IdRangePages.of(database, "end_users", a.accountId, 200);
    const seen: number[] = [];
    let largest = 0;
    let previousTo = -Infinity;
    for (let range = pages.next(); range !== undefined; range = pages.next()) {
      expect(range.from).toBeGreaterThanOrEqual(previousTo);
      previousTo = range.to;
      const rows = await database.rows<{ id: number }>(sql`select id::float8 as id from end_users
        where account_id = ${a.accountId} and id >= ${range.from} and id < ${range.to} order by id`);
      pages.took(rows.length);
      largest = Math.max(largest, rows.length);
      seen.push(...rows.map((r) => Number(r.id)));
    }
    expect(seen).toEqual(expected);
    expect(pages.done).toBe(1);
    // Runs of other accounts' ids widen the span; a dense run after them halves it again.
    expect(largest).toBeLessThanOrEqual(8 * 200);
  }, 120_000);

  test("an account without rows has no pages", async () => {
    const ctx = await sharedTestContext();
    const tenant = await registerTenant(ctx);
    const pages = await IdRangePages.of(ctx.deps.database, "interactions", tenant.accountId, 100);
    expect(pages.next()).toBeUndefined();
    expect(pages.done).toBe(1);
  }, 120_000);
});
