/**
 * Blend weights per strategy, goal and preset. Components scale to [0, 1], so a weight is the most a
 * component can add; `preference` (the user's stated categories and price range) outweighs popularity so a
 * cold user sees popular products of their categories first.
 */

import type { RankWeights } from "./blend";

export type Strategy = "hybrid" | "content_based" | "collab" | "popularity";

/** What a personalised query optimises (its `recommendation_goal`). */
export type Goal = "user_engagement" | "conversion" | "revenue" | "discovery";

/**
 * Without a trained model there is no tuned blend: content (catalogue closeness) and trend carry the
 * ranking, each goal leaning as its name says.
 */
const UNTRAINED_BY_GOAL: Record<Goal, RankWeights> = {
  user_engagement: { content: 0.6, trend: 0.4 },
  conversion: { content: 0.4, trend: 0.35, complementary: 0.25 },
  revenue: { content: 0.6, trend: 0.4 },
  discovery: { content: 0.7, trend: 0.3 },
};

/** Stated preferences: decisive for a cold user (weight above trend's), a nudge once there is history. */
const COLD_PREFERENCE = 1.01;
const WARM_PREFERENCE = 0.05;

/**
 * `tuned` is the blend the tenant's model chose on its validation split (null without a model): the hybrid
 * strategy ranks by it exactly for engagement, the goal the training measures. The other goals start from
 * it: conversion adds what is bought together with the cart, discovery leans on content (its long-tail
 * push is applied to the blended score by the ranker), revenue weighs the result by price.
 */
export function strategyWeights(
  strategy: Strategy,
  goal: Goal,
  hasHistory: boolean,
  hasSource: boolean,
  tuned: RankWeights | null,
): RankWeights {
  let weights: RankWeights;
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
      weights = hybridWeights(goal, tuned);
  }
  // Without history there is nothing personal to rank by: popularity carries a cold user.
  if (!hasHistory && strategy !== "popularity") weights.trend = Math.max(weights.trend ?? 0, 1);
  weights.preference = hasHistory && strategy !== "popularity" ? WARM_PREFERENCE : COLD_PREFERENCE;
  if (hasSource) weights.similar = 0.6;
  return weights;
}

function hybridWeights(goal: Goal, tuned: RankWeights | null): RankWeights {
  if (tuned === null) return { ...UNTRAINED_BY_GOAL[goal] };
  const personal = (tuned.collab ?? 0) + (tuned.content ?? 0) + (tuned.trend ?? 0) || 1;
  switch (goal) {
    case "conversion":
      return { ...tuned, complementary: 0.3 * personal };
    case "discovery":
      return { ...tuned, content: (tuned.content ?? 0) + 0.25 * personal };
    default:
      return { ...tuned };
  }
}

export type Preset = "homepage" | "product-page" | "cart" | "checkout";

export const PRESET_DEFAULT_LIMIT: Record<Preset, number> = {
  homepage: 12,
  "product-page": 8,
  cart: 6,
  checkout: 4,
};

export function presetWeights(
  preset: Preset,
  hasHistory: boolean,
  tuned: RankWeights | null = null,
): RankWeights {
  const preference = hasHistory ? WARM_PREFERENCE : COLD_PREFERENCE * 0.3;
  switch (preset) {
    case "homepage":
      // The home page is the personal feed: the same weights as the default query.
      return strategyWeights("hybrid", "user_engagement", hasHistory, false, tuned);
    case "product-page":
      return { similar: 1, collab: 0.3, content: 0.15, trend: 0.1, preference };
    case "cart":
      return { complementary: 1, similar: 0.3, collab: 0.2, trend: 0.1, preference };
    case "checkout":
      return { complementary: 0.5, trend: 0.4, collab: 0.2, preference };
  }
}
