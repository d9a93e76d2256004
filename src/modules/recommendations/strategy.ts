/**
 * Blend weights per strategy, goal and preset. Components scale to [0, 1], so a weight is the most a
 * component can add; `preference` (the user's stated categories and price range) outweighs popularity so a
 * cold user sees popular products of their categories first.
 */
import type { Component, Weights } from "./blend";
import type { Goal } from "./rank";
import type { RecommendationSource } from "./schemas";

export type Strategy = "hybrid" | "content_based" | "collab" | "popularity";

const HYBRID_BY_GOAL: Record<Goal, Weights> = {
  user_engagement: { collab: 0.55, content: 0.2, trend: 0.25 },
  conversion: { collab: 0.45, content: 0.1, trend: 0.2, complementary: 0.25 },
  revenue: { collab: 0.55, content: 0.2, trend: 0.25 },
  discovery: { collab: 0.45, content: 0.35, trend: 0.2 },
};

/** Stated preferences: decisive for a cold user (weight above trend's), a nudge once there is history. */
const COLD_PREFERENCE = 1.01;
const WARM_PREFERENCE = 0.05;

export function strategyWeights(
  strategy: Strategy,
  goal: Goal,
  hasHistory: boolean,
  hasSource: boolean,
): Weights {
  let weights: Weights;
  switch (strategy) {
    case "popularity":
      weights = { trend: 1 };
      break;
    case "collab":
      weights = { collab: 1, trend: 0.05 };
      break;
    case "content_based":
      weights = { content: 1, trend: 0.05 };
      break;
    default:
      weights = { ...HYBRID_BY_GOAL[goal] };
  }
  weights.preference = hasHistory && strategy !== "popularity" ? WARM_PREFERENCE : COLD_PREFERENCE;
  if (hasSource) weights.similar = 0.6;
  return weights;
}

export function sourceLabels(strategy: Strategy): Record<Component, RecommendationSource> {
  return {
    collab: strategy === "collab" ? "collaborative" : "personalized",
    content: "content_based",
    trend: strategy === "popularity" ? "popular" : "trending",
    similar: "similar",
    complementary: "complementary",
    preference: "popular",
  };
}

export type Preset = "homepage" | "product-page" | "cart" | "checkout";

export const PRESET_DEFAULT_LIMIT: Record<Preset, number> = {
  homepage: 12,
  "product-page": 8,
  cart: 6,
  checkout: 4,
};

export function presetWeights(preset: Preset, hasHistory: boolean): Weights {
  const preference = hasHistory ? WARM_PREFERENCE : COLD_PREFERENCE * 0.3;
  switch (preset) {
    case "homepage":
      return {
        collab: 0.55,
        content: 0.2,
        trend: 0.25,
        preference: hasHistory ? WARM_PREFERENCE : COLD_PREFERENCE,
      };
    case "product-page":
      return { similar: 1, collab: 0.3, content: 0.15, trend: 0.1, preference };
    case "cart":
      return { complementary: 1, similar: 0.3, collab: 0.2, trend: 0.1, preference };
    case "checkout":
      return { complementary: 0.5, trend: 0.4, collab: 0.2, preference };
  }
}
