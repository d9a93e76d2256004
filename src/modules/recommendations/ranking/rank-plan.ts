/** What one ranking pass is asked to do; a leaf so candidate gathering and item building can name it. */

import type { RankComponent, RankWeights } from "../../../engine/ranking/blend";
import type { ServingTuning } from "../../../engine/ranking/candidates";
import type { ItemPredicate } from "../../../engine/ranking/catalogue";
import type { ModelSignals } from "../../../engine/ranking/signals";
import type { Goal } from "../../../engine/ranking/strategy";
import type { RecommendationSource } from "../schemas";
import type { UserHistory } from "../serving/history-cache";
import type { ItemTable } from "../serving/item-table";

/** How much an item's explanation may say (see rank-items.ts). */
export type ExplanationLevel = "simple" | "detailed" | "generic";

export interface RankPlan {
  table: ItemTable;
  signals: ModelSignals | null;
  history: UserHistory;
  weights: RankWeights;
  goal: Goal;
  diverse: boolean;
  sourceItems: readonly number[];
  complementAnchors: readonly number[];
  /** Items never returned (current product, cart items, …). */
  exclude: readonly number[];
  /** Leave out everything the user interacted with (personalised query and presets). */
  excludeHistory: boolean;
  predicate: ItemPredicate | null;
  /** Names the predicate (the request's filters as JSON) so its matches are cached per snapshot; null: not cached. */
  filterKey?: string | null;
  inStockOnly: boolean;
  maxPrice: number | null;
  skip: number;
  limit: number;
  explanation: ExplanationLevel | null;
  /** Only items this component scores above 0 are candidates (similar listing: nothing unrelated). */
  require?: RankComponent;
  /** Popularity the trend component ranks by instead of the table's (time of day); default the table's. */
  popularity?: Float32Array;
  /** Source label of the dominant component (strategy-dependent: trend is "popular" for the popularity strategy). */
  label: Record<RankComponent, RecommendationSource>;
  tuning?: ServingTuning;
}
