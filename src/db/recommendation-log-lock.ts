/**
 * The lock that keeps an end user's recommendation logs and attributions from outliving their erasure. The
 * writers of those rows (the log and attribution queues) hold it shared, per account, while they write, and
 * keep only end users that still exist; an erasure holds it exclusively (`lockRecommendationLogs`), as the
 * end users' delete trigger does. A write under way is waited for and its rows then deleted; a write that
 * starts later finds the end user gone. The embedded store needs no lock for this: it runs one statement or
 * transaction at a time, so a writer's single statement is atomic against an erasure.
 */
import { type SQL, sql } from "drizzle-orm";
import type { Database, Tx } from "./client";
import { numberArray } from "./pg-array";

/**
 * Runs a writer's one statement for the given accounts: on Postgres in a transaction that first takes the
 * accounts' locks shared (a statement of its own, so the writer's snapshot is taken once they are held; in
 * ascending account order, as the delete trigger takes them); on the embedded store as that statement alone,
 * which holds the store only while it runs (a transaction would hold it across every round trip to the
 * thread that answers requests, and every other statement would wait meanwhile).
 */
export async function writeUnderRecommendationLogLock<T>(
  database: Database,
  accountIds: Iterable<number>,
  statement: SQL,
): Promise<T[]> {
  if (database.kind === "pglite") return database.rows<T>(statement);
  const accounts = [...new Set(accountIds)].sort((a, b) => a - b);
  return database.db.transaction(async (tx) => {
    await tx.execute(sql`
      select pg_advisory_xact_lock_shared(hashtext('recommendation_logs'), a)
      from unnest(${numberArray(accounts)}::int[]) as a`);
    return database.rows<T>(statement, tx);
  });
}

/** Takes the account's lock exclusively for the rest of the erasure's transaction (see above). */
export async function lockRecommendationLogs(tx: Tx, accountId: number): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext('recommendation_logs'), ${accountId})`);
}
