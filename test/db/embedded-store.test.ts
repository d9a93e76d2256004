import { expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { openDatabase } from "../../src/db/client";

test("the embedded store keeps a 64 MB page cache, not Postgres's default of 128 MB", async () => {
  const database = await openDatabase({ dataDir: "memory://" });
  try {
    const [row] = await database.rows<{ shared_buffers: string }>(sql`show shared_buffers`);
    expect(row?.shared_buffers).toBe("64MB");
  } finally {
    await database.close();
  }
});

test("the embedded store creates a new WAL segment without writing 16 MB of zeros into it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rs-wal-"));
  const database = await openDatabase({ dataDir: dir });
  try {
    const [setting] = await database.rows<{ wal_init_zero: string }>(sql`show wal_init_zero`);
    expect(setting?.wal_init_zero).toBe("off");
    const segment = async () =>
      (
        await database.rows<{ name: string }>(
          sql`select pg_walfile_name(pg_current_wal_insert_lsn()) as name`,
        )
      )[0]!.name;
    const first = await segment();
    // About 1 MB of rows (and of WAL) at a time, until the writes cross into a segment this store creates.
    await database.rows(sql`create table wal_filler (v text)`);
    let current = first;
    for (let round = 0; round < 40 && current === first; round++) {
      await database.rows(sql`insert into wal_filler select repeat('x', 1000) from generate_series(1, 1000)`);
      current = await segment();
    }
    expect(current).not.toBe(first);
    const path = join(dir, "pg_wal", current);
    expect(readdirSync(join(dir, "pg_wal"))).toContain(current);
    const file = statSync(path);
    expect(file.size).toBe(16 * 1024 * 1024);
    // Zero-filled, the segment would take all of its 16 MB on disk; made by its last byte, it takes about the
    // 1 MB written into it so far.
    expect(file.blocks * 512).toBeLessThan(8 * 1024 * 1024);
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
