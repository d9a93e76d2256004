import { foldInUser } from "./fold-in";
import {
  type AnnIndex,
  type AnnSpace,
  deserializeAnnIndex,
  exactSearch,
  loadAnnIndexFile,
  type Neighbours,
  searchAnn,
} from "./hnsw";
import type { Model } from "./model";
import { scoreForUser } from "./scoring";
import { topK } from "./topk";
import type { History } from "./types";

import { eventWeights } from "./weighting";

type Filter = (item: number) => boolean;

const annCache = new WeakMap<Model, { factors: AnnIndex | null; content: AnnIndex | null }>();

/** Where a model's HNSW indexes may be kept as files of their own (see `loadAnnIndexFile`). */
export interface AnnFiles {
  factors: string;
  content: string;
}

/**
 * HNSW indexes of a loaded model, materialised once from the artifact's bytes: through `files` when given
 * (read in place, written there first when missing), else through a temporary file.
 */
export function annIndexes(
  model: Model,
  files?: AnnFiles,
): { factors: AnnIndex | null; content: AnnIndex | null } {
  let c = annCache.get(model);
  if (!c) {
    const { als, content, ann } = model;
    const load = (bytes: Uint8Array, vectors: Float32Array, dims: number, space: AnnSpace, file?: string) =>
      file === undefined
        ? deserializeAnnIndex(bytes, vectors, dims, space)
        : loadAnnIndexFile(file, bytes, vectors, dims, space);
    c = {
      factors: ann.factors && als ? load(ann.factors, als.itemFactors, als.k, "ip", files?.factors) : null,
      content:
        ann.content && content
          ? load(ann.content, content.vectors, content.dims, "cosine", files?.content)
          : null,
    };
    annCache.set(model, c);
  }
  return c;
}

/**
 * Gives a model the HNSW indexes loaded for it elsewhere (read without blocking, see
 * `readAnnIndexFileAsync`), so `annIndexes` returns them instead of materialising its own.
 */
export function attachAnnIndexes(
  model: Model,
  indexes: { factors: AnnIndex | null; content: AnnIndex | null },
): void {
  annCache.set(model, indexes);
}

/**
 * Readies a model loaded from an artifact for long-lived serving: arrays that are views into the artifact's
 * buffer are copied out and the HNSW indexes are loaded (hnswlib keeps its own copy of them), then the index
 * bytes are dropped. Nothing references the artifact buffer afterwards, so its memory (the index bytes
 * included) is freed instead of being held beside hnswlib's copy for the life of the model.
 */
export function detachFromArtifact(model: Model, files?: AnnFiles): Model {
  const detach = (value: unknown): unknown => {
    if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
      const view = value as Float32Array;
      return view.byteLength === view.buffer.byteLength ? view : view.slice();
    }
    if (Array.isArray(value)) return value.map(detach);
    if (value !== null && typeof value === "object") {
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record)) record[key] = detach(record[key]);
    }
    return value;
  };
  const record = model as unknown as Record<string, unknown>;
  for (const key of Object.keys(record)) if (key !== "ann") record[key] = detach(record[key]);
  annIndexes(model, files);
  model.ann = { factors: null, content: null };
  return model;
}

/**
 * Turns raw recent events into a history with the model's own weighting (type weights, ratings, dislikes),
 * summing repeats of an item. Recency decay is not applied: the caller already passes the latest events.
 */
export function historyFromEvents(
  model: Model,
  events: { items: ArrayLike<number>; types: ArrayLike<number>; values?: ArrayLike<number> },
): History {
  const n = events.items.length;
  const w = eventWeights(
    {
      user: new Int32Array(n),
      item: Int32Array.from(events.items),
      type: Uint8Array.from(events.types),
      value: events.values ? Float32Array.from(events.values) : new Float32Array(n).fill(5),
      ts: new Float64Array(n),
      nUsers: 1,
      nItems: model.nItems,
    },
    { ...model.weights, halfLifeDays: 0 },
  );
  const sum = new Map<number, number>();
  for (let i = 0; i < n; i++) sum.set(events.items[i]!, (sum.get(events.items[i]!) ?? 0) + w[i]!);
  return { items: Int32Array.from(sum.keys()), weights: Float32Array.from(sum.values()) };
}

export interface Recommendation {
  items: Int32Array;
  scores: Float32Array;
}

/**
 * Personalised top-k: history items are excluded; `filter` is the request's compiled predicate. Large
 * catalogues with an ALS-primary model take candidates from the HNSW index over item factors and blend
 * exactly over those; otherwise every item is scored.
 */
