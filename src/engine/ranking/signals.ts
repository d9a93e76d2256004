/**
 * What the ranking needs from a trained model, independent of how the engine stores it. The recommendation
 * module's snapshot adapter (serving/snapshot-signals.ts) implements it over the published engine model;
 * without a model the recommender ranks from popularity and catalogue order alone.
 */
import type { WeightConfig } from "../weighting";
import type { RankWeights } from "./blend";

export interface DenseHistory {
  /** Dense item indices of the user's history, newest first, possibly repeated. */
  items: Int32Array;
  /** Interaction weight per entry (a purchase counts more than a view; dislikes are negative). */
  weights: Float32Array;
}

export interface ScoredItems {
  items: Int32Array;
  scores: Float32Array;
}

/**
 * One request's view of a per-user signal: the user's vector is computed once, then items are scored one by
 * one (only the candidates) and the best items can be fetched from the HNSW index without a full scan.
 */
export interface SignalQuery {
  /** Raw score of one item (unscaled; higher is better). */
  score(item: number): number;
  /** `score` of each of `items` into `out` (aligned): one tight loop instead of a call per item. */
  scoreInto?(items: Int32Array, out: Float32Array): void;
  /**
   * Up to `k` items with the highest scores, best first: from the HNSW index where the model has one
   * (approximate), else by scanning every item.
   */
  top(k: number): Int32Array;
  /**
   * What `top(k)` answers, searched off the request thread; null when `top(k)` would not search an index (it
   * scans, or already holds its answer).
   */
  search?(k: number): Promise<Int32Array> | null;
  /** Valid only until the next query of the same signal (it reads a shared buffer): never keep it. */
  readonly volatile?: boolean;
}

export interface ModelSignals {
  /** The blend of the personal components the model's training chose on its validation split. */
  readonly tuned: RankWeights;
  /** How the model's training weighed each interaction type (request-time histories are weighed alike). */
  readonly weightConfig: Readonly<WeightConfig>;
  /** Collaborative signal for this history (fold-in of the user's vector, or EASE), or null. */
  collaborative(history: DenseHistory): SignalQuery | null;
  /** Content signal: similarity to the content profile of the history, or null. */
  content(history: DenseHistory): SignalQuery | null;
  /** Items most similar to `item` (collaborative and content similarity), best first, `item` left out. */
  similar(item: number, k: number): ScoredItems;
  /**
   * Makes `similar(item, k)`'s answer off the request thread, where it needs index searches, and keeps it for
   * that call; null when it needs none (it is kept already, or found without an index).
   */
  similarAhead?(item: number, k: number): Promise<void> | null;
  /** Items most often bought or carted together with `item`, best first. */
  complementary(item: number, k: number): ScoredItems;
  /** Similarity in taste space of two items in [-1, 1], or null when the model has no item factors. */
  itemSimilarity(a: number, b: number): number | null;
  /** Recent-versus-baseline popularity per item, or null. */
  readonly trending: Float32Array | null;
  /**
   * Popularity leaning towards one part of the day (see time-of-day.ts): half the item's overall popularity,
   * half its popularity in that daypart scaled to a whole day; null when the model has no daypart split.
   */
  daypartPopularity(daypart: number): Float32Array | null;
}
