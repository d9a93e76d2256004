/**
 * One ranking pass: eligibility (filters, exclusions, deleted), blended score, partial top-K, optional MMR
 * re-rank for diversity, and the page of items with source and explanation.
 */
import { topK } from "../../engine/topk";
import {
  COMPONENTS,
  type Component,
  type ComponentInputs,
  type ComponentScores,
  catalogueSimilar,
  computeComponents,
  fromNeighbours,
  preferenceMatcher,
  type TypedHistory,
  type Weights,
} from "./blend";
import { type ExplanationLevel, explain, historyVerb, type Reason } from "./explanations";
import type { ItemPredicate } from "./filters";
import type { UserHistory } from "./history-cache";
import type { ItemTable } from "./item-table";
import type { RecommendationItem, RecommendationSource } from "./schemas";
import {
  type BaseEligibility,
  baseEligibility,
  categoryOrder,
  popularityOrder,
  scratchMarks,
} from "./serving-cache";
import type { ModelSignals, SignalQuery } from "./signals";
import { DEFAULT_TUNING, type ServingTuning, useCandidates } from "./tuning";
import { userSignals } from "./user-memo";

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
  /** Names the predicate (the request's filters as JSON) so its matches are cached per snapshot; null: not cached. */
  filterKey?: string | null;
  inStockOnly: boolean;
  maxPrice: number | null;
  skip: number;
  limit: number;
  explanation: ExplanationLevel | null;
  /** Only items this component scores above 0 are candidates (similar listing: nothing unrelated). */
  require?: Component;
  /** Source label of the dominant component (strategy-dependent: trend is "popular" for the popularity strategy). */
  label: Record<Component, RecommendationSource>;
  tuning?: ServingTuning;
}

export interface RankedPage {
  items: RecommendationItem[];
  total: number;
}

const MMR_LAMBDA = 0.7;
const MMR_MAX_POSITIONS = 300;
/** Most items fetched from one HNSW index per request; past that, scoring the matches exactly is cheaper. */
const MAX_ANN_CANDIDATES = 2000;

/**
 * Ranks the plan. Small catalogues (and accounts without a model) score every eligible item. Larger ones
 * (see `useCandidates`) score only candidates: the HNSW neighbours of the user's collaborative and content vectors, the most
 * popular eligible items, the best items of the preferred categories, and the sparse similar/complementary
 * lists; a filter leaving few items scores exactly those instead. `total` is exact either way.
 */
