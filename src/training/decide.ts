/**
 * Whether a new model replaces the published one. An account's first model is always published; after
 * that a model must be at least as good on NDCG@10 as the published model on the same hold-out: the
 * published configuration refit on the new run's training part (or the same figure when both runs chose
 * one configuration). Only when that was impossible is the published model's stored figure used. A model
 * trained after end users were erased replaces one trained before, whatever the figures: the erased end
 * users' interactions must stop shaping what is served.
 */
import type { BaselineOutcome, RankingFigures } from "./worker-protocol";

export interface PublicationDecision {
  published: boolean;
  reason: string;
  comparedOn: "first-model" | "same-holdout" | "stored-metrics";
  /** How the published figure was obtained; null for a first model. */
  publishedEvaluation: "refit-on-same-split" | "identical-configuration" | "stored-metrics" | null;
  newNdcgAt10: number | null;
  publishedNdcgAt10: number | null;
  previousModelId: number | null;
}

/** The published model's figures on the new run's hold-out, as the training worker returned them. */
export interface SameHoldoutBaseline {
  outcome: BaselineOutcome | null;
  metrics: RankingFigures | null;
}

export interface PublishedModel {
  id: number;
  metrics: Record<string, unknown>;
  /** The account's erasure count its training read before loading its data (absent: 0). */
  erasuresSeen?: number;
}

/** Rounding noise between two float evaluations must not make an equal model "worse". */
const TOLERANCE = 1e-9;

export function decidePublication(
  current: PublishedModel | undefined,
  metrics: RankingFigures,
  baseline: SameHoldoutBaseline = { outcome: null, metrics: null },
  erasuresSeen = 0,
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
      publishedEvaluation: null,
      newNdcgAt10,
      publishedNdcgAt10: null,
      previousModelId: null,
    };
  }
  const { outcome } = baseline;
  const sameHoldout =
    outcome !== null &&
    outcome.modelId === current.id &&
    outcome.method !== "not-reproducible" &&
    baseline.metrics !== null;
  const stored = current.metrics.ndcgAt10;
  const publishedNdcgAt10 = sameHoldout
    ? (baseline.metrics?.ndcgAt10 ?? null)
    : typeof stored === "number" && Number.isFinite(stored)
      ? stored
      : null;
  const base = {
    comparedOn: sameHoldout ? ("same-holdout" as const) : ("stored-metrics" as const),
    publishedEvaluation: sameHoldout ? outcome.method : ("stored-metrics" as const),
    newNdcgAt10,
    publishedNdcgAt10,
    previousModelId: current.id,
  };
  const how = sameHoldout
    ? outcome.method === "identical-configuration"
      ? " (same configuration as the new model, so the same figure on the same hold-out)"
      : " (its configuration refit on the same training split, same hold-out)"
    : ` (stored figure from its own hold-out: ${fallbackWhy(current.id, outcome)})`;
  const fmt = (x: number | null) => (x === null ? "not evaluated" : x.toFixed(4));
  if (erasuresSeen > (current.erasuresSeen ?? 0)) {
    return {
      ...base,
      published: true,
      reason:
        `Model ${current.id} was trained on interactions of end users erased since; this model, trained ` +
        `without them, is published whatever its figures (NDCG@10 ${fmt(newNdcgAt10)}, model ` +
        `${current.id} ${fmt(publishedNdcgAt10)}${how})`,
    };
  }
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
  if (newNdcgAt10 + TOLERANCE >= publishedNdcgAt10) {
    return {
      ...base,
      published: true,
      reason: `NDCG@10 ${fmt(newNdcgAt10)} ≥ ${fmt(publishedNdcgAt10)} of model ${current.id}${how}: published`,
    };
  }
  return {
    ...base,
    published: false,
    reason: `NDCG@10 ${fmt(newNdcgAt10)} < ${fmt(publishedNdcgAt10)} of model ${current.id}${how}: kept the published model`,
  };
}

function fallbackWhy(currentId: number, outcome: BaselineOutcome | null): string {
  if (outcome === null) return "its configuration was not refit";
  if (outcome.modelId !== currentId) return `model ${currentId} was published while this run trained`;
  return `its configuration cannot be reproduced: ${outcome.note ?? "unknown params"}`;
}
