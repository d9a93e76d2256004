import { describe, expect, test } from "bun:test";
import { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/pglite";
import { skipDefaultParserMerge } from "../../src/db/pglite-parsers";

describe("PGlite queries without the per-query parser merge", () => {
  test("drizzle still reads dates, timestamps and intervals as text, and other types as before", async () => {
    const client = await PGlite.create();
    const seen: (object | undefined)[] = [];
    const query = client.query.bind(client);
    // What reaches PGlite's own query: drizzle's identical parsers are left out.
    client.query = ((...args: Parameters<PGlite["query"]>) => {
      seen.push(args[2]?.parsers);
      return query(...args);
    }) as PGlite["query"];
    skipDefaultParserMerge(client);
    try {
      const db = drizzle({ client });
      const rows =
        await db.execute(sql`select timestamptz '2024-03-01 10:00:00+00' as at, date '2024-03-01' as day,
        interval '2 hours' as span, 42::int as n, 1.5::float8 as x, array[timestamptz '2024-03-01 10:00:00+00'] as ats`);
      expect(rows.rows[0]).toEqual({
        at: "2024-03-01 10:00:00+00",
        day: "2024-03-01",
        span: "02:00:00",
        n: 42,
        x: 1.5,
        ats: '{"2024-03-01 10:00:00+00"}',
      });
      await db.transaction(async (tx) => {
        const inside = await tx.execute(sql`select timestamptz '2024-03-01 10:00:00+00' as at`);
        expect(inside.rows[0]).toEqual({ at: "2024-03-01 10:00:00+00" });
      });
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.every((parsers) => parsers === undefined)).toBe(true);
      seen.length = 0;
      // Parsers of the caller's own are still honoured.
      const own = await client.query("select 7::int as n", [], { parsers: { 23: (v: string) => `#${v}` } });
      expect(own.rows[0]).toEqual({ n: "#7" });
      expect(seen).toHaveLength(1);
      expect(seen[0]).toBeDefined();
    } finally {
      await client.close();
    }
  }, 60_000);
});
