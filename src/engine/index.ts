/**
 * Recommendation engine: pure algorithms over typed arrays (no HTTP, no database).
 *
 * Training (run it in a Worker):
 *   trainModel({ events, items }, options, onProgress) → { model, metrics, params, trainingSeconds }
 *     split → validation search (λ / ALS params, blend weights) → fit on the training part and measure
 *     NDCG@10 / Recall@20 / coverage@10 against popularity on the hold-out → refit on all events.
 *   serializeModel(model) → Uint8Array; deserializeModel(bytes) → Model (zero-copy typed-array views, mostly-zero
 *   arrays expanded); modelArrayBytes(model) → its in-memory size.
 *
 * Ranking (items are dense indices; callers map external ids). ranking/ holds the pure ranking: the blend
 * (blend.ts), its components (components.ts), candidates (candidates.ts), diversity, strategy weights, the
 * model-signal interfaces; src/modules/recommendations/ranking/rank.ts runs them over a tenant's item table
 * and caches. Training evaluates with the same blend:
 *   scoreForUser(model, history) → Float32Array over all items, the model's tuned blend (ranking/personal.ts)
 *   scaleToUnit, blendInto, tunedWeights, interactionWeight   the one blend (ranking/blend.ts)
 *   topK(scores, k, predicate?, exclude?)      heap selection, best first
 *   foldInUser(basis, history) → user factor vector (one k×k solve)
 *   annIndexes(model), detachFromArtifact(model) a loaded model's HNSW indexes (ann-files.ts)
 *
 * Building blocks (also used by benchmarks and tests): weighting, CSR matrices, implicit ALS (CG), EASE,
 * co-occurrence, hashed TF-IDF content vectors, popularity/trending, hold-out evaluation, HNSW wrapper,
 * C kernels with TypeScript fallbacks (native.ts).
 */
export { type AlsFactors, type AlsOptions, alsLoss, DEFAULT_ALS, fitAls } from "./als";
export { type AnnFiles, annIndexes, attachAnnIndexes, detachFromArtifact } from "./ann-files";
export { buildCategoryIndex, type CategoryIndex, findCategory } from "./categories";
export {
  addContentRow,
  buildContentVectors,
  type ContentOptions,
  type ContentVectors,
  contentAnnRows,
  contentDot,
  contentRow,
  contentRowsDot,
} from "./content";
export { buildCooccurrence, type CooccurrenceOptions } from "./cooccurrence";
export { type EaseModel, type EaseOptions, easeScores, fitEase } from "./ease";
export {
  evaluateRanking,
  type HoldoutSplit,
  heldOutSets,
  holdoutSplit,
  type RankingMetrics,
  type SplitOptions,
} from "./evaluate";
export { type FoldInBasis, foldInUser, scoreFactors } from "./fold-in";
export {
  type AnnIndex,
  type AnnOptions,
  type AnnRows,
  type AnnSpace,
  buildAnnIndex,
  denseRows,
  deserializeAnnIndex,
  exactSearch,
  foldedSearches,
  type Neighbours,
  placeAnnIndexFile,
  readAnnIndexFileAsync,
  searchAnn,
  serializeAnnIndex,
} from "./hnsw";
export { spdInverse } from "./linalg";
export type { BlendWeights, Model } from "./model";
export { nativeKernels } from "./native";
export {
  computePopularity,
  DAYPARTS,
  type Daypart,
  daypartOfHour,
  type PopularityModel,
  type PopularityOptions,
} from "./popularity";
export {
  blendInto,
  interactionWeight,
  type RankComponent,
  type RankWeights,
  scaleToUnit,
  tunedWeights,
} from "./ranking/blend";
export { rankForUser, scoreForUser } from "./ranking/personal";
export { deserializeModel, modelArrayBytes, serializeModel } from "./serialize";
export { buildCsr, type Csr, transposeCsr } from "./sparse";
export { topK } from "./topk";
export {
  evaluateConfiguration,
  type TrainInput,
  type TrainMetrics,
  type TrainOptions,
  type TrainResult,
  trainModel,
} from "./train";
export { EventType, type History, type Interactions, type ItemMeta, type ProgressFn } from "./types";
export { buildWeightedMatrix, DEFAULT_WEIGHTS, eventWeights, type WeightConfig } from "./weighting";
