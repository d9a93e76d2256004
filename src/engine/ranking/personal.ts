/**
 * A user's personal ranking over the whole catalogue, as the service ranks it (see blend.ts): training's
 * evaluation and its blend search score users with these functions, so the figures a job reports are those
 * of the blend the route serves.
 */
import type { Model } from "../model";
import { componentScores } from "../scoring";
import { topK } from "../topk";
import type { History } from "../types";
import {
  blendInto,
  type RankComponent,
  type RankWeights,
  scaleToUnit,
  trendValue,
  tunedWeights,
} from "./blend";
import { CANDIDATE_MIN_ITEMS, CandidateCollector, personalCandidates, type RankedSource } from "./candidates";

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

const popularOrders = new WeakMap<Model, Int32Array>();

/** The catalogue by the model's popularity, best first (ties by index), as the service orders it. */
function popularOrder(model: Model): Int32Array {
  let order = popularOrders.get(model);
  if (order === undefined) {
    const pop = model.popularity.score;
    order = Int32Array.from({ length: model.nItems }, (_, i) => i);
    order.sort((a, b) => pop[b]! - pop[a]! || a - b);
    popularOrders.set(model, order);
  }
  return order;
}

const rankScratch = new WeakMap<Model, { collab: Float32Array; content: Float32Array; marks: Uint8Array }>();

/**
 * The `k` items the personalised route answers for a history (its own items left out), best first. Up to
 * `CANDIDATE_MIN_ITEMS` items every item is scored (`scoreForUser`); past that, as the service does, only
 * candidates: the same `personalCandidates` step over the collaborative and content signals' best items
 * (by a scan of every item, as the service finds them without an HNSW index) and the most popular items,
 * each component then scaled over the candidates and blended.
 */
export function rankForUser(
  model: Model,
  history: History,
  k: number,
  weights: RankWeights = tunedWeights(model.blend),
): Int32Array {
  const n = model.nItems;
  const own = history.items;
  if (n <= CANDIDATE_MIN_ITEMS) {
    const scores = scoreForUser(model, history, undefined, weights);
    return topK(scores, k, null, own instanceof Int32Array ? own : Int32Array.from(own));
  }
  let s = rankScratch.get(model);
  if (s === undefined) {
    s = { collab: new Float32Array(n), content: new Float32Array(n), marks: new Uint8Array(n) };
    rankScratch.set(model, s);
  }
  const w: RankWeights = own.length > 0 ? weights : { trend: 1 };
  const excluded = new Set<number>();
  for (let h = 0; h < own.length; h++) excluded.add(own[h]!);
  const collab =
    w.collab && own.length > 0 && componentScores(model, history, "cf", s.collab) ? s.collab : null;
  const content =
    w.content && own.length > 0 && componentScores(model, history, "content", s.content) ? s.content : null;
  const ranked = (values: Float32Array): RankedSource => ({ top: (kk) => topK(values, kk) });
  const collector = new CandidateCollector(s.marks, (i) => !excluded.has(i));
  personalCandidates(collector, {
    pool: k,
    share: 1,
    excludedCount: excluded.size,
    collab: collab ? ranked(collab) : null,
    content: content ? ranked(content) : null,
    contentSecondary: collab !== null && 2 * (w.content ?? 0) <= (w.collab ?? 0),
    // The served personalised blend always carries a weight for stated preferences (or trend, for a cold
    // user), which brings the popular items in.
    popularOrder: () => popularOrder(model),
  });
  const candidates = collector.finish();
  const m = candidates.length;
  const pick = (values: Float32Array) => {
    const out = new Float32Array(m);
    for (let p = 0; p < m; p++) out[p] = values[candidates[p]!]!;
    return scaleToUnit(out);
  };
  const values: Partial<Record<PersonalComponent, Float32Array>> = {};
  if (collab) values.collab = pick(collab);
  if (content) values.content = pick(content);
  if (w.trend) {
    const pop = model.popularity.score;
    const trend = new Float32Array(m);
    for (let p = 0; p < m; p++) trend[p] = trendValue(pop[candidates[p]!]!);
    values.trend = scaleToUnit(trend);
  }
  const final = blendInto(new Float32Array(m), w, values);
  const order = topK(final, k);
  return Int32Array.from(order, (p) => candidates[p]!);
}