export function recommendForUser(
  model: Model,
  history: History,
  k: number,
  filter?: Filter | null,
): Recommendation {
  const ix = model.ease ? null : annIndexes(model).factors;
  if (ix && model.als && history.items.length > 0)
    return recommendFromCandidates(model, ix, history, k, filter);
  const scores = scoreForUser(model, history);
  const items = topK(scores, k, filter, history.items);
  return { items, scores: Float32Array.from(items, (i) => scores[i]!) };
}

function recommendFromCandidates(
  model: Model,
  ix: AnnIndex,
  history: History,
  k: number,
  filter?: Filter | null,
): Recommendation {
  const als = model.als!;
  const x = foldInUser(als, history);
  const inHistory = new Set<number>(history.items);
  const cand = searchAnn(ix, x, Math.max(200, 4 * k), (j) => !inHistory.has(j) && (!filter || filter(j)));
  const n = cand.items.length;
  const blended = new Float32Array(n);
  const b = model.blend;
  const part = new Float32Array(n);
  const addPart = (w: number) => {
    let m = 0;
    for (let i = 0; i < n; i++) m = Math.max(m, Math.abs(part[i]!));
    if (m > 0 && w !== 0) for (let i = 0; i < n; i++) blended[i]! += (w * part[i]!) / m;
  };
  part.set(cand.scores);
  addPart(b.cf);
  const c = model.content;
  if (c && b.content > 0) {
    const profile = new Float32Array(c.dims);
    for (let h = 0; h < history.items.length; h++) {
      const o = history.items[h]! * c.dims;
      for (let d = 0; d < c.dims; d++) profile[d]! += history.weights[h]! * c.vectors[o + d]!;
    }
    for (let i = 0; i < n; i++) {
      const o = cand.items[i]! * c.dims;
      let s = 0;
      for (let d = 0; d < c.dims; d++) s += profile[d]! * c.vectors[o + d]!;
      part[i] = s;
    }
    addPart(b.content);
  }
  if (b.popularity > 0) {
    for (let i = 0; i < n; i++) part[i] = Math.log1p(model.popularity.score[cand.items[i]!]!);
    addPart(b.popularity);
  }
  const top = topK(blended, k);
  return {
    items: Int32Array.from(top, (j) => cand.items[j]!),
    scores: Float32Array.from(top, (j) => blended[j]!),
  };
}

function maxOf(a: Float32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, a[i]!);
  return m;
}

/** Collaborative neighbours of one item: its EASE row when present, else nearest ALS factors. */
function collaborativeNeighbours(model: Model, item: number, k: number, filter?: Filter | null): Neighbours {
  if (model.ease && model.ease.rowOf[item]! >= 0) {
    const b = model.ease.b;
    const r = model.ease.rowOf[item]!;
    const p0 = b.indptr[r]!;
    const local = b.data.subarray(p0, b.indptr[r + 1]!);
    const top = topK(local, k, filter ? (j) => filter(b.indices[p0 + j]!) : null);
    return {
      items: Int32Array.from(top, (j) => b.indices[p0 + j]!),
      scores: Float32Array.from(top, (j) => local[j]!),
    };
  }
  const als = model.als;
  if (!als) return { items: new Int32Array(0), scores: new Float32Array(0) };
  const q = als.itemFactors.subarray(item * als.k, (item + 1) * als.k);
  const f = (j: number) => j !== item && (!filter || filter(j));
  const ix = annIndexes(model).factors;
  return ix
    ? searchAnn(ix, q, k, f)
    : exactSearch({ space: "cosine", dims: als.k, vectors: als.itemFactors }, q, k, f);
}

function contentNeighbours(model: Model, item: number, k: number, filter?: Filter | null): Neighbours {
  const c = model.content;
  if (!c) return { items: new Int32Array(0), scores: new Float32Array(0) };
  const q = c.vectors.subarray(item * c.dims, (item + 1) * c.dims);
  const f = (j: number) => j !== item && (!filter || filter(j));
  const ix = annIndexes(model).content;
  return ix
    ? searchAnn(ix, q, k, f)
    : exactSearch({ space: "cosine", dims: c.dims, vectors: c.vectors }, q, k, f);
}

/**
 * "Similar items": collaborative and content neighbours, each scaled to max 1, blended 70/30 (content alone
 * for items with no interaction signal, which is how cold items still get neighbours).
 */
