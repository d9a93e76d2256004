/**
 * Applies the embedded SQL migrations in order, each in its own transaction, recording them in
 * schema_migrations. An advisory lock serialises processes that start at the same time on one Postgres.
 */
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import type { Database } from "./client";
import { MIGRATIONS } from "./migrations.generated";

const MIGRATION_LOCK_KEY = 727_274_001;

export interface MigrationFile {
  tag: string;
  sql: string;
}

export async function migrate(
  database: Database,
  migrations: readonly MigrationFile[] = MIGRATIONS,
): Promise<string[]> {
  const { db } = database;
  return db.transaction(async (tx) => {
    // Transaction-scoped lock: released on commit, also if this process dies mid-migration.
    await tx.execute(sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
    await tx.execute(sql`create table if not exists schema_migrations (
      tag text primary key,
      hash text not null,
      applied_at timestamptz not null default now()
    )`);
    const applied = new Map(
      (
        await database.rows<{ tag: string; hash: string }>(sql`select tag, hash from schema_migrations`, tx)
      ).map((r) => [r.tag, r.hash]),
    );
    const done: string[] = [];
    for (const migration of migrations) {
      const hash = createHash("sha256").update(migration.sql).digest("hex");
      const previous = applied.get(migration.tag);
      if (previous !== undefined) {
        if (previous !== hash) throw new Error(`Migration ${migration.tag} was changed after it was applied`);
        continue;
      }
      for (const statement of migration.sql.split("--> statement-breakpoint")) {
        if (statement.trim() !== "") await tx.execute(sql.raw(statement));
      }
      await tx.execute(sql`insert into schema_migrations (tag, hash) values (${migration.tag}, ${hash})`);
      done.push(migration.tag);
    }
    return done;
  });
}
