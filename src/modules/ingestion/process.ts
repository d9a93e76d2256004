/**
 * Runs a bulk-ingestion job. The accepted request is stored with the job; it is applied in chunks, and each
 * chunk's writes, its record errors and the advance of the job's processed-cursor commit in ONE transaction
 * that also locks the job row and checks this worker still holds the claim. A job resumed after a crash
 * therefore continues exactly where the last committed chunk ended: no record is applied twice or skipped.
 * Order: products, then users, then interactions (which may name products of the same batch).
 *
 * An erasure wins over a job accepted before it. The chunk's transaction starts by locking the job row, and
 * an erasure locks the rows of the pending jobs naming its end user before anything else (see
 * end-users/erase.ts): a chunk under way is waited for and what it wrote is then deleted (and counted), and
 * a chunk that starts later finds the stored request's revision raised and reads it again, with the end
 * user's records replaced by nulls. The lock is a row lock, so it holds across processes; on the embedded
 * store a transaction holds the whole store anyway.
 */
import { and, eq, sql } from "drizzle-orm";
import type { AppEvents } from "../../app-events";
import type { Config } from "../../config";
import type { Database, Tx } from "../../db/client";
import { ingestionJobs } from "../../db/schema";
import { type ClaimedJob, rowQueue } from "../../jobs/row-queue";
import { JobClaimLostError, type JobKind, type JobRunContext } from "../../jobs/runner";
import { applyInteractions, applyProducts, applyUsers, type CapacityCheck, type ChunkResult } from "./apply";
import { erasedRecords, type StoredBatch, takePayload } from "./handoff";

export const INGESTION_JOB_KIND = "ingestion";

export const ingestionQueue = rowQueue({
  table: "ingestion_jobs",
  claimable: ["processing"],
  running: "processing",
  requeued: "processing",
  failed: "failed",
  failureColumn: "failure_reason",
  // The stored request names end users: a job that will never run again keeps no copy of it.
  clearedOnFailure: ["payload"],
});

interface IngestionDeps {
  database: Database;
  config: Pick<Config, "ingestionChunkSize">;
  /** Test harnesses only: holds each chunk's transaction open this long, so a kill can land mid-job. */
  chunkDelayMs?: number;
  /** Test harnesses only: awaited after each chunk commits and before the next starts (a pause mid-job). */
  afterChunk?: (jobId: number) => Promise<void>;
  /** The plan's catalogue caps; absent means no cap. */
  capacity?: CapacityCheck;
  /** Counts applied records in the account's usage. */
  onApplied?: (accountId: number, records: number) => void;
  /** Where applied chunks are announced to the caches. */
  events: Pick<AppEvents, "productsChanged" | "interactionsRecorded" | "endUserUpdated">;
}

type Cursor = "processedProducts" | "processedUsers" | "processedInteractions";

interface Phase {
  cursor: Cursor;
  records: (batch: StoredBatch) => readonly unknown[];
  /** `offset` is the chunk's start in the request's array, for the record errors' `index`. */
  apply(tx: Tx, accountId: number, records: readonly unknown[], offset: number): Promise<ChunkResult>;
}

export function ingestionJobKind(deps: IngestionDeps): JobKind {
  return {
    kind: INGESTION_JOB_KIND,
    ...ingestionQueue,
    run: (job, context) => runIngestionJob(deps, job, context),
  };
}

const CURSOR_COLUMNS = {
  processedProducts: ingestionJobs.processedProducts,
  processedUsers: ingestionJobs.processedUsers,
  processedInteractions: ingestionJobs.processedInteractions,
} as const;

