/** Database rows → response objects, field by field: responses must carry exactly their schema's fields. */
import type { models, trainingJobs } from "../../db/schema";
import type {
  ModelMetadataType,
  ModelMetricsType,
  TrainingJobMetricsType,
  TrainingJobStatusType,
} from "./schemas";

type JobRow = typeof trainingJobs.$inferSelect;
type ModelRow = typeof models.$inferSelect;

const JOB_STATES = ["queued", "running", "completed", "failed"] as const;

const numberOrNull = (value: unknown): number | null =>
  typeof value === "number" && Number.isFinite(value) ? value : null;

export function toModelMetrics(raw: Record<string, unknown> | null | undefined): ModelMetricsType {
  const m = raw ?? {};
  return {
    ndcgAt10: numberOrNull(m.ndcgAt10),
    recallAt20: numberOrNull(m.recallAt20),
    coverageAt10: numberOrNull(m.coverageAt10),
    popularityNdcgAt10: numberOrNull(m.popularityNdcgAt10),
    evaluatedUsers: Math.max(0, Math.trunc(numberOrNull(m.evaluatedUsers) ?? 0)),
    note: typeof m.note === "string" ? m.note : null,
  };
}

function toJobMetrics(raw: Record<string, unknown> | null): TrainingJobMetricsType | null {
  if (raw === null) return null;
  const d = raw.decision as Record<string, unknown> | null | undefined;
  const comparedOn = d?.comparedOn;
  return {
    ...toModelMetrics(raw),
    decision:
      d === null || d === undefined || typeof d !== "object"
        ? null
        : {
            published: d.published === true,
            reason: typeof d.reason === "string" ? d.reason : "",
            comparedOn:
              comparedOn === "stored-metrics" || comparedOn === "same-holdout" ? comparedOn : "first-model",
            publishedEvaluation: publishedEvaluation(d.publishedEvaluation, comparedOn),
            newNdcgAt10: numberOrNull(d.newNdcgAt10),
            publishedNdcgAt10: numberOrNull(d.publishedNdcgAt10),
            previousModelId: numberOrNull(d.previousModelId),
          },
  };
}

export function toJobStatus(row: JobRow): TrainingJobStatusType {
  const status = JOB_STATES.find((s) => s === row.status) ?? "failed";
  return {
    jobId: row.id,
    taskId: row.taskId,
    status,
    progress: Math.min(100, Math.max(0, row.progress)),
    stage: row.stage,
    createdAt: row.createdAt.toISOString(),
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
    error: row.error,
    modelId: row.modelId,
    metrics: toJobMetrics(row.metrics),
  };
}

export function toModelMetadata(row: ModelRow): ModelMetadataType {
  return {
    modelId: row.id,
    version: row.version,
    createdAt: row.createdAt.toISOString(),
    algorithm: row.algorithm,
    params: { ...row.params },
    trainingSeconds: row.trainingSeconds,
    counts: {
      users: row.counts.users,
      items: row.counts.items,
      interactions: row.counts.interactions,
    },
    metrics: toModelMetrics(row.metrics),
    isPublished: row.isPublished,
  };
}

/** Decisions stored before publishedEvaluation existed compared stored figures (or had no predecessor). */
function publishedEvaluation(
  raw: unknown,
  comparedOn: unknown,
): "refit-on-same-split" | "identical-configuration" | "stored-metrics" | null {
  if (raw === "refit-on-same-split" || raw === "identical-configuration" || raw === "stored-metrics")
    return raw;
  return comparedOn === "stored-metrics" ? "stored-metrics" : null;
}
