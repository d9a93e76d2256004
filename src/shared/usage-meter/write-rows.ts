import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { UsageRow } from "./types";

const BATCH_ROWS = 1000;

/**
 * Adds the counts to usage_daily: one INSERT … ON CONFLICT DO UPDATE per batch, so concurrent flushers
 * (several processes) add up instead of overwriting. Rows are sorted so two flushers lock in the same order
 * and cannot deadlock; counts of accounts deleted meanwhile are dropped by the join.
 */
export async function writeUsageRows(database: Database, rows: readonly UsageRow[]): Promise<void> {
  const sorted = [...rows].sort((a, b) => a.accountId - b.accountId || a.day.localeCompare(b.day));
  for (let start = 0; start < sorted.length; start += BATCH_ROWS) {
    const batch = sorted.slice(start, start + BATCH_ROWS);
    const values = sql.join(
      batch.map(
        (r) =>
          sql`(${r.accountId}::int, ${r.day}::date, ${r.requests}::int, ${r.recommendations}::int, ${r.ingestedRecords}::int, ${r.trainings}::int)`,
      ),
      sql`, `,
    );
    await database.db.execute(sql`
      insert into usage_daily (account_id, day, requests, recommendations, ingested_records, trainings)
      select v.account_id, v.day, v.requests, v.recommendations, v.ingested_records, v.trainings
      from (values ${values}) as v(account_id, day, requests, recommendations, ingested_records, trainings)
      join accounts a on a.id = v.account_id
      on conflict (account_id, day) do update set
        requests = usage_daily.requests + excluded.requests,
        recommendations = usage_daily.recommendations + excluded.recommendations,
        ingested_records = usage_daily.ingested_records + excluded.ingested_records,
        trainings = usage_daily.trainings + excluded.trainings`);
  }
}
