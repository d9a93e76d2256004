/**
 * `bun run bench/wal-segments.ts [statements]`: what a new WAL segment costs the embedded store's writes. A
 * fresh store (PGlite, in a temporary directory, with the service's own settings) takes answer-log-shaped
 * batches one statement after another (200 rows of an end user, a recommendation id and 20 shown product
 * ids, into a table with the log's (end user, time, id) index) until about 100 MB of WAL is written, once
 * with the service's settings and once with Postgres's default of zero-filling each new 16 MB segment
 * (`wal_init_zero=on`), twice each, alternating. Prints the statement times of each run apart for the
 * statements whose records stayed within one segment and for those that crossed into a new one, which
 * created it. A statement runs alone: its time is time the store's thread gave no other statement.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { embeddedStartParams } from "../src/db/client";
import { createRng } from "../src/engine/rng";

const statements = Number(process.argv[2] ?? 3000);

async function run(label: string, extra: string[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "rs-wal-bench-"));
  const db = await PGlite.create(dir, { startParams: [...embeddedStartParams(), ...extra] });
  try {
    await db.exec(`create table logs (id bigserial, end_user_id bigint, recommendation_id uuid, items text,
      created_at timestamptz not null default now());
      create index on logs (end_user_id, created_at, id);`);
    const rng = createRng(1);
    const segment = async () =>
      (await db.query<{ name: string }>("select pg_walfile_name(pg_current_wal_insert_lsn()) as name"))
        .rows[0]!.name;
    let current = await segment();
    const times: number[] = [];
    const crossing: number[] = [];
    for (let s = 0; s < statements; s++) {
      const lines: string[] = [];
      for (let r = 0; r < 200; r++) {
        const items = Array.from({ length: 20 }, () => `p${Math.floor(rng() * 20_000)}`);
        lines.push(`${Math.floor(rng() * 5_000)}\t${crypto.randomUUID()}\t${JSON.stringify(items)}`);
      }
      const started = performance.now();
      await db.query(
        `insert into logs (end_user_id, recommendation_id, items)
         select split_part(l, E'\\t', 1)::bigint, split_part(l, E'\\t', 2)::uuid, split_part(l, E'\\t', 3)
         from string_to_table($1::text, E'\\n') as l`,
        [lines.join("\n")],
      );
      const took = performance.now() - started;
      const next = await segment();
      if (next !== current) crossing.push(took);
      else times.push(took);
      current = next;
    }
    const wal = await db.query<{ mb: number }>(
      "select round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0') / 1048576) as mb",
    );
    const sorted = [...times].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.floor(q * (sorted.length - 1))]!.toFixed(2);
    const crossed = [...crossing].sort((a, b) => a - b);
    console.log(
      `${label}: WAL at ${wal.rows[0]?.mb} MB; ${times.length} statements within a segment: p50 ${at(0.5)} ms, ` +
        `p99 ${at(0.99)} ms, longest ${at(1)} ms; ${crossed.length} crossing into a new one: ` +
        `p50 ${crossed[crossed.length >> 1]?.toFixed(2)} ms, longest ${crossed.at(-1)?.toFixed(2)} ms`,
    );
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

for (let round = 0; round < 2; round++) {
  await run("service settings", []);
  await run("segments zero-filled (wal_init_zero=on)", ["-c", "wal_init_zero=on"]);
}
