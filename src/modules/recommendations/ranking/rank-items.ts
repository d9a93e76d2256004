/**
 * Turning ranked candidate positions into response items: MMR diversity, the dominant component's source
 * label, and the explanation naming the reason (history item, category, brand, trend).
 */

import type { RecommendationItem, RecommendationSource } from "../schemas";
import type { ItemTable } from "../serving/item-table";
import type { ModelSignals } from "../serving/signals";
import type { Component, ComponentScores, TypedHistory } from "./blend";
import { COMPONENTS } from "./blend";
import { explain, historyVerb, type Reason } from "./explanations";
import type { RankPlan } from "./rank-plan";

const MMR_LAMBDA = 0.7;
const MMR_MAX_POSITIONS = 300;

/** Maximal marginal relevance over categories and taste factors; works on candidate positions. */
export function mmr(
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

/** A component that scored the candidates, with its weight in the blend. */
export interface WeightedComponent {
  component: Component;
  weight: number;
  values: Float32Array;
}

/** The components that take part in the blend, in COMPONENTS order: worked out once per ranking. */
export function weightedComponents(plan: RankPlan, components: ComponentScores): WeightedComponent[] {
  const out: WeightedComponent[] = [];
  for (const component of COMPONENTS) {
    const weight = plan.weights[component];
    const values = components.values[component];
    if (weight && values !== undefined) out.push({ component, weight, values });
  }
  return out;
}

function dominant(weighted: readonly WeightedComponent[], position: number): Component | null {
  let best: Component | null = null;
  let bestValue = 0;
  for (let c = 0; c < weighted.length; c++) {
    const { component, weight, values } = weighted[c]!;
    const v = weight * values[position]!;
    if (v > bestValue) {
      bestValue = v;
      best = component;
    }
  }
  return best;
}

export function toItem(
  plan: RankPlan,
  components: ComponentScores,
  weighted: readonly WeightedComponent[],
  dense: TypedHistory,
  score: number,
  item: number,
  position: number,
): RecommendationItem {
  const component = dominant(weighted, position);
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
