/**
 * The one blend of ranking signals, used by the service's ranker and by training's evaluation and search:
 * each component is scaled to [0, 1] over the items that may be answered (the user's own items left out),
 * negative values counting as no signal, then summed with the weights. Training picks the weights of the
 * personal components on a validation split by the ranking they produce here, stores them with the model
 * (`Model.blend`), and serving reads them back with `tunedWeights`: what a job measures is what the route
 * ranks by.
 */
import type { BlendWeights } from "../model";
import { EventType } from "../types";
import { DEFAULT_WEIGHTS, type WeightConfig } from "../weighting";

export type RankComponent = "collab" | "content" | "trend" | "similar" | "complementary" | "preference";
export const RANK_COMPONENTS: readonly RankComponent[] = [
  "collab",
  "content",
  "trend",
  "similar",
  "complementary",
  "preference",
];
export type RankWeights = Partial<Record<RankComponent, number>>;

/**
 * Scales raw scores in place to [0, 1] by their maximum; negative values (a signed dot product or an EASE
 * weight pointing away from the user) and non-finite ones count as no signal.
 */
export function scaleToUnit(values: Float32Array): Float32Array {
  let max = 0;
  for (let p = 0; p < values.length; p++) {
    const v = values[p]!;
    if (v > max && Number.isFinite(v)) max = v;
  }
  for (let p = 0; p < values.length; p++) {
    const v = values[p]!;
    values[p] = max > 0 && v > 0 && Number.isFinite(v) ? v / max : 0;
  }
  return values;
}

/** out = Σ weight · component over the components present (each already scaled); out is overwritten. */
export function blendInto(
  out: Float32Array,
  weights: RankWeights,
  values: Partial<Record<RankComponent, Float32Array>>,
): Float32Array {
  out.fill(0);
  for (const component of RANK_COMPONENTS) {
    const w = weights[component];
    const v = values[component];
    if (!w || !v) continue;
    for (let p = 0; p < out.length; p++) out[p]! += w * v[p]!;
  }
  return out;
}

/** The weights a trained model chose on its validation split, as the ranker's components. */
export function tunedWeights(blend: BlendWeights): RankWeights {
  return { collab: blend.cf, content: blend.content, trend: blend.popularity };
}

/** log(1 + popularity), negatives as 0: what the trend component ranks by (before scaling). */
export function trendValue(popularity: number): number {
  return Math.log1p(Math.max(0, popularity));
}

const TYPE_CODES: Record<string, number> = EventType as unknown as Record<string, number>;

/**
 * Weight of one interaction in a request-time history, by the same table training weighs its matrix with
 * (`WeightConfig`; recency decay aside, which training measures back from its newest event).
 */
export function interactionWeight(
  type: string,
  value: number,
  config: Readonly<WeightConfig> = DEFAULT_WEIGHTS,
): number {
  switch (TYPE_CODES[type]) {
    case EventType.VIEW:
      return config.view;
    case EventType.CLICK:
      return config.click;
    case EventType.CART:
      return config.cart;
    case EventType.PURCHASE:
      return config.purchase;
    case EventType.LIKE:
      return config.like;
    case EventType.DISLIKE:
      return config.dislike;
    case EventType.SEARCH:
      return config.search;
    case EventType.RATING: {
      const r = Math.min(1, Math.max(0, value / config.ratingMax));
      return config.rating * Math.max(0.05, r ** config.ratingPower);
    }
    default:
      return config.view;
  }
}
