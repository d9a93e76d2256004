/**
 * Query plans on Postgres: the catalogue's list, lookup and erasure queries (the very builders the use cases
 * run) must be served by indexes that lead with account_id (or, for the recommendation log, whose every read
 * names one end user, by its end-user index). The tables get enough rows for the planner to
 * take sizes seriously, and `SET LOCAL enable_seqscan = off` makes the check about index AVAILABILITY: with
 * it, Postgres still falls back to a Seq Scan only when no usable index exists, which is what must never
 * happen on a multi-tenant table.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { type SQL, sql } from "drizzle-orm";
import type { Tx } from "../../src/db/client";
import { ingestionJobs } from "../../src/db/schema";
import { erasureStatements } from "../../src/modules/end-users/erase";
import { endUserLookupQuery, endUserPageQuery } from "../../src/modules/end-users/queries";
import { interactionPageQuery } from "../../src/modules/interactions/queries";
import { productCountQuery, productLookupQuery, productPageQuery } from "../../src/modules/products/queries";
import { sharedTestContext, type TestContext, usingPostgres } from "../helpers/context";

const TENANT_TABLES = [
  "products",
  "end_users",
  "interactions",
  "searches",
  "orders",
  "recommendation_logs",
  "ingestion_jobs",
];

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Index Cond"?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

let ctx: TestContext;
let accountId: number;
let endUserId: number;

describe.skipIf(!usingPostgres())("query plans (Postgres)", () => {
  beforeAll(async () => {
    ctx = await sharedTestContext();
    const rows = <T>(q: SQL) => ctx.deps.database.rows<T>(q);
    // Eleven tenants of equal size, as on a shared database: each one is a small part of every table.
    const accounts = await rows<{ id: number }>(
      sql`insert into accounts (name) select 'plans ' || g from generate_series(1, 11) g returning id`,
    );
    accountId = Number(accounts[0]!.id);
    for (const { id } of accounts) {
      const a = Number(id);
      await rows(sql`insert into products (account_id, external_id, name, price, category)
        select ${a}, 'p' || g, 'Product ' || g, 1 + g % 100,
          case when g % 200 = 0 then 'shoes/' || (g % 3) else 'bulk/' || (g % 50) end
        from generate_series(1, 10000) g`);
      await rows(sql`insert into end_users (account_id, external_id)
        select ${a}, 'u' || g from generate_series(1, 3000) g`);
      await rows(sql`with u as (select id, row_number() over (order by id) - 1 as n from end_users where account_id = ${a}),
          p as (select id, row_number() over (order by id) - 1 as n from products where account_id = ${a})
        insert into interactions (account_id, end_user_id, product_id, interaction_type, value, occurred_at)
        select ${a}, u.id, p.id, 'VIEW', 1, now() - make_interval(mins => g)
        from generate_series(0, 19999) g join u on u.n = g % 3000 join p on p.n = g % 10000`);
      for (const table of ["searches", "orders"]) {
        const extra = table === "orders" ? sql`, quantity, unit_price` : sql``;
        const values = table === "orders" ? sql`, 1, 1` : sql``;
        await rows(sql`insert into ${sql.identifier(table)} (account_id, end_user_id, product_id, occurred_at ${extra})
          select account_id, end_user_id, product_id, occurred_at ${values} from interactions where account_id = ${a} and id % 5 = 0`);
      }
      await rows(sql`insert into recommendation_logs (account_id, end_user_id, endpoint, items)
        select ${a}, id, 'homepage', '[]' from end_users where account_id = ${a}`);
      await rows(sql`insert into ingestion_jobs (account_id, task_id, status)
        select ${a}, 't' || g, 'completed' from generate_series(1, 500) g`);
    }
    const [user] = await rows<{ id: number }>(
      sql`select id from end_users where account_id = ${accountId} and external_id = 'u42'`,
    );
    endUserId = Number(user!.id);
    for (const table of TENANT_TABLES) await rows(sql`analyze ${sql.identifier(table)}`);
  }, 180_000);

  async function plan(query: (tx: Tx) => SQL): Promise<PlanNode[]> {
    return ctx.deps.database.db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_seqscan = off`);
      const [row] = await ctx.deps.database.rows<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
        sql`explain (format json) ${query(tx)}`,
        tx,
      );
      return nodes(row!["QUERY PLAN"][0].Plan);
    });
  }

  function expectIndexed(planNodes: PlanNode[], expectedIndex: string): void {
    const seqScans = planNodes.filter(
      (n) => n["Node Type"] === "Seq Scan" && TENANT_TABLES.includes(n["Relation Name"] ?? ""),
    );
    expect(seqScans).toEqual([]);
    expect(planNodes.map((n) => n["Index Name"]).filter(Boolean)).toContain(expectedIndex);
  }

  test("product list, category list and count, and lookup use the account-leading product indexes", async () => {
    expectIndexed(
      await plan((tx) => productPageQuery(tx, accountId, { skip: 100, limit: 100 }).getSQL()),
      "products_account_id_key",
    );
    expectIndexed(
      await plan((tx) => productCountQuery(tx, accountId, "shoes").getSQL()),
      "products_account_category_idx",
    );
    const categoryPage = await plan((tx) =>
      productPageQuery(tx, accountId, { category: "shoes", skip: 0, limit: 100 }).getSQL(),
    );
    expect(categoryPage.filter((n) => n["Node Type"] === "Seq Scan")).toEqual([]);
    expectIndexed(
      await plan((tx) => productLookupQuery(tx, accountId, "p77").getSQL()),
      "products_account_external_key",
    );
  });

  test("end-user list and lookup use the account-leading end-user indexes", async () => {
    expectIndexed(
      await plan((tx) => endUserPageQuery(tx, accountId, 0, 100).getSQL()),
      "end_users_account_id_key",
    );
    expectIndexed(
      await plan((tx) => endUserLookupQuery(tx, accountId, "u42").getSQL()),
      "end_users_account_external_key",
    );
  });

  test("interaction list uses the (account_id, …) index", async () => {
    expectIndexed(
      await plan((tx) => interactionPageQuery(tx, accountId, 0, 100).getSQL()),
      "interactions_account_id_idx",
    );
  });

  test("every erasure delete finds the user's rows through an index on its end user", async () => {
    const statements = erasureStatements(accountId, endUserId);
    expectIndexed(await plan(() => statements.interactions), "interactions_account_user_time_idx");
    expectIndexed(await plan(() => statements.searches), "searches_account_user_idx");
    expectIndexed(await plan(() => statements.orders), "orders_account_user_idx");
    expectIndexed(await plan(() => statements.recommendations), "recommendation_logs_end_user_time_idx");
    expectIndexed(await plan(() => statements.attributions), "recommendation_attributions_end_user_idx");
    const userDelete = await plan(() => statements.endUser);
    expect(userDelete.filter((n) => n["Node Type"] === "Seq Scan")).toEqual([]);
  });

  test("deleting an end user or a product reaches each referencing row through an (account_id, …) index", async () => {
    // What Postgres runs for each cascading foreign key, once per deleted row: its columns, as it names them.
    const keys = await ctx.deps.database.rows<{ table: string; referenced: string; columns: string[] }>(sql`
      select c.conrelid::regclass::text as table, c.confrelid::regclass::text as referenced,
        array(select a.attname::text from unnest(c.conkey) with ordinality k(n, i)
          join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.n order by k.i) as columns
      from pg_constraint c
      where c.contype = 'f' and c.confrelid in ('end_users'::regclass, 'products'::regclass)
      order by 1, 2`);
    expect(keys.map((k) => `${k.table} → ${k.referenced}`)).toEqual([
      "interactions → end_users",
      "interactions → products",
      "orders → end_users",
      "searches → end_users",
    ]);
    const [product] = await ctx.deps.database.rows<{ id: number }>(
      sql`select id from products where account_id = ${accountId} and external_id = 'p77'`,
    );
    for (const key of keys) {
      expect(key.columns[0]).toBe("account_id");
      const id = key.referenced === "end_users" ? endUserId : Number(product!.id);
      const planNodes = await plan(
        () => sql`delete from only ${sql.identifier(key.table)}
          where ${sql.identifier(key.columns[0]!)} = ${accountId} and ${sql.identifier(key.columns[1]!)} = ${id}`,
      );
      expect(planNodes.filter((n) => n["Node Type"] === "Seq Scan")).toEqual([]);
      const conditions = planNodes.map((n) => n["Index Cond"] ?? "").join(" ");
      expect(conditions).toContain("account_id");
      expect(conditions).toContain(key.columns[1]!);
    }
  });

  test("the ingestion job list uses (account_id, id)", async () => {
    const { desc, eq } = await import("drizzle-orm");
    expectIndexed(
      await plan((tx) =>
        tx
          .select()
          .from(ingestionJobs)
          .where(eq(ingestionJobs.accountId, accountId))
          .orderBy(desc(ingestionJobs.id))
          .limit(20)
          .getSQL(),
      ),
      "ingestion_jobs_account_idx",
    );
  });
});
