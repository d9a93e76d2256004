/**
 * HNSW access for serving: the model's own indexes (built at training time for large catalogues), or one
 * built here on first use for a model trained without them (small catalogues forced onto the candidate path,
 * e.g. by a low `candidateMinItems`), plus a plain top-k search without a JS filter callback (eligibility is
 * checked afterwards on the few items returned, which is far cheaper than a callback per visited node).
 */
import {
  type AnnIndex,
  annIndexes,
  buildAnnIndex,
  contentAnnRows,
  denseRows,
  foldedSearches,
  type Neighbours,
} from "../../../engine";
import type { FoldInBasis } from "../../../engine/fold-in";
import type { History } from "../../../engine/types";
import type { EngineModel } from "../../../training/engine-api";

/**
 * Largest catalogue whose missing index is built at request time (synchronous native code: about 0.25 s at
 * 2,000 items with 256-dim content vectors). Larger models without indexes scan instead.
 */
const BUILD_MAX_ITEMS = 2_000;

const built = new WeakMap<EngineModel, { factors?: AnnIndex | null; content?: AnnIndex | null }>();

export function factorIndex(model: EngineModel): AnnIndex | null {
  const own = annIndexes(model).factors;
  if (own !== null || model.als === null) return own;
  const cache = built.get(model) ?? {};
  built.set(model, cache);
  if (cache.factors === undefined) {
    cache.factors =
      model.nItems <= BUILD_MAX_ITEMS
        ? buildAnnIndex(denseRows(model.als.itemFactors, model.als.k), "ip")
        : null;
  }
  return cache.factors;
}

export function contentIndex(model: EngineModel): AnnIndex | null {
  const own = annIndexes(model).content;
  if (own !== null || model.content === null) return own;
  const cache = built.get(model) ?? {};
  built.set(model, cache);
  if (cache.content === undefined) {
    cache.content =
      model.nItems <= BUILD_MAX_ITEMS ? buildAnnIndex(contentAnnRows(model.content), "cosine") : null;
  }
  return cache.content;
}

/**
 * Up to `k` labels nearest to `query`, best first, with their similarity as the index computed it (inner
 * product in an "ip" index, cosine in a "cosine" one). `ef` bounds the candidate list of the walk (default
 * the index's own efSearch); it is raised to k, as k results need at least that.
 */
export function annTop(ix: AnnIndex, query: Float32Array, k: number, ef = ix.options.efSearch): Neighbours {
  const kk = Math.min(k, ix.index.getCurrentCount());
  if (kk <= 0) return { items: new Int32Array(0), scores: new Float32Array(0) };
  ix.index.setEf(Math.max(ef, kk));
  // A Float32Array query is read in place and answered with typed arrays (patches/hnswlib-node@3.0.0.patch):
  // no JS number is made per dimension or per neighbour.
  return neighbours(ix.index.searchKnn(query, kk));
}

/**
 * `annTop`, searched on a thread of the runtime's pool while the request thread goes on with other work: the
 * same walk (the same `ef`, passed with the search rather than set on the shared index), so the same answer.
 * The query is copied when the search starts.
 */
export async function annTopAsync(
  ix: AnnIndex,
  query: Float32Array,
  k: number,
  ef = ix.options.efSearch,
): Promise<Neighbours> {
  const kk = Math.min(k, ix.index.getCurrentCount());
  if (kk <= 0) return { items: new Int32Array(0), scores: new Float32Array(0) };
  return neighbours(await ix.index.searchKnnAsync(query, kk, Math.max(ef, kk)));
}

/**
 * `annTopAsync` for the user vector that `foldInUser(basis, history)` solves, solved on the pool's thread
 * before the walk (the same native kernel, so the same vector), and answered with it; null when this process
 * has no native fold-in, and the caller solves it on its own thread.
 */
export function annTopFoldedAsync(
  ix: AnnIndex,
  basis: FoldInBasis,
  history: History,
  k: number,
  ef = ix.options.efSearch,
): Promise<{ found: Neighbours; vector: Float32Array }> | null {
  if (!foldedSearches() || basis.k !== ix.dims) return null;
  const kk = Math.min(k, ix.index.getCurrentCount());
  if (kk <= 0) return null;
  const fold = {
    factors: basis.itemFactors,
    gram: basis.itemGram,
    items: history.items,
    weights: history.weights,
    alpha: basis.alpha,
    regularization: basis.regularization,
  };
  try {
    return ix.index
      .searchFoldedAsync(fold, kk, Math.max(ef, kk))
      .then((found) => ({ found: neighbours(found), vector: found.query }));
  } catch (error) {
    // Refused arguments fail the search as a failed search does: the ranking makes it on its own thread.
    return Promise.reject(error);
  }
}

function neighbours(found: { neighbors: Uint32Array; distances: Float32Array }): Neighbours {
  const n = found.neighbors.length;
  const items = new Int32Array(found.neighbors.buffer, found.neighbors.byteOffset, n);
  const scores = found.distances;
  // hnswlib reports distances, 1 − similarity for both spaces.
  for (let j = 0; j < n; j++) scores[j] = 1 - scores[j]!;
  return { items, scores };
}
