/**
 * A user's personal ranking over the whole catalogue, as the service ranks it (see blend.ts): training's
 * evaluation and its blend search score users with these functions, so the figures a job reports are those
 * of the blend the route serves.
 */
import type { Model } from "../model";
import { componentScores } from "../scoring";
import type { History } from "../types";
import { blendInto, type RankComponent, type RankWeights, scaleToUnit, tunedWeights } from "./blend";

/** The personal components a model can score, in the ranker's names. */
export type PersonalComponent = Extract<RankComponent, "collab" | "content" | "trend">;

const ENGINE_PART: Record<PersonalComponent, "cf" | "content" | "popularity"> = {
  collab: "cf",
  content: "content",
  trend: "popularity",
};

/**
 * One component over every item into `out`, the user's own items set to 0 before scaling (they are never
 * answered, so they must not set the scale), then scaled to [0, 1]. False when the model lacks it.
 */
export function personalComponent(
  model: Model,
  history: History,
  component: PersonalComponent,
  out: Float32Array,
): boolean {
  if (component !== "trend" && history.items.length === 0) return false;
  if (!componentScores(model, history, ENGINE_PART[component], out)) return false;
  for (let h = 0; h < history.items.length; h++) {
    const item = history.items[h]!;
    if (item >= 0 && item < out.length) out[item] = 0;
  }
  scaleToUnit(out);
  return true;
}

const scratch = new WeakMap<Model, Record<PersonalComponent, Float32Array>>();

/**
 * Blended scores over every item for a history, with the model's tuned weights unless others are given;
 * without history, popularity alone (as the route ranks a cold user). The user's own items score 0: callers
 * leave them out of the answer (topK's `exclude`).
 */
export function scoreForUser(
  model: Model,
  history: History,
  out?: Float32Array,
  weights: RankWeights = tunedWeights(model.blend),
): Float32Array {
  const scores = out ?? new Float32Array(model.nItems);
  let buffers = scratch.get(model);
  if (buffers === undefined) {
    buffers = {
      collab: new Float32Array(model.nItems),
      content: new Float32Array(model.nItems),
      trend: new Float32Array(model.nItems),
    };
    scratch.set(model, buffers);
  }
  const w: RankWeights = history.items.length > 0 ? weights : { trend: 1 };
  const values: Partial<Record<PersonalComponent, Float32Array>> = {};
  for (const c of ["collab", "content", "trend"] as const) {
    if (w[c] && personalComponent(model, history, c, buffers[c])) values[c] = buffers[c];
  }
  return blendInto(scores, w, values);
}
