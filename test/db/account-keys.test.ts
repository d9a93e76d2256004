import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { databaseErrorCode } from "../../src/db/errors";
import { sharedTestContext } from "../helpers/context";
import { rejectionOf } from "../helpers/rejection";
import { registerTenant } from "../helpers/tenant";

const FOREIGN_KEY_VIOLATION = "23503";
const refusal = async (insert: Promise<unknown>) => databaseErrorCode(await rejectionOf(insert));

/** Interactions, orders and searches name their end user and product by (account, id). */
describe("account-keyed rows", () => {
  test("a row naming another account's end user or product is refused by the database", async () => {
    const ctx = await sharedTestContext();
    const { database } = ctx.deps;
    const [mine, theirs] = await Promise.all([registerTenant(ctx), registerTenant(ctx)]);
    const seed = async (accountId: number) => {
      const [user] = await database.rows<{ id: number }>(
        sql`insert into end_users (account_id, external_id) values (${accountId}, 'u1') returning id`,
      );
      const [product] = await database.rows<{ id: number }>(sql`insert into products
        (account_id, external_id, name, price, category) values (${accountId}, 'p1', 'P', 1, 'c') returning id`);
      return { user: Number(user!.id), product: Number(product!.id) };
    };
    const own = await seed(mine.accountId);
    const other = await seed(theirs.accountId);
    const interaction = (user: number, product: number) =>
      database.rows(sql`insert into interactions (account_id, end_user_id, product_id, interaction_type, value, occurred_at)
        values (${mine.accountId}, ${user}, ${product}, 'VIEW', 1, now())`);

    await interaction(own.user, own.product);
    expect(await refusal(interaction(other.user, own.product))).toBe(FOREIGN_KEY_VIOLATION);
    expect(await refusal(interaction(own.user, other.product))).toBe(FOREIGN_KEY_VIOLATION);
    expect(
      await refusal(
        database.rows(sql`insert into orders (account_id, end_user_id, product_id, quantity, unit_price, occurred_at)
        values (${mine.accountId}, ${other.user}, ${own.product}, 1, 1, now())`),
      ),
    ).toBe(FOREIGN_KEY_VIOLATION);
    expect(
      await refusal(
        database.rows(sql`insert into searches (account_id, end_user_id, query, occurred_at)
        values (${mine.accountId}, ${other.user}, 'q', now())`),
      ),
    ).toBe(FOREIGN_KEY_VIOLATION);
  });

  test("deleting an end user or a product deletes its rows, and only its rows", async () => {
    const ctx = await sharedTestContext();
    const { database } = ctx.deps;
    const tenant = await registerTenant(ctx);
    const a = tenant.accountId;
    await database.rows(
      sql`insert into end_users (account_id, external_id) values (${a}, 'u1'), (${a}, 'u2')`,
    );
    await database.rows(sql`insert into products (account_id, external_id, name, price, category)
      values (${a}, 'p1', 'P', 1, 'c'), (${a}, 'p2', 'P', 1, 'c')`);
    await database.rows(sql`insert into interactions (account_id, end_user_id, product_id, interaction_type, value, occurred_at)
      select ${a}, u.id, p.id, 'VIEW', 1, now() from end_users u, products p
      where u.account_id = ${a} and p.account_id = ${a}`);
    const count = async () =>
      Number(
        (
          await database.rows<{ n: number }>(
            sql`select count(*)::int as n from interactions where account_id = ${a}`,
          )
        )[0]!.n,
      );
    expect(await count()).toBe(4);
    await database.rows(sql`delete from end_users where account_id = ${a} and external_id = 'u1'`);
    expect(await count()).toBe(2);
    await database.rows(sql`delete from products where account_id = ${a} and external_id = 'p1'`);
    expect(await count()).toBe(1);
  });

  test("deleting an account deletes its interactions, orders and searches, through its end users", async () => {
    const ctx = await sharedTestContext();
    const { database } = ctx.deps;
    const [gone, kept] = await Promise.all([registerTenant(ctx), registerTenant(ctx)]);
    const seed = async (a: number) => {
      await database.rows(sql`insert into end_users (account_id, external_id) values (${a}, 'u1')`);
      await database.rows(sql`insert into products (account_id, external_id, name, price, category)
        values (${a}, 'p1', 'P', 1, 'c')`);
      await database.rows(sql`insert into interactions (account_id, end_user_id, product_id, interaction_type, value, occurred_at)
        select ${a}, u.id, p.id, 'PURCHASE', 1, now() from end_users u, products p
        where u.account_id = ${a} and p.account_id = ${a}`);
      await database.rows(sql`insert into orders (account_id, end_user_id, product_id, quantity, unit_price, occurred_at)
        select ${a}, u.id, p.id, 1, 1, now() from end_users u, products p
        where u.account_id = ${a} and p.account_id = ${a}`);
      await database.rows(sql`insert into searches (account_id, end_user_id, query, occurred_at)
        select ${a}, u.id, 'q', now() from end_users u where u.account_id = ${a}`);
    };
    await seed(gone.accountId);
    await seed(kept.accountId);
    const rows = async (a: number) =>
      (
        await database.rows<{ n: number }>(sql`
          select (select count(*) from interactions where account_id = ${a})
               + (select count(*) from orders where account_id = ${a})
               + (select count(*) from searches where account_id = ${a}) as n`)
      ).map((row) => Number(row.n))[0];
    expect(await rows(gone.accountId)).toBe(3);
    await database.rows(sql`delete from accounts where id = ${gone.accountId}`);
    expect(await rows(gone.accountId)).toBe(0);
    expect(await rows(kept.accountId)).toBe(3);
  });

  test("an event row's account is held to an existing one by its end user's key", async () => {
    const ctx = await sharedTestContext();
    const { database } = ctx.deps;
    const tenant = await registerTenant(ctx);
    const [user] = await database.rows<{ id: number }>(
      sql`insert into end_users (account_id, external_id) values (${tenant.accountId}, 'u1') returning id`,
    );
    const [{ nobody }] = (await database.rows<{ nobody: number }>(
      sql`select coalesce(max(id), 0) + 1000 as nobody from accounts`,
    )) as [{ nobody: number }];
    expect(
      await refusal(
        database.rows(sql`insert into searches (account_id, end_user_id, query, occurred_at)
          values (${Number(nobody)}, ${Number(user!.id)}, 'q', now())`),
      ),
    ).toBe(FOREIGN_KEY_VIOLATION);
  });
});

describe("foreign keys", () => {
  test("every foreign key leads an index, so a delete never scans the referencing table", async () => {
    const ctx = await sharedTestContext();
    // Postgres checks (and cascades to) the referencing rows of each deleted row by the key's columns: an
    // index that begins with them finds those rows, anything else reads the whole table per deleted row.
    const unindexed = await ctx.deps.database.rows<{ key: string }>(sql`
      select c.conrelid::regclass::text || ' (' || array_to_string(array(
               select a.attname::text from unnest(c.conkey) with ordinality k(n, i)
               join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.n order by k.i), ', ')
             || ') → ' || c.confrelid::regclass::text as key
      from pg_constraint c
      where c.contype = 'f' and c.connamespace = 'public'::regnamespace
        and not exists (
          select 1 from pg_index i
          where i.indrelid = c.conrelid and cardinality(c.conkey) <= i.indnkeyatts
            and (i.indkey::int2[])[0:cardinality(c.conkey) - 1] = c.conkey)
      order by 1`);
    expect(unindexed.map((row) => row.key)).toEqual([]);
  });
});
