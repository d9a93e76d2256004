/**
 * The one place where the service's training and snapshot code meets the engine (src/engine), so a change
 * in the engine's surface is absorbed here rather than across the pipeline. The training worker imports it,
 * so it stays free of database code.
 */
import {
  deserializeModel,
  evaluateConfiguration,
  type Interactions,
  type ItemMeta,
  type Model,
  type ProgressFn,
  serializeModel,
  type TrainOptions,
  trainModel,
} from "../engine";
import { reproduceOptions, sameConfiguration } from "./reproduce-params";
import type { BaselineOutcome, PublishedConfiguration, RankingFigures, TrainResult } from "./worker-protocol";

export type { EngineInteractions, EngineItemMeta, EngineModel, EngineTrainOptions } from "./engine-types";

/**
 * The API's training options (validated by the route's schema, stored on the job) → engine options.
 * An explicit regularization turns the hyper-parameter search off: the caller asked for that value, and the
 * search would otherwise replace it with the best one on its grid.
 */
export function toEngineOptions(raw: Record<string, unknown>): TrainOptions {
  const num = (key: string): number | undefined =>
    typeof raw[key] === "number" ? (raw[key] as number) : undefined;
  const options: TrainOptions = {};
  const als: NonNullable<TrainOptions["als"]> = {};
  const factors = num("factors");
  const iterations = num("iterations");
  const regularization = num("regularization");
  const halfLifeDays = num("halfLifeDays");
  if (factors !== undefined) als.factors = factors;
  if (iterations !== undefined) als.iterations = iterations;
  if (regularization !== undefined) {
    // ALS and EASE penalties live on different scales (≈0.1 vs ≈200): the value goes to the model family
    // the caller forced, and to ALS otherwise.
    if (raw.algorithm === "ease") options.lambda = regularization;
    else als.regularization = regularization;
    options.search = false;
  }
  if (Object.keys(als).length > 0) options.als = als;
  if (halfLifeDays !== undefined) options.weights = { halfLifeDays };
  // The engine uses EASE when the catalogue fits its item budget with items seen by at most
  // `maxEaseMinSupport` users dropped; 0 can never be met (forces ALS), 63 always is (forces EASE).
  if (raw.algorithm === "als") options.maxEaseMinSupport = 0;
  if (raw.algorithm === "ease") options.maxEaseMinSupport = 63;
  return options;
}

/**
 * Fits, evaluates and serializes; runs inside the training worker. With a published model, its
 * configuration is then fit on the same training part and measured on the same hold-out (cheap: no search,
 * no refit on all data), so publication compares two figures from one protocol on one data set.
 */
export function runEngineTraining(
  events: Interactions,
  items: ItemMeta[],
  options: TrainOptions,
  published: PublishedConfiguration | null,
  onProgress: ProgressFn,
): Omit<TrainResult, "type" | "artifact" | "engineBytes"> & { engineBytes: Uint8Array } {
  const share = published === null ? 1 : 0.85;
  const trained = trainModel({ events, items }, options, (stage, pct) => onProgress(stage, pct * share));
  const metrics = rankingFigures(trained.metrics);
  const compared =
    published === null
      ? { baselineMetrics: null, baseline: null }
      : scorePublished(events, items, options, published, trained.params, metrics, (stage, pct) =>
          onProgress(`baseline:${stage}`, 85 + 0.15 * pct),
        );
  return {
    engineBytes: serializeModel(trained.model),
    algorithm: typeof trained.params.primary === "string" ? trained.params.primary : "als",
    params: trained.params,
    trainingSeconds: trained.trainingSeconds,
    metrics,
    ...compared,
  };
}

function scorePublished(
  events: Interactions,
  items: ItemMeta[],
  options: TrainOptions,
  published: PublishedConfiguration,
  newParams: Record<string, unknown>,
  newMetrics: RankingFigures,
  onProgress: ProgressFn,
): { baselineMetrics: RankingFigures | null; baseline: BaselineOutcome } {
  const { modelId } = published;
  const reproduced = reproduceOptions(published.params, options);
  if (typeof reproduced === "string") {
    return { baselineMetrics: null, baseline: { modelId, method: "not-reproducible", note: reproduced } };
  }
  if (sameConfiguration(published.params, newParams, options)) {
    return {
      baselineMetrics: newMetrics,
      baseline: { modelId, method: "identical-configuration", note: null },
    };
  }
  try {
    const scored = evaluateConfiguration({ events, items }, reproduced, onProgress);
    if (scored.primary !== published.params.primary) {
      const note = `its ${String(published.params.primary)} model does not fit this data (the engine chose ${scored.primary})`;
      return { baselineMetrics: null, baseline: { modelId, method: "not-reproducible", note } };
    }
    return {
      baselineMetrics: rankingFigures(scored.metrics),
      baseline: { modelId, method: "refit-on-same-split", note: null },
    };
  } catch (error) {
    const note = `refitting it failed: ${error instanceof Error ? error.message : String(error)}`;
    return { baselineMetrics: null, baseline: { modelId, method: "not-reproducible", note } };
  }
}

function rankingFigures(m: ReturnType<typeof trainModel>["metrics"]): RankingFigures {
  return {
    ndcgAt10: m.ndcgAt10,
    recallAt20: m.recallAt20,
    coverageAt10: m.coverageAt10,
    popularityNdcgAt10: m.popularityNdcgAt10,
    evaluatedUsers: m.evaluatedUsers,
    note: m.note ?? null,
  };
}

export function deserializeEngineModel(bytes: Uint8Array): Model {
  return deserializeModel(bytes);
}
