/**
 * Claiming, heartbeats and recovery for a job table whose rows carry `status`, `attempts`, `claimed_by`,
 * `heartbeat_at`, `started_at` and `finished_at` (ingestion_jobs, training_jobs). Every statement is one
 * atomic UPDATE, so several processes on one Postgres can share a table without double-claiming a row;
 * the claim uses `FOR UPDATE SKIP LOCKED`, which PGlite accepts too.
 */
import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../db/client";

export interface RowQueueOptions {
  /** The job table; a constant of the calling module, never user input. */
  table: string;
  /** Statuses a worker may pick up when the row is unclaimed (e.g. ["queued"], or ["processing"]). */
  claimable: readonly string[];
  /** Status written on claim (e.g. "running"; ingestion keeps "processing"). */
  running: string;
  /** Status written when a released or reclaimed job goes back to the queue. */
  requeued: string;
  /** Terminal failure status and the text column that receives the reason. */
  failed: string;
  failureColumn: string;
  /** Columns emptied when a job fails for good, e.g. a stored request holding personal data. */
  clearedOnFailure?: readonly string[];
}

/** The columns every claimed job carries; a job kind can read the rest of its row itself. */
export interface ClaimedJob {
  id: number;
  accountId: number;
  attempts: number;
}

export interface ReclaimOptions {
  /** Claims whose heartbeat is older than this are considered dead. */
  staleAfterSeconds: number;
  /** Claims written by an earlier run of this same instance (same DATA_DIR): dead at once. */
  orphanPrefix: string;
  /** Claims of the current run, never reclaimed. */
  livePrefix: string;
  maxAttempts: number;
}

export interface RowQueue {
  claimNext(database: Database, workerId: string): Promise<ClaimedJob | undefined>;
  /** Refreshes the claim; false when the claim was lost (reclaimed by another process). */
  heartbeat(database: Database, job: ClaimedJob, workerId: string): Promise<boolean>;
  /** Gives the job back; `countAttempt: false` when it was not this worker's fault (graceful stop). */
  release(database: Database, job: ClaimedJob, workerId: string, countAttempt: boolean): Promise<void>;
  fail(database: Database, job: ClaimedJob, workerId: string, reason: string): Promise<void>;
  /** Requeues dead claims, or fails them once they used up their attempts. */
  reclaim(database: Database, options: ReclaimOptions): Promise<{ requeued: number; failed: number }>;
}

const list = (values: readonly string[]): SQL =>
  sql.join(
    values.map((v) => sql`${v}`),
    sql`, `,
  );

export function rowQueue(options: RowQueueOptions): RowQueue {
  const table = sql.identifier(options.table);
  const failureColumn = sql.identifier(options.failureColumn);
  const claimable = list(options.claimable);
  const cleared = sql.join(
    (options.clearedOnFailure ?? []).map((column) => sql`, ${sql.identifier(column)} = null`),
    sql``,
  );

  const deadClaim = (o: ReclaimOptions): SQL => sql`status = ${options.running}
    and claimed_by is not null
    and (heartbeat_at is null
      or heartbeat_at < now() - make_interval(secs => ${o.staleAfterSeconds})
      or (claimed_by like ${`${escapeLike(o.orphanPrefix)}%`} and claimed_by not like ${`${escapeLike(o.livePrefix)}%`}))`;

  return {
    async claimNext(database, workerId) {
      const rows = await database.rows<{ id: number; account_id: number; attempts: number }>(sql`
        update ${table} set status = ${options.running}, claimed_by = ${workerId}, heartbeat_at = now(),
          attempts = attempts + 1, started_at = coalesce(started_at, now())
        where id = (
          select id from ${table}
          where status in (${claimable}) and claimed_by is null
          order by id
          limit 1
          for update skip locked
        )
        returning id, account_id, attempts`);
      const row = rows[0];
      return row && { id: Number(row.id), accountId: Number(row.account_id), attempts: Number(row.attempts) };
    },

    async heartbeat(database, job, workerId) {
      const rows = await database.rows(sql`
        update ${table} set heartbeat_at = now()
        where id = ${job.id} and claimed_by = ${workerId} and status = ${options.running}
        returning id`);
      return rows.length > 0;
    },

    async release(database, job, workerId, countAttempt) {
      await database.rows(sql`
        update ${table} set status = ${options.requeued}, claimed_by = null, heartbeat_at = null,
          attempts = ${countAttempt ? sql`attempts` : sql`greatest(attempts - 1, 0)`}
        where id = ${job.id} and claimed_by = ${workerId} and status = ${options.running}`);
    },

    async fail(database, job, workerId, reason) {
      await database.rows(sql`
        update ${table} set status = ${options.failed}, ${failureColumn} = ${reason}, claimed_by = null,
          heartbeat_at = null, finished_at = now()${cleared}
        where id = ${job.id} and claimed_by = ${workerId} and status = ${options.running}`);
    },

    async reclaim(database, o) {
      const failed = await database.rows(sql`
        update ${table} set status = ${options.failed}, finished_at = now(), claimed_by = null, heartbeat_at = null,
          ${failureColumn} = 'The job was interrupted ' || attempts || ' times (process stopped or crashed); giving up'
          ${cleared}
        where ${deadClaim(o)} and attempts >= ${o.maxAttempts}
        returning id`);
      const requeued = await database.rows(sql`
        update ${table} set status = ${options.requeued}, claimed_by = null, heartbeat_at = null
        where ${deadClaim(o)}
        returning id`);
      return { requeued: requeued.length, failed: failed.length };
    },
  };
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
