import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { openDatabase } from "../../src/db/client";
import { StatementTimings, statementLabel } from "../../src/db/store-timings";
import { makeTempDir } from "../helpers/temp-dirs";

type Line = { at: number; statements: Record<string, [number, number]> };
const linesOf = (text: string): Line[] =>
  text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Line);

describe("time per kind of statement on the embedded store's thread", () => {
  test("a statement's label is the opening of its text, whitespace folded", () => {
    expect(statementLabel("  select a,\n\t b   from t\n where id = $1 ")).toBe(
      "select a, b from t where id = $1",
    );
    expect(statementLabel(`select ${"x, ".repeat(100)}1`)).toHaveLength(90);
  });

  test("each line holds what was recorded since the line before, and nothing is written for nothing", () => {
    const written: string[] = [];
    let now = 1_000;
    const timings = new StatementTimings(
      (line) => written.push(line),
      () => now,
      60_000,
    );
    timings.record("select 1", 0.5);
    timings.record("select   1", 0.25);
    timings.record("insert into t values ($1)", 2);
    timings.flush();
    now = 2_000;
    timings.flush();
    timings.record("select 1", 1);
    timings.stop();
    expect(linesOf(written.join(""))).toEqual([
      { at: 1_000, statements: { "select 1": [2, 0.75], "insert into t values ($1)": [1, 2] } },
      { at: 2_000, statements: { "select 1": [1, 1] } },
    ]);
  });

  test("a write that fails ends the timings without throwing", () => {
    let writes = 0;
    const timings = new StatementTimings(
      () => {
        writes++;
        throw new Error("ENOSPC");
      },
      Date.now,
      60_000,
    );
    timings.record("select 1", 1);
    expect(() => timings.flush()).not.toThrow();
    timings.record("select 1", 1);
    timings.stop();
    expect(writes).toBe(1);
  });

  test("given a file, the store's thread writes its statements' times there, and no value", async () => {
    const file = join(makeTempDir("store-timings"), "timings.jsonl");
    const database = await openDatabase({ dataDir: "memory://", statementTimingsFile: file });
    try {
      for (let i = 0; i < 5; i++) await database.rows(sql`select ${`secret-${i}`}::text as value`);
    } finally {
      await database.close();
    }
    const text = readFileSync(file, "utf8");
    const counted = new Map<string, number>();
    for (const line of linesOf(text)) {
      for (const [label, [count, ms]] of Object.entries(line.statements)) {
        expect(ms).toBeGreaterThanOrEqual(0);
        counted.set(label, (counted.get(label) ?? 0) + count);
      }
    }
    expect(counted.get("select $1::text as value")).toBe(5);
    expect(text).not.toContain("secret");
  });
});
