/**
 * Turning ranked candidate positions into response items: the dominant component's source label, and the
 * explanation naming the reason (history item, category, brand, trend) as a human sentence. The detailed
 * level appends the signal name and its score so a developer can see what drove the ranking. The generic
 * level names no product and no preference: publishable keys sit in public page source, so whoever copies
 * one could otherwise read any named end user's history out of "Because you viewed …".
 */

import { RANK_COMPONENTS, type RankComponent } from "../../../engine/ranking/blend";
import { categoryLabel } from "../../../engine/ranking/catalogue";
import type { ComponentScores, TypedHistory } from "../../../engine/ranking/components";
import type { ModelSignals } from "../../../engine/ranking/signals";
import type { Strategy } from "../../../engine/ranking/strategy";
import type { TenantContext } from "../../../http/tenant";
import type { RecommendationItem, RecommendationSource } from "../schemas";
import type { ItemTable } from "../serving/item-table";
import type { ExplanationLevel, RankPlan } from "./rank-plan";

/** The source label each component's items carry in the answer, for a query's strategy. */
export function sourceLabels(strategy: Strategy): Record<RankComponent, RecommendationSource> {
  return {
    collab: strategy === "collab" ? "collaborative" : "personalized",
    content: "content_based",
    trend: strategy === "popularity" ? "popular" : "trending",
    similar: "similar",
    complementary: "complementary",
    preference: "popular",
  };
}

/** A component that scored the candidates, with its weight in the blend. */
export interface WeightedComponent {
  component: RankComponent;
  weight: number;
  values: Float32Array;
}

/** The components that take part in the blend, in RANK_COMPONENTS order: worked out once per ranking. */
export function weightedComponents(plan: RankPlan, components: ComponentScores): WeightedComponent[] {
  const out: WeightedComponent[] = [];
  for (const component of RANK_COMPONENTS) {
    const weight = plan.weights[component];
    const values = components.values[component];
    if (weight && values !== undefined) out.push({ component, weight, values });
  }
  return out;
}

function dominant(weighted: readonly WeightedComponent[], position: number): RankComponent | null {
  let best: RankComponent | null = null;
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
  component: RankComponent | null,
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

/** The level a caller may see: publishable-key calls get generic reasons whatever they asked for. */
export function explanationLevelFor(ctx: TenantContext, wanted: ExplanationLevel): ExplanationLevel {
  return ctx.actor.type === "apiKey" && ctx.actor.keyKind === "publishable" ? "generic" : wanted;
}

export type Reason =
  | { kind: "history"; verb: HistoryVerb; anchorName: string }
  | { kind: "similar"; anchorName: string; sameBrand: boolean; sameCategory: boolean }
  | { kind: "complementary"; anchorName: string }
  | { kind: "popular"; category: string; preferred: boolean; trending: boolean }
  | { kind: "catalogue"; category: string };

export type HistoryVerb = "bought" | "added to your cart" | "liked" | "rated" | "viewed" | "searched for";

const VERB_BY_TYPE: Record<string, HistoryVerb> = {
  PURCHASE: "bought",
  CART: "added to your cart",
  LIKE: "liked",
  RATING: "rated",
  CLICK: "viewed",
  VIEW: "viewed",
  SEARCH: "searched for",
};

export function historyVerb(interactionType: string): HistoryVerb {
  return VERB_BY_TYPE[interactionType] ?? "viewed";
}

const SIGNAL_NAME: Record<RecommendationSource, string> = {
  personalized: "personalised blend",
  collaborative: "collaborative filtering",
  content_based: "content similarity",
  trending: "trending",
  popular: "popularity",
  similar: "item similarity",
  complementary: "co-purchase",
};

export function explain(
  reason: Reason,
  level: ExplanationLevel = "simple",
  detail?: { source: RecommendationSource; score: number },
): string {
  if (level === "generic") return genericSentenceFor(reason);
  const sentence = sentenceFor(reason);
  if (level === "simple" || detail === undefined) return sentence;
  return `${sentence} (signal: ${SIGNAL_NAME[detail.source]}, score ${detail.score.toFixed(3)})`;
}

function sentenceFor(reason: Reason): string {
  switch (reason.kind) {
    case "history":
      return `Because you ${reason.verb} ${reason.anchorName}`;
    case "similar":
      if (reason.sameBrand && reason.sameCategory) return `Same brand and category as ${reason.anchorName}`;
      if (reason.sameCategory) return `Similar to ${reason.anchorName}, in the same category`;
      if (reason.sameBrand) return `Same brand as ${reason.anchorName}`;
      return `Customers who liked ${reason.anchorName} also liked this`;
    case "complementary":
      return `Often bought together with ${reason.anchorName}`;
    case "popular": {
      const category = categoryLabel(reason.category);
      if (reason.preferred) return `Popular in ${category}, one of your favourite categories`;
      return reason.trending ? `Trending in ${category} this week` : `Popular in ${category} this week`;
    }
    case "catalogue":
      return `From our ${categoryLabel(reason.category)} range`;
  }
}

function genericSentenceFor(reason: Reason): string {
  switch (reason.kind) {
    case "popular":
      return reason.trending ? "Trending now" : `Popular in ${categoryLabel(reason.category)}`;
    case "catalogue":
      return `Popular in ${categoryLabel(reason.category)}`;
    default:
      return "Matches your interests";
  }
}
