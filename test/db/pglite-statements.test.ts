import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/pglite";
import { skipDefaultParserMerge } from "../../src/db/pglite-parsers";
import { prepareStatements } from "../../src/db/pglite-statements";

/** A client set up as the service opens its embedded store, beside a plain one to compare answers with. */
async function openPair(): Promise<{ prepared: PGlite; plain: PGlite; calls: () => number }> {
  const prepared = await PGlite.create();
  const plain = await PGlite.create();
  let calls = 0;
  const stream = prepared.execProtocolStream.bind(prepared);
  prepared.execProtocolStream = ((...args: Parameters<PGlite["execProtocolStream"]>) => {
    calls++;
    return stream(...args);
  }) as PGlite["execProtocolStream"];
  prepareStatements(prepared);
  skipDefaultParserMerge(prepared);
  // The same text parsers on both, so only the path differs.
  skipDefaultParserMerge(plain);
  const schema = `create table item (id serial primary key, name text not null unique, tags text[], data jsonb,
    at timestamptz, price numeric, ref uuid)`;
  await prepared.exec(schema);
  await plain.exec(schema);
  return { prepared, plain, calls: () => calls };
}

describe("PGlite statements prepared once and run in one call", () => {
  let prepared: PGlite;
  let plain: PGlite;
  let calls: () => number;
  beforeAll(async () => {
    ({ prepared, plain, calls } = await openPair());
  });
  afterAll(async () => {
    await prepared.close();
    await plain.close();
  });

  test("answers exactly as PGlite's own query does, for every parameter and row mode; one call once prepared", async () => {
    const insert = `insert into item (name, tags, data, at, price, ref) values ($1, $2, $3, $4, $5, $6)
      returning id, name, tags, data, at, price, ref`;
    const values = [
      [
        "a",
        ["x", "y"],
        { n: 1, s: "é" },
        new Date("2024-03-01T10:00:00Z"),
        12.5,
        "6c1a4a8e-2f57-4a35-9a3f-5b0f1de2b0c1",
      ],
      ["b", null, null, null, null, null],
      ["c'\"", [], [1, 2], "2024-03-02 00:00:00+00", "3.25", undefined],
    ];
    for (const row of values) {
      expect(await prepared.query(insert, row)).toEqual(await plain.query(insert, row));
    }
    const select = "select * from item where name = any($1) order by id";
    for (const rowMode of ["array", "object"] as const) {
      expect(await prepared.query(select, [["a", "c'\""]], { rowMode })).toEqual(
        await plain.query(select, [["a", "c'\""]], { rowMode }),
      );
    }
    expect(await prepared.query("select 1 as one")).toEqual(await plain.query("select 1 as one"));

    const before = calls();
    await prepared.query(select, [["b"]]);
    expect(calls() - before).toBe(1);
  });

  test("drizzle reads through it, in and out of transactions; a failed transaction leaves nothing", async () => {
    const db = drizzle({ client: prepared });
    const at = await db.execute(sql`select timestamptz '2024-03-01 10:00:00+00' as at, ${7}::int as n`);
    expect(at.rows[0]).toEqual({ at: "2024-03-01 10:00:00+00", n: 7 });
    await db.transaction(async (tx) => {
      await tx.execute(sql`insert into item (name) values (${"in-tx"})`);
      const seen = await tx.execute(sql`select count(*)::int as n from item where name = ${"in-tx"}`);
      expect(seen.rows[0]).toEqual({ n: 1 });
    });
    await expect(
      db.transaction(async (tx) => {
        await tx.execute(sql`insert into item (name) values (${"rolled-back"})`);
        await tx.execute(sql`insert into item (name) values (${"in-tx"})`);
      }),
    ).rejects.toThrow();
    const left = await db.execute(sql`select name from item where name in (${"in-tx"}, ${"rolled-back"})`);
    expect(left.rows).toEqual([{ name: "in-tx" }]);
  });

  test("errors carry their SQLSTATE and statement as before, and the next query works", async () => {
    const insert = "insert into item (name) values ($1)";
    await prepared.query(insert, ["dup"]);
    const duplicate = await prepared.query(insert, ["dup"]).catch((error) => error);
    expect(duplicate.code).toBe("23505");
    expect(duplicate.query).toBe(insert);
    const syntax = await prepared.query("selec 1").catch((error) => error);
    expect(syntax.code).toBe("42601");
    const badValue = await prepared.query("select $1::int as n", ["not a number"]).catch((error) => error);
    expect(badValue.code).toBe("22P02");
    expect((await prepared.query("select $1::int as n", [5])).rows).toEqual([{ n: 5 }]);
  });

  test("a statement whose table changed is prepared afresh", async () => {
    await prepared.exec("create table shape (a int); insert into shape values (1)");
    const select = "select * from shape";
    expect((await prepared.query(select)).rows).toEqual([{ a: 1 }]);
    await prepared.exec("alter table shape add column b int default 2");
    expect((await prepared.query(select)).rows).toEqual([{ a: 1, b: 2 }]);
    expect((await prepared.query(select)).rows).toEqual([{ a: 1, b: 2 }]);
  });

  test("the statement cache stays bounded, and long parameter lists are not cached", async () => {
    const hot = "select $1::int * 2 as n";
    await prepared.query(hot, [1]);
    let hotCalls = 0;
    for (let i = 0; i < 400; i++) {
      const result = await prepared.query(`select $1::int + ${i} as n`, [1]);
      expect(result.rows).toEqual([{ n: i + 1 }]);
      const callsBefore = calls();
      expect((await prepared.query(hot, [i])).rows).toEqual([{ n: 2 * i }]);
      hotCalls += calls() - callsBefore;
    }
    // The statement in use all along was never closed: each run of it was a single call.
    expect(hotCalls).toBe(400);
    const kept = await prepared.query<{ n: number }>("select count(*)::int as n from pg_prepared_statements");
    expect(kept.rows[0]?.n).toBeLessThanOrEqual(256);
    expect(kept.rows[0]?.n).toBeGreaterThan(200);

    const many = Array.from({ length: 100 }, (_, i) => i);
    const list = many.map((_, i) => `$${i + 1}::int`).join(" + ");
    const before = (
      await prepared.query<{ n: number }>("select count(*)::int as n from pg_prepared_statements")
    ).rows[0]?.n;
    expect((await prepared.query(`select ${list} as total`, many)).rows).toEqual([{ total: 4950 }]);
    const after = (
      await prepared.query<{ n: number }>("select count(*)::int as n from pg_prepared_statements")
    ).rows[0]?.n;
    expect(after).toBe(before);
  });

  test("notifications still reach listeners; a finished transaction refuses further queries", async () => {
    const heard: string[] = [];
    await prepared.listen("statements_test", (payload) => heard.push(payload));
    await prepared.query("select pg_notify($1, $2)", ["statements_test", "hello"]);
    await Bun.sleep(0);
    expect(heard).toEqual(["hello"]);

    let kept: Transaction | undefined;
    await prepared.transaction(async (tx) => {
      kept = tx;
      await tx.query("select 1");
    });
    await expect(kept!.query("select 1")).rejects.toThrow("Transaction is closed");
  });
});
