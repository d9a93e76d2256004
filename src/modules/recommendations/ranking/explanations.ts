/**
 * Human sentences naming why an item was recommended, derived from the signal that produced it. The
 * detailed level appends the signal name and its score so a developer can see what drove the ranking.
 * The generic level names no product and no preference: publishable keys sit in public page source, so
 * whoever copies one could otherwise read any named end user's history out of "Because you viewed …".
 */

import { categoryLabel } from "../../../engine/ranking/catalogue";
import type { TenantContext } from "../../../http/tenant";
import type { RecommendationSource } from "../schemas";

export type ExplanationLevel = "simple" | "detailed" | "generic";

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
