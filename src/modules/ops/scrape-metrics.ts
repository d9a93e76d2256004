import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { Metrics, QueueDepth } from "../../http/metrics";
import type { HealthMonitor } from "../health/monitor";

/** What this use case reads from the app. */
export interface Deps {
  readonly database: Database;
  readonly health: HealthMonitor;
  readonly metrics: Metrics;
}

/**
 * Renders the registry plus the values read at scrape time: job queue depth comes from the database
 * (one grouped count per queue), so it is right across every process sharing that database.
 */
export async function scrapeMetrics({ deps }: { deps: Deps }): Promise<string> {
  const rows = await deps.database.rows<{ queue: string; status: string; jobs: number | string }>(sql`
    select 'ingestion' as queue, status, count(*)::int as jobs from ingestion_jobs group by status
    union all
    select 'training' as queue, status, count(*)::int as jobs from training_jobs group by status
    order by queue, status`);
  const queueDepths: QueueDepth[] = rows.map((row) => ({
    queue: row.queue,
    status: row.status,
    jobs: Number(row.jobs),
  }));
  return deps.metrics.render({ queueDepths, databaseUp: deps.health.current().state === "up" });
}
