/**
 * Whether a new model replaces the published one. An account's first model is always published; after
 * that a model must be at least as good on NDCG@10 as the published model's figure from the same protocol.
 */
import type { RankingFigures } from "./worker-protocol";

export interface PublicationDecision {
  published: boolean;
  reason: string;
  comparedOn: "first-model" | "stored-metrics";
  newNdcgAt10: number | null;
  publishedNdcgAt10: number | null;
  previousModelId: number | null;
}

export interface PublishedModel {
  id: number;
  metrics: Record<string, unknown>;
}

/** Rounding noise between two float evaluations must not make an equal model "worse". */
const TOLERANCE = 1e-9;

export function decidePublication(
  current: PublishedModel | undefined,
  metrics: RankingFigures,
): PublicationDecision {
  const newNdcgAt10 = metrics.ndcgAt10;
  if (current === undefined) {
    return {
      published: true,
      reason:
        newNdcgAt10 === null
          ? `First model of the account: published (not evaluated: ${metrics.note ?? "insufficient data"})`
          : "First model of the account: published",
      comparedOn: "first-model",
      newNdcgAt10,
      publishedNdcgAt10: null,
      previousModelId: null,
    };
  }
  const stored = current.metrics.ndcgAt10;
  const publishedNdcgAt10 = typeof stored === "number" && Number.isFinite(stored) ? stored : null;
  const base = {
    comparedOn: "stored-metrics" as const,
    newNdcgAt10,
    publishedNdcgAt10,
    previousModelId: current.id,
  };
  if (newNdcgAt10 === null && publishedNdcgAt10 === null) {
    return {
      ...base,
      published: true,
      reason:
        "Neither model could be evaluated (too little data); the model trained on newer data is published",
    };
  }
  if (newNdcgAt10 === null) {
    return {
      ...base,
      published: false,
      reason: `The new model could not be evaluated (${metrics.note ?? "insufficient data"}); model ${current.id} stays published`,
    };
  }
  if (publishedNdcgAt10 === null) {
    return {
      ...base,
      published: true,
      reason: `Model ${current.id} has no evaluation to compare with; the evaluated new model is published`,
    };
  }
  const fmt = (x: number) => x.toFixed(4);
  if (newNdcgAt10 + TOLERANCE >= publishedNdcgAt10) {
    return {
      ...base,
      published: true,
      reason: `NDCG@10 ${fmt(newNdcgAt10)} ≥ ${fmt(publishedNdcgAt10)} of model ${current.id}: published`,
    };
  }
  return {
    ...base,
    published: false,
    reason: `NDCG@10 ${fmt(newNdcgAt10)} < ${fmt(publishedNdcgAt10)} of model ${current.id}: kept the published model`,
  };
}
