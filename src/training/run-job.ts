/**
 * One training job, as a pipeline of plain steps: load (main thread, streaming from the database) → fit and
 * evaluate (Bun Worker) → store and decide publication (one transaction) → announce. A job interrupted at
 * any point is simply trained again from the start by the next claim: nothing is written before the final
 * transaction, so a retry can never publish twice.
 */
import { and, desc, eq, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { models, trainingJobs } from "../db/schema";
import type { Metrics } from "../http/metrics";
import type { ClaimedJob } from "../jobs/row-queue";
import type { JobRunContext } from "../jobs/runner";
import type { Logger } from "../shared/logger";
import type { ArtifactCache } from "../snapshots/artifact-cache";
import {
  MODEL_PUBLISHED_CHANNEL,
  type ModelPublishedEvent,
  type SnapshotRegistry,
} from "../snapshots/registry";
import { toEngineOptions } from "./engine-api";
import { loadTrainingData } from "./load-data";
import { ProgressWriter } from "./progress";
import { ClaimLostError, storeModel } from "./store-model";
import { TrainingAbortedError, TrainingDataError, trainInWorker } from "./train-in-worker";

export interface TrainingDeps {
  readonly database: Database;
  readonly logger: Logger;
  readonly snapshots: SnapshotRegistry;
  /**
   * Artifact files under DATA_DIR: the artifacts themselves on the embedded store (`primary`), local copies
   * on Postgres. Absent: artifacts are stored in the database only.
   */
  readonly artifacts?: ArtifactCache;
  readonly metrics?: Pick<Metrics, "observeTraining" | "trainingFailed">;
}

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
    .select({ options: trainingJobs.options })
    .from(trainingJobs)
    .where(and(eq(trainingJobs.id, job.id), eq(trainingJobs.accountId, job.accountId)));
  if (row === undefined) return;
  await progress.update("loading", 1, { force: true });

  const data = await loadTrainingData(database, job.accountId, (loaded, total) => {
    progress.update("loading", 1 + Math.floor((9 * loaded) / Math.max(1, total)));
  });
  if (context.signal.aborted) return;
  if (data.productIds.length === 0) {
    return failJob(deps, job, context, "The account has no products to train on");
  }
  if (data.events.user.length === 0) {
    return failJob(deps, job, context, "The account has no interactions with current products to train on");
  }
  const counts = {
    users: data.events.nUsers,
    items: data.events.nItems,
    interactions: data.events.user.length,
  };
  log.info("training data loaded", counts);
  await progress.update("training", 10, { force: true });
  // The published model's configuration is refit on this run's split, so both are measured on one hold-out.
  const [published] = await database.db
    .select({ modelId: models.id, params: models.params })
    .from(models)
    .where(and(eq(models.accountId, job.accountId), eq(models.isPublished, true)))
    .orderBy(desc(models.id))
    .limit(1);

  // The worker encodes the artifact and writes it to a staging file: on the embedded store that file is the
  // only copy (nothing of its size goes through PGlite, which runs on this thread), on Postgres it becomes
  // this process's local copy while the bytes also come back for the database.
  const files = deps.artifacts;
  const staging = files === undefined ? null : await files.stagingPath(job.accountId, job.id);
  const keepBytes = files?.primary !== true;
  let result: Awaited<ReturnType<typeof trainInWorker>>;
  try {
    result = await trainInWorker(
      {
        type: "train",
        events: data.events,
        items: data.items,
        // The hold-out is drawn by a hash of stable ids, so it does not depend on the order rows were read in.
        options: {
          ...toEngineOptions(row.options),
          splitKeys: { users: data.endUserIds, items: data.productIds },
        },
        published: published ?? null,
        artifact: {
          ids: {
            productIds: data.productIds,
            externalIds: data.externalIds,
            endUserIds: data.endUserIds,
            meanRating: data.meanRating,
            ratingCount: data.ratingCount,
          },
          path: staging,
          keepBytes,
        },
      },
      (stage, percent) => progress.update(stage, 10 + Math.floor(0.8 * Math.min(100, Math.max(0, percent)))),
      context.signal,
    );
  } catch (error) {
    if (staging !== null) await files?.discard(staging);
    if (error instanceof TrainingAbortedError) return;
    if (error instanceof TrainingDataError) return failJob(deps, job, context, error.message);
    throw error;
  }
  const artifact = result.artifact;
  try {
    if (context.signal.aborted || artifact === null) return;
    await progress.update("storing", 92, { force: true });
    progress.close();
    let stored: Awaited<ReturnType<typeof storeModel>>;
    try {
      stored = await storeModel(
        database,
        { jobId: job.id, accountId: job.accountId, workerId: context.workerId, artifact, result, counts },
        files,
      );
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
  stored: Awaited<ReturnType<typeof storeModel>>,
  startedAt: number,
  artifactBytes: number,
  trainingSeconds: number,
): Promise<void> {
  const log = deps.logger.child({ trainingJobId: job.id, accountId: job.accountId });
  deps.metrics?.observeTraining((performance.now() - startedAt) / 1000);
  log.info("training job completed", {
    modelId: stored.modelId,
    published: stored.decision.published,
    reason: stored.decision.reason,
    artifactBytes,
    trainingSeconds,
  });
  void deps.artifacts?.settleAccount(job.accountId, stored.decision.published ? stored.modelId : null);
  if (stored.decision.published) {
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

async function failJob(
  deps: TrainingDeps,
  job: ClaimedJob,
  context: JobRunContext,
  reason: string,
): Promise<void> {
  deps.metrics?.trainingFailed();
  await deps.database.rows(sql`
    update training_jobs set status = 'failed', error = ${reason}, stage = 'failed', claimed_by = null,
      heartbeat_at = null, finished_at = now()
    where id = ${job.id} and claimed_by = ${context.workerId} and status = 'running'`);
}
