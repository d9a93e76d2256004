import { addContentRow, contentDot } from "./content";
import { easeInputValue, easeScores } from "./ease";
import { foldInUser, scoreFactors } from "./fold-in";
import type { Model } from "./model";
import type { History } from "./types";

/** Per-model scratch so request-time scoring reuses buffers instead of allocating per call. */
interface Scratch {
  part: Float32Array;
  easeW: Float32Array;
  factor: Float32Array;
  profile: Float32Array;
  popNorm: Float32Array;
}
const scratchByModel = new WeakMap<Model, Scratch>();

function scratch(model: Model): Scratch {
  let s = scratchByModel.get(model);
  if (!s) {
    const pop = model.popularity.score;
    const popNorm = new Float32Array(model.nItems);
    let max = 0;
    for (let i = 0; i < pop.length; i++) max = Math.max(max, Math.log1p(pop[i]!));
    if (max > 0) for (let i = 0; i < pop.length; i++) popNorm[i] = Math.log1p(pop[i]!) / max;
    s = {
      part: new Float32Array(model.nItems),
      easeW: new Float32Array(64),
      factor: new Float32Array(model.als?.k ?? 1),
      profile: new Float32Array(model.content?.dims ?? 1),
      popNorm,
    };
    scratchByModel.set(model, s);
  }
  return s;
}

export type Component = "cf" | "als" | "content" | "popularity";

/** Raw (unscaled) scores of one blend component into `out`; returns false if the model lacks it. */
export function componentScores(
  model: Model,
  history: History,
  component: Component,
  out: Float32Array,
): boolean {
  const s = scratch(model);
  if (component === "popularity") {
    out.set(s.popNorm);
    return true;
  }
  if (component === "content") {
    const c = model.content;
    if (!c) return false;
    s.profile.fill(0);
    for (let h = 0; h < history.items.length; h++) {
      const it = history.items[h]!;
      if (it < 0 || it >= model.nItems) continue;
      addContentRow(c, it, history.weights[h]!, s.profile);
    }
    for (let i = 0; i < model.nItems; i++) out[i] = contentDot(c, i, s.profile);
    return true;
  }
  if (component === "cf" && model.ease) {
    if (s.easeW.length < history.items.length) s.easeW = new Float32Array(history.items.length * 2);
    for (let h = 0; h < history.items.length; h++) {
      const w = history.weights[h]!;
      // A net-negative item pushes its neighbours down by as much as a positive one lifts them.
      s.easeW[h] = w > 0 ? easeInputValue(w, model.easeValues) : w < 0 ? -1 : 0;
    }
    easeScores(model.ease, history.items, s.easeW, out);
    return true;
  }
  if ((component === "als" || component === "cf") && model.als) {
    foldInUser(model.als, history, s.factor);
    scoreFactors(s.factor, model.als.itemFactors, model.als.k, out);
    return true;
  }
  return false;
}
