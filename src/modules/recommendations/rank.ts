/**
 * One ranking pass: eligibility (filters, exclusions, deleted), blended score, partial top-K, optional MMR
 * re-rank for diversity, and the page of items with source and explanation.
 */
import { topK } from "../../engine/topk";
import {
  COMPONENTS,
  type Component,
  type ComponentScores,
  computeComponents,
  denseHistory,
  type TypedHistory,
  type Weights,
} from "./blend";
import { type ExplanationLevel, explain, historyVerb, type Reason } from "./explanations";
import type { ItemPredicate } from "./filters";
import type { UserHistory } from "./history-cache";
import type { ItemTable } from "./item-table";
import type { RecommendationItem, RecommendationSource } from "./schemas";
import type { ModelSignals } from "./signals";

export type Goal = "user_engagement" | "conversion" | "revenue" | "discovery";

export interface RankPlan {
  table: ItemTable;
  signals: ModelSignals | null;
  history: UserHistory;
  weights: Weights;
  goal: Goal;
  diverse: boolean;
  sourceItems: readonly number[];
  complementAnchors: readonly number[];
  /** Items never returned (current product, cart items, …). */
  exclude: readonly number[];
  /** Leave out everything the user interacted with (personalised query and presets). */
  excludeHistory: boolean;
  predicate: ItemPredicate | null;
  inStockOnly: boolean;
  maxPrice: number | null;
  skip: number;
  limit: number;
  explanation: ExplanationLevel | null;
  /** Only items this component scores above 0 are candidates (similar listing: nothing unrelated). */
  require?: Component;
  /** Source label of the dominant component (strategy-dependent: trend is "popular" for the popularity strategy). */
  label: Record<Component, RecommendationSource>;
}

export interface RankedPage {
  items: RecommendationItem[];
  total: number;
}

const MMR_LAMBDA = 0.7;
const MMR_MAX_POSITIONS = 300;

export function rank(plan: RankPlan): RankedPage {
  const { table, history } = plan;
  const n = table.size;
  const eligible = new Uint8Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    if (table.deleted[i] === 1) continue;
    if (plan.inStockOnly && table.inStock[i] !== 1) continue;
    if (plan.maxPrice !== null && !(table.prices[i]! <= plan.maxPrice)) continue;
    if (plan.predicate && !plan.predicate(i)) continue;
    eligible[i] = 1;
  }
  const dense = denseHistory(table, history);
  if (plan.excludeHistory) for (const item of dense.items) eligible[item] = 0;
  for (const pid of history.purchased) {
    const item = table.indexOf.get(pid);
    if (item !== undefined && plan.excludeHistory) eligible[item] = 0;
  }
  for (const item of plan.exclude) if (item >= 0 && item < n) eligible[item] = 0;

  const components = computeComponents({
    table,
    signals: plan.signals,
    history,
    dense,
    eligible,
    weights: plan.weights,
    sourceItems: plan.sourceItems,
    complementAnchors: plan.complementAnchors,
  });
  if (plan.require !== undefined) {
    const required = components.values[plan.require];
    for (let i = 0; i < n; i++) if (!(required !== undefined && required[i]! > 0)) eligible[i] = 0;
  }
  for (let i = 0; i < n; i++) total += eligible[i]!;
  const final = blendScores(plan, components, eligible);
  const want = Math.min(total, plan.skip + plan.limit);
  const predicate = (i: number) => eligible[i] === 1;
  let order = topK(final, plan.diverse ? Math.min(total, Math.max(want * 3, want + 50)) : want, predicate);
  if (plan.diverse) order = mmr(order, final, table, plan.signals, want);
  const page = Array.from(order.subarray(plan.skip, want));
  return { items: page.map((i) => toItem(plan, components, dense, final[i]!, i)), total };
}

function blendScores(plan: RankPlan, components: ComponentScores, eligible: Uint8Array): Float32Array {
  const n = plan.table.size;
  const final = new Float32Array(n);
  for (const component of COMPONENTS) {
    const w = plan.weights[component];
    const values = components.values[component];
    if (!w || !values) continue;
    for (let i = 0; i < n; i++) final[i]! += w * values[i]!;
  }
  if (plan.goal === "revenue") {
    // Expected revenue: relevance times what the sale is worth.
    for (let i = 0; i < n; i++) final[i]! *= plan.table.prices[i]!;
  } else if (plan.goal === "discovery") {
    // Long tail first: the more popular an item already is, the less it is pushed.
    const trend = components.values.trend;
    if (trend) for (let i = 0; i < n; i++) final[i]! *= 1 - 0.5 * trend[i]!;
  }
  for (let i = 0; i < n; i++) if (eligible[i] !== 1) final[i] = Number.NEGATIVE_INFINITY;
  return final;
}

