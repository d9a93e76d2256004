import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase } from "../../src/db/client";
import { usingPostgres } from "../helpers/context";

/** How long a one-row statement may take to answer before it counts as never answered. */
const ANSWER_MS = 5_000;

describe("copyOut on Postgres", () => {
  // A B process hung for good on its first attribute filter: the model artifact's COPY (91 KB) had arrived
  // in one socket read, postgres.js paused the socket for its stream and never resumed it, and the next
  // statement given that pooled connection never read its answer. One connection in the pool puts the next
  // statement on the copy's connection; blocking this thread while the server answers makes the whole COPY
  // arrive in one read. Sizes around the stream's high-water mark (64 KB) and below one read; without the
  // fix 70–120 KB hung in the first round or within a few.
  test.skipIf(!usingPostgres())(
    "the connection a copy ran on answers its next statement, however the copy's output arrived",
    async () => {
      const database = await openDatabase({ url: process.env.TEST_DATABASE_URL!, maxConnections: 1 });
      try {
        for (const size of [70_000, 80_000, 100_000, 120_000]) {
          for (let round = 0; round < 5; round++) {
            let copied = 0;
            const copying = database.copyOut!(
              `copy (select decode(repeat('ab', ${size}), 'hex')) to stdout (format binary)`,
              (piece) => {
                copied += piece.length;
              },
            );
            // postgres.js writes the statement on the next turn of the loop; then the answer piles up whole.
            await new Promise((resolve) => setImmediate(resolve));
            Bun.sleepSync(100);
            await copying;
            // 19-byte header, 2-byte field count, 4-byte length, 2-byte trailer.
            expect(copied).toBe(size + 27);
            const answer = await Promise.race([
              database.rows<{ n: number }>(sql`select ${round}::int as n`),
              Bun.sleep(ANSWER_MS).then(() => "no answer"),
            ]);
            expect({ size, round, answer }).toEqual({ size, round, answer: [{ n: round }] });
          }
        }
      } finally {
        // A hung connection would keep end() waiting for the statement it never answers.
        await database.close();
      }
    },
    60_000,
  );
});