export function similarItems(
  model: Model,
  item: number,
  k: number,
  filter?: Filter | null,
  contentShare = 0.3,
): Recommendation {
  const pool = Math.max(k * 3, 30);
  const cf = collaborativeNeighbours(model, item, pool, filter);
  const ct = contentNeighbours(model, item, pool, filter);
  const wCf = cf.items.length > 0 ? 1 - contentShare : 0;
  const wCt = cf.items.length > 0 ? contentShare : 1;
  const acc = new Map<number, number>();
  const add = (n: Neighbours, w: number) => {
    const m = maxOf(n.scores) || 1;
    for (let i = 0; i < n.items.length; i++)
      acc.set(n.items[i]!, (acc.get(n.items[i]!) ?? 0) + (w * Math.max(0, n.scores[i]!)) / m);
  };
  add(cf, wCf);
  add(ct, wCt);
  return rankMap(acc, k);
}

function rankMap(acc: Map<number, number>, k: number): Recommendation {
  const ids = Int32Array.from(acc.keys());
  const vals = Float32Array.from(acc.values());
  const top = topK(vals, k);
  return { items: Int32Array.from(top, (j) => ids[j]!), scores: Float32Array.from(top, (j) => vals[j]!) };
}

/**
 * Items bought together with a cart/basket: co-occurrence neighbours summed over the input items
 * (inputs excluded); topped up with similar items when the lists are short.
 */
export function complementaryItems(
  model: Model,
  items: ArrayLike<number>,
  k: number,
  filter?: Filter | null,
): Recommendation {
  const co = model.cooccurrence;
  const inCart = new Set<number>(Array.from(items));
  const acc = new Map<number, number>();
  for (const it of inCart) {
    if (it < 0 || it >= model.nItems) continue;
    for (let p = co.indptr[it]!; p < co.indptr[it + 1]!; p++) {
      const j = co.indices[p]!;
      if (inCart.has(j) || (filter && !filter(j))) continue;
      acc.set(j, (acc.get(j) ?? 0) + co.data[p]!);
    }
  }
  if (acc.size < k) {
    // Top-up scores stay below every co-occurrence score, so true complements always rank first.
    let floor = Number.POSITIVE_INFINITY;
    for (const v of acc.values()) floor = Math.min(floor, v);
    const cap = Number.isFinite(floor) ? floor * 0.5 : 1;
    for (const it of inCart) {
      const sim = similarItems(model, it, k, (j) => !inCart.has(j) && (!filter || filter(j)));
      for (let i = 0; i < sim.items.length; i++) {
        const j = sim.items[i]!;
        if (!acc.has(j)) acc.set(j, cap * sim.scores[i]! * 0.5);
      }
    }
  }
  return rankMap(acc, k);
}

/**
 * Most popular (time-decayed) items overall (`"all"`) or in a category id including its descendants;
 * `trending` ranks the same pool by recent-vs-base rate instead.
 */
export function popularItems(
  model: Model,
  category: number | "all",
  k = 20,
  opts: { trending?: boolean; filter?: Filter | null } = {},
): Recommendation {
  const byCat = model.popularity.byCategory;
  const row = category === "all" ? byCat.nRows - 1 : category;
  if (row < 0 || row >= byCat.nRows) return { items: new Int32Array(0), scores: new Float32Array(0) };
  const p0 = byCat.indptr[row]!;
  const pool = byCat.indices.subarray(p0, byCat.indptr[row + 1]!);
  const source = opts.trending ? model.popularity.trending : model.popularity.score;
  const vals = Float32Array.from(pool, (i) => source[i]!);
  const f = opts.filter;
  const top = topK(vals, k, f ? (j) => f(pool[j]!) : null);
  return { items: Int32Array.from(top, (j) => pool[j]!), scores: Float32Array.from(top, (j) => vals[j]!) };
}

/** The history item closest to a recommended item in factor space, for "Because you bought X". */
export function explainByHistory(model: Model, item: number, history: History): number {
  const als = model.als;
  let best = -1;
  let bestVal = Number.NEGATIVE_INFINITY;
  for (let h = 0; h < history.items.length; h++) {
    const it = history.items[h]!;
    if (!(history.weights[h]! > 0)) continue;
    let v = 0;
    if (model.ease && model.ease.rowOf[it]! >= 0) {
      const b = model.ease.b;
      const r = model.ease.rowOf[it]!;
      for (let p = b.indptr[r]!; p < b.indptr[r + 1]!; p++) if (b.indices[p] === item) v = b.data[p]!;
    } else if (als) {
      for (let t = 0; t < als.k; t++)
        v += als.itemFactors[it * als.k + t]! * als.itemFactors[item * als.k + t]!;
    }
    if (v > bestVal) {
      bestVal = v;
      best = it;
    }
  }
  return best;
}
