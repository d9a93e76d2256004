/**
 * Runs a bulk-ingestion job. The accepted request is stored with the job; it is applied in chunks, and each
 * chunk's writes, its record errors and the advance of the job's processed-cursor commit in ONE transaction
 * that also locks the job row and checks this worker still holds the claim. A job resumed after a crash
 * therefore continues exactly where the last committed chunk ended: no record is applied twice or skipped.
 * Order: products, then users, then interactions (which may name products of the same batch).
 */
import { and, eq, sql } from "drizzle-orm";
import type { AppEvents } from "../../app-events";
import type { Config } from "../../config";
import type { Database, Tx } from "../../db/client";
import { ingestionJobs } from "../../db/schema";
import { type ClaimedJob, rowQueue } from "../../jobs/row-queue";
import { JobClaimLostError, type JobKind, type JobRunContext } from "../../jobs/runner";
import { applyInteractions, applyProducts, applyUsers, type CapacityCheck, type ChunkResult } from "./apply";
import { type StoredBatch, takePayload } from "./handoff";

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
  records: readonly unknown[];
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
  // Read once per claim: while the claim is held no one else moves the cursor, and every chunk's write
  // below re-checks the claim and the cursor it started from. The payload is immutable: the copy the route
  // handed over in this process, else the stored one.
  const handed = takePayload(deps.database, job.id);
  const [stored] = await db
    .select({ ...(handed === undefined ? { payload: ingestionJobs.payload } : {}), ...CURSOR_COLUMNS })
    .from(ingestionJobs)
    .where(claimed);
  if (stored === undefined) throw new JobClaimLostError(job.id);
  const batch = handed ?? ((("payload" in stored ? stored.payload : null) ?? {}) as StoredBatch);
  const cursor: Record<Cursor, number> = {
    processedProducts: stored.processedProducts,
    processedUsers: stored.processedUsers,
    processedInteractions: stored.processedInteractions,
  };
  const phases: Phase[] = [
    {
      cursor: "processedProducts",
      records: batch.products ?? [],
      apply: (tx, accountId, records, offset) => applyProducts(tx, accountId, records, deps.capacity, offset),
    },
    {
      cursor: "processedUsers",
      records: batch.users ?? [],
      apply: (tx, accountId, records, offset) => applyUsers(tx, accountId, records, deps.capacity, offset),
    },
    {
      cursor: "processedInteractions",
      records: batch.interactions ?? [],
      apply: (tx, accountId, records, offset) =>
        applyInteractions(tx, accountId, records, Date.now(), deps.capacity, offset),
    },
  ];
  const remaining = (p: Phase) => p.records.length - cursor[p.cursor];
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
    const records = phase.records.slice(start, start + chunkSize);
    const result = await db.transaction(async (tx) => {
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
      return chunk;
    });
    cursor[phase.cursor] = start + records.length;
    const applied = records.length - result.errors.length;
    if (applied > 0) deps.onApplied?.(job.accountId, applied);
    announce(deps.events, job.accountId, result);
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