export function rank(plan: RankPlan): RankedPage {
  const { table, history, signals, weights } = plan;
  const tuning = plan.tuning ?? DEFAULT_TUNING;
  const n = table.size;
  const user = userSignals(history, table, signals);
  const dense = user.dense;
  const excluded = new Set<number>();
  if (plan.excludeHistory) {
    for (const item of dense.items) excluded.add(item);
    for (const pid of history.purchased) {
      const item = table.indexOf.get(pid);
      if (item !== undefined) excluded.add(item);
    }
  }
  for (const item of plan.exclude) if (item >= 0 && item < n) excluded.add(item);
  const base = baseEligibility(
    table,
    plan.inStockOnly,
    plan.predicate,
    plan.predicate === null ? "" : (plan.filterKey ?? null),
    tuning.selectiveMaxItems,
  );
  const { mask } = base;
  const prices = table.prices;
  const maxPrice = plan.maxPrice;
  const eligible = (i: number) =>
    mask[i] === 1 && !excluded.has(i) && (maxPrice === null || prices[i]! <= maxPrice);

  const hasHistory = dense.items.length > 0;
  const collab = weights.collab && hasHistory ? user.collaborative() : null;
  const content = weights.content && hasHistory ? user.content() : null;
  let similar: ComponentInputs["similar"] = null;
  if (weights.similar && plan.sourceItems.length > 0) {
    similar = signals
      ? fromNeighbours(plan.sourceItems, (a) => signals.similar(a, 200))
      : catalogueSimilar(table, plan.sourceItems);
  }
  const complementary =
    weights.complementary && signals && plan.complementAnchors.length > 0
      ? fromNeighbours(plan.complementAnchors, (a) => signals.complementary(a, 100))
      : null;

  const want = plan.skip + plan.limit;
  const pool = plan.diverse ? Math.max(want * 3, want + 50) : want;
  let candidates: Int32Array | null = null;
  if (signals !== null && useCandidates(n, tuning)) {
    if (base.list !== null) candidates = filterList(base.list, eligible);
    else {
      candidates = gatherCandidates(plan, base.count / n, pool, excluded.size, eligible, {
        collab,
        content,
        similar,
        complementary,
      });
      // Too few survived the filters (a mid-selective filter): fall back to scoring every match.
      if (candidates.length < Math.min(pool, base.count - excluded.size)) candidates = null;
    }
  }
  const exact = candidates === null;
  if (candidates === null) {
    const all: number[] = [];
    for (let i = 0; i < n; i++) if (eligible(i)) all.push(i);
    candidates = Int32Array.from(all);
  }

  const components = computeComponents({
    table,
    history,
    dense,
    candidates,
    weights,
    collab,
    content,
    similar,
    complementary,
  });
  let keep: Uint8Array | null = null;
  let total: number;
  if (plan.require !== undefined) {
    const required = components.values[plan.require];
    keep = new Uint8Array(candidates.length);
    total = 0;
    for (let p = 0; p < candidates.length; p++) {
      if (required !== undefined && required[p]! > 0) {
        keep[p] = 1;
        total++;
      }
    }
  } else if (exact || base.list !== null) {
    total = candidates.length;
  } else {
    total = eligibleTotal(base, table, excluded, maxPrice);
  }
  const final = blendScores(plan, components, candidates, keep);
  const take = Math.min(total, want);
  let order = topK(final, plan.diverse ? Math.min(total, pool) : take);
  if (plan.diverse) order = mmr(order, final, candidates, table, signals, take);
  const page = Array.from(order.subarray(plan.skip, take));
  return {
    items: page.map((p) => toItem(plan, components, dense, final[p]!, candidates[p]!, p)),
    total,
  };
}

function filterList(list: Int32Array, keep: (item: number) => boolean): Int32Array {
  const out: number[] = [];
  for (const i of list) if (keep(i)) out.push(i);
  return Int32Array.from(out);
}

/** Eligible items: the cached base count minus this request's exclusions (and price cap). */
function eligibleTotal(
  base: BaseEligibility,
  table: ItemTable,
  excluded: ReadonlySet<number>,
  maxPrice: number | null,
): number {
  const { mask } = base;
  if (maxPrice === null) {
    let total = base.count;
    for (const i of excluded) if (mask[i] === 1) total--;
    return total;
  }
  let total = 0;
  const prices = table.prices;
  for (let i = 0; i < mask.length; i++) if (mask[i] === 1 && prices[i]! <= maxPrice) total++;
  for (const i of excluded) if (mask[i] === 1 && prices[i]! <= maxPrice) total--;
  return total;
}

