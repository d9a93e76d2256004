import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { type Database, openDatabase } from "../../src/db/client";
import { classifyDatabaseError, databaseErrorCode } from "../../src/db/errors";
import { rejectionOf } from "../helpers/rejection";
import { makeTempDir } from "../helpers/temp-dirs";

/** The embedded database on its own thread (src/db/pglite-worker.ts), as the service opens it. */
describe("the embedded database's thread", () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({ dataDir: "memory://" });
    await database.rows(sql`create table item (id int primary key, name text not null)`);
  });
  afterAll(() => database.close());

  test("a long statement leaves this thread free: its timers keep firing meanwhile", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    try {
      const started = performance.now();
      let took = 0;
      // Longer each round until it takes a quarter of a second, however fast the machine.
      for (let n = 1_000_000; took < 250; n *= 4) {
        ticks = 0;
        const begun = performance.now();
        await database.rows(sql`select count(*) from generate_series(1, ${n}::int) g where g % 7 = 3`);
        took = performance.now() - begun;
        if (performance.now() - started > 30_000) break;
      }
      // On this thread, the statement would have held it: no tick until it ended.
      expect(ticks).toBeGreaterThanOrEqual(Math.floor(took / 5 / 4));
    } finally {
      clearInterval(timer);
    }
  });

  test("an answer that has arrived is settled by takeAnswers, without a turn of this thread's event loop", async () => {
    let value: number | undefined;
    const query = database.rows<{ x: number }>(sql`select 41 + 1 as x`).then((rows) => {
      value = rows[0]?.x;
    });
    // Microtasks until the statement is posted (drizzle's steps before it), then this thread does not yield
    // until the worker's answer is in: only takeAnswers can hand it over here.
    for (let hop = 0; hop < 100; hop++) await Promise.resolve();
    let settled = 0;
    const deadline = performance.now() + 10_000;
    while (settled === 0 && performance.now() < deadline) settled = database.takeAnswers();
    expect(settled).toBe(1);
    // Microtasks alone (the rows' mapping, then the callback above): no message of the event loop runs between.
    for (let hop = 0; hop < 100 && value === undefined; hop++) await Promise.resolve();
    expect(value).toBe(42);
    await query;
    // Nothing is under way: there is nothing to take, and asking costs nothing.
    expect(database.takeAnswers()).toBe(0);
  });

  test("a transaction commits when its callback resolves and rolls back when it throws", async () => {
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`insert into item values (1, 'kept')`);
      // A savepoint inside: its failure rolls back only its own statements.
      await tx
        .transaction(async (inner) => {
          await inner.execute(sql`insert into item values (2, 'inner')`);
          throw new Error("inner failure");
        })
        .catch(() => {});
    });
    const failure = await rejectionOf(
      database.db.transaction(async (tx) => {
        await tx.execute(sql`insert into item values (3, 'dropped')`);
        throw new Error("callback failure");
      }),
    );
    expect(failure.message).toBe("callback failure");
    const rows = await database.rows<{ id: number; name: string }>(
      sql`select id, name from item order by id`,
    );
    expect(rows).toEqual([{ id: 1, name: "kept" }]);
  });

  test("a statement's error keeps its SQLSTATE and constraint, and the next statement runs", async () => {
    const error = await rejectionOf(database.rows(sql`insert into item values (1, 'again')`));
    expect(databaseErrorCode(error)).toBe("23505");
    const cause = (error as { cause?: { constraint?: string } }).cause;
    expect(cause?.constraint).toBe("item_pkey");
    expect(await database.rows(sql`select 1 as one`)).toEqual([{ one: 1 }]);
  });

  test("notifications reach the listeners on this thread until they unlisten", async () => {
    const heard: string[] = [];
    const unlisten = await database.listen("thread_test", (payload) => heard.push(payload));
    await database.notify("thread_test", "first");
    await database.rows(sql`select 1`);
    await unlisten();
    await database.notify("thread_test", "second");
    await database.rows(sql`select 1`);
    expect(heard).toEqual(["first"]);
  });
});

describe("an embedded data directory", () => {
  test("keeps its rows across a close and a reopen; a closed store refuses statements as unavailable", async () => {
    const dir = makeTempDir("rs-pglite-thread-");
    const first = await openDatabase({ dataDir: dir });
    await first.rows(sql`create table kept (n int)`);
    await first.rows(sql`insert into kept values (42)`);
    await first.close();
    const refused = await rejectionOf(first.rows(sql`select 1`));
    expect(classifyDatabaseError(refused)).toBe("unavailable");

    const second = await openDatabase({ dataDir: dir });
    try {
      expect(await second.rows(sql`select n from kept`)).toEqual([{ n: 42 }]);
    } finally {
      await second.close();
    }
  });
});
