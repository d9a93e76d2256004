/**
 * Stores a finished run and decides its publication in one transaction: the model row, its artifact (chunks
 * on Postgres, a file renamed into place on the embedded store), the publication flag and the job's
 * terminal state commit together, so there is never a model without its bytes, a published model whose job
 * still looks unfinished, or two published models. A per-account
 * advisory lock serialises two runs of one account finishing at once (in any process), so each compares
 * against the model that is really published at that moment.
 */
import { and, desc, eq, ne, sql } from "drizzle-orm";
import type { Database, DbOrTx } from "../db/client";
import { models, trainingJobs } from "../db/schema";
import type { ArtifactCache } from "../snapshots/artifact-cache";
import { writeArtifact } from "./artifact-store";
import { decidePublication, type PublicationDecision } from "./decide";
import type { RankingFigures, TrainResult } from "./worker-protocol";

export class ClaimLostError extends Error {
  override name = "ClaimLostError";
}

export interface StoreModelInput {
  jobId: number;
  accountId: number;
  workerId: string;
  artifact: StagedArtifact;
  result: TrainResult;
  counts: { users: number; items: number; interactions: number };
  /** The account's erasure count read before the run loaded its data (see decide.ts). */
  erasuresSeen: number;
}

/**
 * A run's artifact before the model has an id: its bytes (written into the database) and/or the file the
 * training worker wrote (renamed to the model's name under `files`).
 */
export interface StagedArtifact {
  readonly bytes: Uint8Array | null;
  readonly length: number;
  readonly path: string | null;
}

export interface StoredModel {
  modelId: number;
  decision: PublicationDecision;
}

/**
 * With `files`, a staged file becomes the model's file inside the transaction, before it commits: on the
 * embedded store (primary files) that file is the artifact, so a committed model row always has it; a
 * rolled-back row leaves its file behind only until it is removed here.
 */
export async function storeModel(
  database: Database,
  input: StoreModelInput,
  files?: ArtifactCache,
): Promise<StoredModel> {
  const { accountId, artifact } = input;
  if (artifact.bytes === null && (files?.primary !== true || artifact.path === null)) {
    throw new Error("the model's artifact has nowhere to be stored");
  }
  let adopted: number | undefined;
  try {
    return await storeInTransaction(database, input, async (modelId) => {
      if (artifact.path !== null && files !== undefined) {
        adopted = modelId;
        await files.adopt(artifact.path, accountId, modelId);
      }
    });
  } catch (error) {
    if (adopted !== undefined) await files?.discard(accountId, adopted);
    throw error;
  }
}

async function storeInTransaction(
  database: Database,
  input: StoreModelInput,
  placeFile: (modelId: number) => Promise<void>,
): Promise<StoredModel> {
  const { accountId, result } = input;
  return database.db.transaction(async (tx) => {
    await lockModelPublication(tx, accountId);
    const [current] = await tx
      .select({ id: models.id, metrics: models.metrics, erasuresSeen: models.erasuresSeen })
      .from(models)
      .where(and(eq(models.accountId, accountId), eq(models.isPublished, true)))
      .orderBy(desc(models.id))
      .limit(1);
    const decision = decidePublication(
      current,
      result.metrics,
      { outcome: result.baseline, metrics: result.baselineMetrics },
      input.erasuresSeen,
    );
    const [next] = await database.rows<{ version: number }>(
      sql`select coalesce(max(version), 0)::int + 1 as version from models where account_id = ${accountId}`,
      tx,
    );
    const [model] = await tx
      .insert(models)
      .values({
        accountId,
        version: next?.version ?? 1,
        algorithm: result.algorithm,
        params: result.params,
        trainingSeconds: result.trainingSeconds,
        counts: input.counts,
        metrics: metricsRecord(result.metrics),
        isPublished: decision.published,
        artifactBytes: input.artifact.length,
        erasuresSeen: input.erasuresSeen,
      })
      .returning({ id: models.id });
    const modelId = model!.id;
    if (input.artifact.bytes !== null) await writeArtifact(tx, { accountId, modelId }, input.artifact.bytes);
    await placeFile(modelId);
    if (decision.published) {
      await tx
        .update(models)
        .set({ isPublished: false })
        .where(and(eq(models.accountId, accountId), eq(models.isPublished, true), ne(models.id, modelId)));
    }
    const finished = await tx
      .update(trainingJobs)
      .set({
        status: "completed",
        progress: 100,
        stage: "done",
        modelId,
        metrics: { ...metricsRecord(result.metrics), decision: { ...decision } },
        error: null,
        claimedBy: null,
        heartbeatAt: null,
        finishedAt: new Date(),
      })
      .where(
        and(
          eq(trainingJobs.id, input.jobId),
          eq(trainingJobs.claimedBy, input.workerId),
          eq(trainingJobs.status, "running"),
        ),
      )
      .returning({ id: trainingJobs.id });
    // Another process reclaimed the job (our heartbeat stalled): roll back so it is stored once, by them.
    if (finished.length === 0) throw new ClaimLostError(`training job ${input.jobId} is no longer ours`);
    return { modelId, decision };
  });
}

/**
 * The account's lock for storing a model, held until the transaction ends. Whatever else changes the
 * account's models (the sandbox reset) takes it too, so a run that finishes meanwhile either commits before
 * and is seen, or finds its job gone and rolls back.
 */
export async function lockModelPublication(tx: DbOrTx, accountId: number): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext('training-publish'), ${accountId})`);
}

function metricsRecord(m: RankingFigures): Record<string, unknown> {
  return {
    ndcgAt10: m.ndcgAt10,
    recallAt20: m.recallAt20,
    coverageAt10: m.coverageAt10,
    popularityNdcgAt10: m.popularityNdcgAt10,
    evaluatedUsers: m.evaluatedUsers,
    note: m.note,
  };
}
