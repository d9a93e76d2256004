/**
 * One training job, as a pipeline of plain steps: load (in the worker on Postgres; on PGlite, which runs on
 * the main thread, page by page there) → fit and evaluate (Bun Worker) → store and decide publication (one
 * transaction; in the worker on Postgres) → announce. A job interrupted at any point is simply trained again
 * from the start by the next claim: nothing is written before the final transaction, so a retry can never
 * publish twice.
 */
import { and, desc, eq, sql } from "drizzle-orm";
import type { Config } from "../config";
import type { Database } from "../db/client";
import { endUserErasures, models, trainingJobs } from "../db/schema";
import type { Metrics } from "../http/metrics";
import type { ClaimedJob } from "../jobs/row-queue";
import type { JobRunContext } from "../jobs/runner";
import type { Logger } from "../shared/logger";
import type { ArtifactCache } from "../snapshots/artifact-cache";
import { MODEL_PUBLISHED_CHANNEL, type ModelPublishedEvent } from "../snapshots/model-published";
import type { SnapshotRegistry } from "../snapshots/registry";
import { toEngineOptions } from "./engine-api";
import { loadTrainingData } from "./load-data";
import { ProgressWriter } from "./progress";
import { STARTED_BY_ERASURE } from "./started-by";
import { ClaimLostError, lockModelPublication, storeModel } from "./store-model";
import {
  TrainingAbortedError,
  TrainingClaimLostError,
  TrainingDataError,
  type TrainOutcome,
  trainInWorker,
} from "./train-in-worker";
import type { ArtifactIds, StoredRun, TrainingCounts, TrainRequest } from "./worker-protocol";

export interface TrainingDeps {
  /** The C-kernel settings are handed to each training worker (a thread reads no environment). */
  readonly config: Pick<Config, "nativeKernels">;
  readonly database: Database;
  readonly logger: Logger;
  readonly snapshots: SnapshotRegistry;
  /**
   * Artifact files under DATA_DIR: the artifacts themselves on the embedded store (`primary`), local copies
   * on Postgres. Absent: artifacts are stored in the database only.
   */
  readonly artifacts?: ArtifactCache;
  readonly metrics?: Pick<Metrics, "observeTraining" | "trainingFailed">;
  /** The Postgres URL the training worker opens its own connection with to read the data; absent on PGlite. */
  readonly databaseUrl?: string | undefined;
}

/** A request whose worker reads its own data carries no columns (fresh ones: a request's buffers are moved). */
const noEvents = (): TrainRequest["events"] => ({
  user: new Int32Array(0),
  item: new Int32Array(0),
  type: new Uint8Array(0),
  value: new Float32Array(0),
  ts: new Float64Array(0),
  nUsers: 0,
  nItems: 0,
});

const countsOf = (events: TrainRequest["events"]): TrainingCounts => ({
  users: events.nUsers,
  items: events.nItems,
  interactions: events.user.length,
});