/** Maximal marginal relevance over categories and taste factors. */
function mmr(
  pool: Int32Array,
  score: Float32Array,
  table: ItemTable,
  signals: ModelSignals | null,
  want: number,
): Int32Array {
  const positions = Math.min(want, MMR_MAX_POSITIONS, pool.length);
  if (pool.length === 0) return pool;
  const top = score[pool[0]!]!;
  const bottom = score[pool[pool.length - 1]!]!;
  const span = top - bottom > 0 ? top - bottom : 1;
  const remaining = Array.from(pool);
  const chosen: number[] = [];
  const maxSim = new Float32Array(remaining.length);
  while (chosen.length < positions && remaining.length > 0) {
    let best = 0;
    let bestValue = Number.NEGATIVE_INFINITY;
    for (let r = 0; r < remaining.length; r++) {
      const relevance = (score[remaining[r]!]! - bottom) / span;
      const value = MMR_LAMBDA * relevance - (1 - MMR_LAMBDA) * maxSim[r]!;
      if (value > bestValue) {
        bestValue = value;
        best = r;
      }
    }
    const pick = remaining[best]!;
    chosen.push(pick);
    remaining.splice(best, 1);
    maxSim.copyWithin(best, best + 1);
    for (let r = 0; r < remaining.length; r++) {
      const sim = similarity(table, signals, pick, remaining[r]!);
      if (sim > maxSim[r]!) maxSim[r] = sim;
    }
  }
  const rest = pool.filter((i) => !chosen.includes(i));
  return Int32Array.from([...chosen, ...rest].slice(0, want));
}

function similarity(table: ItemTable, signals: ModelSignals | null, a: number, b: number): number {
  const ca = table.categories[a]!;
  const cb = table.categories[b]!;
  let category = 0;
  if (ca === cb) category = 1;
  else if (ca.split("/")[0] === cb.split("/")[0]) category = 0.5;
  const taste = signals?.itemSimilarity(a, b) ?? null;
  return taste === null ? category : 0.5 * category + 0.5 * Math.max(0, taste);
}

function dominant(plan: RankPlan, components: ComponentScores, item: number): Component | null {
  let best: Component | null = null;
  let bestValue = 0;
  for (const component of COMPONENTS) {
    const w = plan.weights[component];
    const v = components.values[component]?.[item];
    if (!w || v === undefined) continue;
    if (w * v > bestValue) {
      bestValue = w * v;
      best = component;
    }
  }
  return best;
}

function toItem(
  plan: RankPlan,
  components: ComponentScores,
  dense: TypedHistory,
  score: number,
  item: number,
): RecommendationItem {
  const component = dominant(plan, components, item);
  const source: RecommendationSource = component === null ? "popular" : plan.label[component];
  const result: RecommendationItem = {
    externalId: plan.table.externalIds[item]!,
    name: plan.table.names[item]!,
    score: Math.round(score * 1e6) / 1e6,
    source,
  };
  if (plan.explanation !== null) {
    const reason = reasonFor(plan, components, dense, component, item);
    result.explanation = explain(reason, plan.explanation, { source, score: result.score });
  }
  return result;
}

function reasonFor(
  plan: RankPlan,
  components: ComponentScores,
  dense: TypedHistory,
  component: Component | null,
  item: number,
): Reason {
  const { table, signals } = plan;
  const category = table.categories[item]!;
  const similarReason = (anchor: number): Reason => ({
    kind: "similar",
    anchorName: table.names[anchor]!,
    sameBrand: table.brands[anchor] !== null && table.brands[anchor] === table.brands[item],
    sameCategory: table.categories[anchor] === category,
  });
  switch (component) {
    case "similar": {
      const anchor = components.anchors.similar?.[item] ?? -1;
      if (anchor >= 0) return similarReason(anchor);
      break;
    }
    case "complementary": {
      const anchor = components.anchors.complementary?.[item] ?? -1;
      if (anchor >= 0) return { kind: "complementary", anchorName: table.names[anchor]! };
      break;
    }
    case "collab":
    case "content": {
      const h = closestHistoryItem(table, signals, dense, item);
      if (h >= 0) {
        const anchor = dense.items[h]!;
        if (component === "content") return similarReason(anchor);
        return { kind: "history", verb: historyVerb(dense.types[h]!), anchorName: table.names[anchor]! };
      }
      break;
    }
    case null:
      if (!(table.popularity[item]! > 0)) return { kind: "catalogue", category };
  }
  const trending = signals?.trending ? signals.trending[item]! > 1 : false;
  return { kind: "popular", category, preferred: component === "preference", trending };
}

/** Position in the history of the positively-weighted item nearest to `item` (taste space, else category). */
function closestHistoryItem(
  table: ItemTable,
  signals: ModelSignals | null,
  dense: TypedHistory,
  item: number,
): number {
  let best = -1;
  let bestValue = Number.NEGATIVE_INFINITY;
  const limit = Math.min(dense.items.length, 50);
  for (let h = 0; h < limit; h++) {
    const anchor = dense.items[h]!;
    if (!(dense.weights[h]! > 0)) continue;
    const taste = signals?.itemSimilarity(anchor, item) ?? null;
    const value = (taste ?? 0) + (table.categories[anchor] === table.categories[item] ? 0.5 : 0) - h * 1e-4;
    if (value > bestValue) {
      bestValue = value;
      best = h;
    }
  }
  return best;
}
