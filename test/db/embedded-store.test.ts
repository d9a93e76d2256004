import { expect, test } from "bun:test";
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