export async function runTrainingJob(
  deps: TrainingDeps,
  job: ClaimedJob,
  context: JobRunContext,
): Promise<void> {
  const { database } = deps;
  const startedAt = performance.now();
  const log = deps.logger.child({ trainingJobId: job.id, accountId: job.accountId });
  const progress = new ProgressWriter(database, job.id, context.workerId);
  const [row] = await database.db
    .select({ options: trainingJobs.options, startedBy: trainingJobs.startedBy })
    .from(trainingJobs)
    .where(and(eq(trainingJobs.id, job.id), eq(trainingJobs.accountId, job.accountId)));
  if (row === undefined) return;
  await progress.update("loading", 1, { force: true });
  const onLoading = (loaded: number, total: number) =>
    progress.update("loading", 1 + Math.floor((9 * loaded) / Math.max(1, total)));
  // The published model's configuration is refit on this run's split, so both are measured on one hold-out.
  const [published] = await database.db
    .select({ modelId: models.id, params: models.params })
    .from(models)
    .where(and(eq(models.accountId, job.accountId), eq(models.isPublished, true)))
    .orderBy(desc(models.id))
    .limit(1);
  // Read before the data: an erasure counted here committed before the load began, so the load cannot see
  // its end user's interactions; one that commits later counts past what the model records, and the
  // model is retrained (src/modules/training/erasure-retraining.ts).
  const erasuresSeen = await erasureCount(database, job.accountId);
  const fail = (reason: string) =>
    failJob(deps, job, context, { reason, startedBy: row.startedBy, erasuresSeen });

  // On Postgres the worker reads the data itself, on a connection of its own: hundreds of thousands of rows
  // are then received and converted off this thread. PGlite runs on this thread, so there the rows are read
  // here, a page per turn of the event loop, and their columns moved to the worker.
  let input: Pick<TrainRequest, "events" | "items" | "load" | "store">;
  let ids: ArtifactIds | undefined;
  if (database.kind === "postgres" && deps.databaseUrl !== undefined) {
    input = {
      events: noEvents(),
      items: [],
      load: { databaseUrl: deps.databaseUrl, accountId: job.accountId },
      // The worker stores the run on its connection too: the artifact's chunks are encoded for the wire
      // there (a 200 MB artifact took seconds of this thread's time as hex-encoded parameters).
      store: {
        jobId: job.id,
        workerId: context.workerId,
        artifactDir: deps.artifacts?.dir ?? null,
        erasuresSeen,
      },
    };
  } else {
    const data = await loadTrainingData(database, job.accountId, onLoading);
    if (context.signal.aborted) return;
    if (data.productIds.length === 0) {
      return fail("The account has no products to train on");
    }
    if (data.events.user.length === 0) {
      return fail("The account has no interactions with current products to train on");
    }
    const { events, items, ...rest } = data;
    input = { events, items };
    ids = rest;
  }

  // The worker encodes the artifact and writes it to a staging file: on the embedded store that file is the
  // only copy (nothing of its size goes through PGlite, which runs on this thread), on Postgres it becomes
  // this process's local copy while the worker also writes the bytes into the database.
  const files = deps.artifacts;
  const staging = files === undefined ? null : await files.stagingPath(job.accountId, job.id);
  const keepBytes = files?.primary !== true;
  let result: TrainOutcome;
  let loaded = false;
  const logLoaded = (counts: TrainingCounts) => {
    if (loaded) return;
    loaded = true;
    log.info("training data loaded", { ...counts });
    void progress.update("training", 10, { force: true });
  };
  if (input.load === undefined) logLoaded(countsOf(input.events));
  try {
    result = await trainInWorker(
      {
        type: "train",
        ...input,
        // The worker adds the stable ids it draws the hold-out by (see `trainingSplit`).
        options: toEngineOptions(row.options),
        native: deps.config.nativeKernels,
        published: published ?? null,
        artifact: { ...(ids === undefined ? {} : { ids }), path: staging, keepBytes },
      },
      (stage, percent) => progress.update(stage, 10 + Math.floor(0.8 * Math.min(100, Math.max(0, percent)))),
      context.signal,
      onLoading,
      logLoaded,
    );
  } catch (error) {
    if (staging !== null) await files?.discard(staging);
    if (error instanceof TrainingAbortedError) return;
    if (error instanceof TrainingDataError) return fail(error.message);
    if (error instanceof TrainingClaimLostError) {
      log.warn("training finished after its claim was lost; result discarded");
      return;
    }
    throw error;
  }
  const counts = result.counts;
  const artifact = result.artifact;
  try {
    if (result.stored !== undefined) {
      // Stored by the worker, in the transaction that completed the job.
      progress.close();
      await announce(deps, job, result.stored, startedAt, artifact?.length ?? 0, result.trainingSeconds);
      return;
    }
    if (context.signal.aborted || artifact === null) return;
    await progress.update("storing", 92, { force: true });
    progress.close();
    let stored: StoredRun;
    try {
      const { modelId, decision } = await storeModel(
        database,
        {
          jobId: job.id,
          accountId: job.accountId,
          workerId: context.workerId,
          artifact,
          result,
          counts,
          erasuresSeen,
        },
        files,
      );
      stored = { modelId, published: decision.published, reason: decision.reason };
    } catch (error) {
      if (error instanceof ClaimLostError) {
        log.warn("training finished after its claim was lost; result discarded");
        return;
      }
      throw error;
    }
    await announce(deps, job, stored, startedAt, artifact.length, result.trainingSeconds);
  } finally {
    // Renamed into place when stored; still here when the run ended without a model.
    if (staging !== null) await files?.discard(staging);
  }
}