async function runIngestionJob(deps: IngestionDeps, job: ClaimedJob, { signal, workerId }: JobRunContext) {
  const { db } = deps.database;
  const claimed = and(
    eq(ingestionJobs.id, job.id),
    eq(ingestionJobs.claimedBy, workerId),
    eq(ingestionJobs.status, "processing"),
  );
  // Read once per claim: while the claim is held no one else moves the cursor, and every chunk below
  // re-checks the claim and the cursor it started from. The request is the copy the route handed over in
  // this process (as accepted: revision 0), else the stored one; only an erasure changes it, and each chunk
  // reads it again when it has.
  const handed = takePayload(deps.database, job.id);
  const [stored] = await db
    .select({
      ...(handed === undefined ? { payload: ingestionJobs.payload } : {}),
      payloadRevision: ingestionJobs.payloadRevision,
      ...CURSOR_COLUMNS,
    })
    .from(ingestionJobs)
    .where(claimed);
  if (stored === undefined) throw new JobClaimLostError(job.id);
  let batch = handed ?? ((("payload" in stored ? stored.payload : null) ?? {}) as StoredBatch);
  let revision = handed === undefined ? stored.payloadRevision : 0;
  const cursor: Record<Cursor, number> = {
    processedProducts: stored.processedProducts,
    processedUsers: stored.processedUsers,
    processedInteractions: stored.processedInteractions,
  };
  const phases: Phase[] = [
    {
      cursor: "processedProducts",
      records: (b) => b.products ?? [],
      apply: (tx, accountId, records, offset) => applyProducts(tx, accountId, records, deps.capacity, offset),
    },
    {
      cursor: "processedUsers",
      records: (b) => b.users ?? [],
      apply: (tx, accountId, records, offset) => applyUsers(tx, accountId, records, deps.capacity, offset),
    },
    {
      cursor: "processedInteractions",
      records: (b) => b.interactions ?? [],
      apply: (tx, accountId, records, offset) =>
        applyInteractions(tx, accountId, records, Date.now(), deps.capacity, offset),
    },
  ];
  // An erasure keeps every record's position (it writes null in its place), so lengths never change.
  const remaining = (p: Phase) => p.records(batch).length - cursor[p.cursor];
  const chunkSize = deps.config.ingestionChunkSize;

  while (!signal.aborted) {
    const phase = phases.find((p) => remaining(p) > 0);
    if (phase === undefined) {
      // Written after the last chunk's usage count and cache notices, so a client that sees the final
      // state also sees their effects.
      const finished = await db
        .update(ingestionJobs)
        .set(finalState)
        .where(claimed)
        .returning({ id: ingestionJobs.id });
      if (finished.length === 0) throw new JobClaimLostError(job.id);
      return;
    }
    const start = cursor[phase.cursor];
    const { records, result } = await db.transaction(async (tx) => {
      // Taken first, before any end user is touched, as an erasure takes it (see the top of this file).
      const [locked] = await tx
        .select({ payloadRevision: ingestionJobs.payloadRevision })
        .from(ingestionJobs)
        .where(and(claimed, eq(CURSOR_COLUMNS[phase.cursor], start)))
        .for("update");
      if (locked === undefined) throw new JobClaimLostError(job.id);
      if (locked.payloadRevision !== revision) {
        const [current] = await tx
          .select({ payload: ingestionJobs.payload })
          .from(ingestionJobs)
          .where(eq(ingestionJobs.id, job.id));
        batch = (current?.payload ?? {}) as StoredBatch;
        revision = locked.payloadRevision;
      }
      const records = phase.records(batch).slice(start, start + chunkSize);
      const chunk = await phase.apply(tx, job.accountId, records, start);
      if (deps.chunkDelayMs !== undefined && deps.chunkDelayMs > 0) await Bun.sleep(deps.chunkDelayMs);
      // The cursor advance commits with the chunk's writes; it only matches while this worker still holds
      // the claim and the cursor is where this chunk started, otherwise the whole chunk rolls back.
      const advanced = await tx
        .update(ingestionJobs)
        .set({
          [phase.cursor]: start + records.length,
          errors: sql`${ingestionJobs.errors} || ${JSON.stringify(chunk.errors)}::jsonb`,
          heartbeatAt: sql`now()`,
        })
        .where(and(claimed, eq(CURSOR_COLUMNS[phase.cursor], start)))
        .returning({ id: ingestionJobs.id });
      if (advanced.length === 0) throw new JobClaimLostError(job.id);
      return { records, result: chunk };
    });
    cursor[phase.cursor] = start + records.length;
    const applied = records.length - erasedRecords(records) - result.errors.length;
    if (applied > 0) deps.onApplied?.(job.accountId, applied);
    announce(deps.events, job.accountId, result);
    await deps.afterChunk?.(job.id);
  }
}

/** The terminal columns. The stored request holds personal data: it is dropped once applied, so erasure
 * leaves no copy. */
const finalState = {
  status: sql`case when jsonb_array_length(${ingestionJobs.errors}) > 0
    then 'completed_with_errors' else 'completed' end`,
  payload: null,
  finishedAt: sql`now()`,
  claimedBy: null,
  heartbeatAt: null,
};

/** Tells the caches what the committed chunk changed. */
function announce(events: IngestionDeps["events"], accountId: number, result: ChunkResult): void {
  if (result.productIds.length > 0) {
    events.productsChanged.emit({ accountId, externalIds: result.productIds, deleted: false });
  }
  for (const externalId of result.endUserIds) events.endUserUpdated.emit({ accountId, externalId });
  for (const [endUserId, entry] of result.interactionsByUser) {
    events.interactionsRecorded.emit({
      accountId,
      endUserId,
      externalUserId: entry.externalUserId,
      interactions: entry.interactions,
    });
  }
}