function gatherCandidates(
  plan: RankPlan,
  share: number,
  pool: number,
  excludedCount: number,
  eligible: (item: number) => boolean,
  signals: Pick<ComponentInputs, "collab" | "content" | "similar" | "complementary">,
): Int32Array {
  const { table, weights } = plan;
  // Marks in a per-table scratch array instead of a Set: cleared before returning (ranking is synchronous).
  const marks = scratchMarks(table);
  const out: number[] = [];
  const add = (item: number) => {
    if (marks[item] === 0 && eligible(item)) {
      marks[item] = 1;
      out.push(item);
    }
  };
  // Twice the page from each index survives the exclusions and the filter; start small (most of a long
  // history is not among the user's nearest items) and widen only when too few survive.
  const target = 2 * pool;
  const widest = Math.min(
    MAX_ANN_CANDIDATES,
    Math.ceil((target + excludedCount + 20) / Math.max(share, 1e-3)),
  );
  const fetch = (query: SignalQuery) => {
    let k = Math.min(
      widest,
      Math.ceil((target + Math.min(excludedCount, target) + 20) / Math.max(share, 1e-3)),
    );
    for (;;) {
      const top = query.top(k);
      let found = 0;
      for (const i of top) {
        if (eligible(i)) {
          add(i);
          found++;
        }
      }
      if (found >= target || k >= widest || top.length < k) return;
      k = Math.min(widest, k * 3);
    }
  };
  if (signals.collab) fetch(signals.collab);
  if (signals.content) fetch(signals.content);
  for (const sparse of [signals.similar, signals.complementary]) {
    if (sparse === null) continue;
    if ("dense" in sparse) continue;
    for (const i of sparse.score.keys()) add(i);
  }
  if (weights.trend || weights.preference) {
    // The most popular eligible items: decisive for cold users, and the trend component's best.
    const order = popularityOrder(table);
    let found = 0;
    for (let j = 0; j < order.length && found < pool; j++) {
      if (eligible(order[j]!)) {
        add(order[j]!);
        found++;
      }
    }
  }
  const prefer = weights.preference ? preferenceMatcher(plan.history) : null;
  if (prefer) {
    const preferred = plan.history.preferredCategories;
    const orders =
      preferred.length > 0
        ? preferred.map((c) => categoryOrder(table, c, "popularity"))
        : [popularityOrder(table)];
    for (const order of orders) {
      let found = 0;
      for (const i of order) {
        if (found >= pool) break;
        if (prefer(table, i) && eligible(i)) {
          add(i);
          found++;
        }
      }
    }
  }
  for (const item of out) marks[item] = 0;
  return Int32Array.from(out);
}

function blendScores(
  plan: RankPlan,
  components: ComponentScores,
  candidates: Int32Array,
  keep: Uint8Array | null,
): Float32Array {
  const m = candidates.length;
  const final = new Float32Array(m);
  for (const component of COMPONENTS) {
    const w = plan.weights[component];
    const values = components.values[component];
    if (!w || !values) continue;
    for (let p = 0; p < m; p++) final[p]! += w * values[p]!;
  }
  if (plan.goal === "revenue") {
    // Expected revenue: relevance times what the sale is worth.
    for (let p = 0; p < m; p++) final[p]! *= plan.table.prices[candidates[p]!]!;
  } else if (plan.goal === "discovery") {
    // Long tail first: the more popular an item already is, the less it is pushed.
    const trend = components.values.trend;
    if (trend) for (let p = 0; p < m; p++) final[p]! *= 1 - 0.5 * trend[p]!;
  }
  if (keep !== null) for (let p = 0; p < m; p++) if (keep[p] !== 1) final[p] = Number.NEGATIVE_INFINITY;
  return final;
}

/** Maximal marginal relevance over categories and taste factors; works on candidate positions. */
function mmr(
  pool: Int32Array,
  score: Float32Array,
  candidates: Int32Array,
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
      const sim = similarity(table, signals, candidates[pick]!, candidates[remaining[r]!]!);
      if (sim > maxSim[r]!) maxSim[r] = sim;
    }
  }
  const rest = pool.filter((p) => !chosen.includes(p));
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

function dominant(plan: RankPlan, components: ComponentScores, position: number): Component | null {
  let best: Component | null = null;
  let bestValue = 0;
  for (const component of COMPONENTS) {
    const w = plan.weights[component];
    const v = components.values[component]?.[position];
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
  position: number,
): RecommendationItem {
  const component = dominant(plan, components, position);
  const source: RecommendationSource = component === null ? "popular" : plan.label[component];
  const result: RecommendationItem = {
    externalId: plan.table.externalIds[item]!,
    name: plan.table.names[item]!,
    score: Math.round(score * 1e6) / 1e6,
    source,
  };
  if (plan.explanation !== null) {
    const reason = reasonFor(plan, components, dense, component, item, position);
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
  position: number,
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
      const anchor = components.anchors.similar?.[position] ?? -1;
      if (anchor >= 0) return similarReason(anchor);
      break;
    }
    case "complementary": {
      const anchor = components.anchors.complementary?.[position] ?? -1;
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