async function announce(
  deps: TrainingDeps,
  job: ClaimedJob,
  stored: StoredRun,
  startedAt: number,
  artifactBytes: number,
  trainingSeconds: number,
): Promise<void> {
  const log = deps.logger.child({ trainingJobId: job.id, accountId: job.accountId });
  deps.metrics?.observeTraining((performance.now() - startedAt) / 1000);
  log.info("training job completed", {
    modelId: stored.modelId,
    published: stored.published,
    reason: stored.reason,
    artifactBytes,
    trainingSeconds,
  });
  void deps.artifacts?.settleAccount(job.accountId, stored.published ? stored.modelId : null);
  if (stored.published) {
    const event: ModelPublishedEvent = { accountId: job.accountId, modelId: stored.modelId };
    // The job is finished: what follows must not hold up run()'s return (the runner would otherwise see the
    // completed row as a lost claim). NOTIFY reaches every process on the database; this process swaps from
    // the file its worker wrote, so it need not read the bytes back from the database. Both paths are
    // idempotent per model id.
    void deps.snapshots.onModelPublished(event);
    await deps.database.notify(MODEL_PUBLISHED_CHANNEL, JSON.stringify(event)).catch((error: unknown) => {
      log.warn("could not NOTIFY the publication", { error });
    });
  }
}

async function erasureCount(database: Database, accountId: number): Promise<number> {
  const [row] = await database.db
    .select({ erasures: endUserErasures.erasures })
    .from(endUserErasures)
    .where(eq(endUserErasures.accountId, accountId));
  return row?.erasures ?? 0;
}

interface Failure {
  readonly reason: string;
  readonly startedBy: string;
  readonly erasuresSeen: number;
}

/**
 * Fails a job whose data cannot be trained on. When the published model was trained before end users were
 * erased that this run's data no longer holds, no model can replace it, so it stops serving (the account is
 * answered as one without a model) rather than keep serving the erased users' interactions.
 */
async function failJob(
  deps: TrainingDeps,
  job: ClaimedJob,
  context: JobRunContext,
  failure: Failure,
): Promise<void> {
  deps.metrics?.trainingFailed();
  const reason =
    failure.startedBy === STARTED_BY_ERASURE
      ? `Retraining after end-user erasures: ${failure.reason}`
      : failure.reason;
  const { database } = deps;
  const withdrawn = await database.db.transaction(async (tx) => {
    await lockModelPublication(tx, job.accountId);
    const failed = await database.rows(
      sql`
      update training_jobs set status = 'failed', error = ${reason}, stage = 'failed', claimed_by = null,
        heartbeat_at = null, finished_at = now()
      where id = ${job.id} and claimed_by = ${context.workerId} and status = 'running'
      returning id`,
      tx,
    );
    if (failed.length === 0) return [];
    return database.rows<{ id: number }>(
      sql`
      update models set is_published = false
      where account_id = ${job.accountId} and is_published and erasures_seen < ${failure.erasuresSeen}
      returning id`,
      tx,
    );
  });
  if (withdrawn.length === 0) return;
  deps.logger.warn(
    "published model withdrawn: trained before end-user erasures, and no model can replace it",
    {
      accountId: job.accountId,
      modelId: Number(withdrawn[0]!.id),
      trainingJobId: job.id,
    },
  );
  const event: ModelPublishedEvent = { accountId: job.accountId, modelId: null };
  void deps.snapshots.onModelPublished(event);
  await database.notify(MODEL_PUBLISHED_CHANNEL, JSON.stringify(event)).catch((error: unknown) => {
    deps.logger.warn("could not NOTIFY the withdrawal", { error, accountId: job.accountId });
  });
}
