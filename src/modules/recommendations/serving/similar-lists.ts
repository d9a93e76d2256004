/**
 * A model's "similar items" lists (ModelSignals.similar): the items nearest one item by taste (ALS factors)
 * and content, blended, kept per snapshot. For a large catalogue the candidates come from the model's two
 * HNSW indexes, searched on the request thread (`get`) or ahead of it on a thread of the runtime's pool
 * (`ahead`); a small one is scanned whole. Either way the list is ranked by the same code (`rank`).
 */
import { type AnnIndex, contentRow, type Neighbours } from "../../../engine";
import { type ServingTuning, useCandidates } from "../../../engine/ranking/candidates";
import type { ScoredItems } from "../../../engine/ranking/signals";
import { topK } from "../../../engine/topk";
import { LruMap } from "../../../shared/lru-map";
import type { EngineModel } from "../../../training/engine-api";
import { annTop, annTopAsync, contentIndex, factorIndex } from "./ann-access";
import { rowsDot, sparseRowsDot } from "./vector-rows";

/** Similarity blend for "similar items": taste (ALS factors) and content, when the model has both. */
const TASTE_SHARE = 0.6;
/** Similar-item lists kept per snapshot (about 2 KB each at k = 200). */
const SIMILAR_CACHE_ENTRIES = 20_000;
const NO_NEIGHBOURS: Neighbours = { items: new Int32Array(0), scores: new Float32Array(0) };
const similarKey = (item: number, k: number) => item * 4096 + Math.min(k, 4095);

/** Every item of a catalogue of n, for the scan that finds similar items without an index. */
function allItems(n: number): Int32Array {
  const items = new Int32Array(n);
  for (let i = 0; i < n; i++) items[i] = i;
  return items;
}

export class SimilarLists {
  private readonly cache = new LruMap<number, ScoredItems>();
  /** `ahead`'s searches under way, by the key `cache` will keep their answer under. */
  private readonly pending = new Map<number, Promise<void>>();
  private factorNorms: Float32Array | null = null;
  private itemMarks: Uint8Array | undefined;

  constructor(
    private readonly model: EngineModel,
    private readonly tuning: ServingTuning,
  ) {}

  /** Bytes of the lists kept, the norms and the marks. */
  bytes(): number {
    let sum = (this.factorNorms?.byteLength ?? 0) + (this.itemMarks?.byteLength ?? 0);
    for (const [, found] of this.cache.entries())
      sum += 64 + found.items.byteLength + found.scores.byteLength;
    return sum;
  }

  /** The `k` items most similar to `item`, best first, `item` left out (see ModelSignals.similar). */
  get(item: number, k: number): ScoredItems {
    // Neighbours depend on the model alone (eligibility is checked by the caller): kept per snapshot.
    const key = similarKey(item, k);
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    const row = this.contentRowOf(item);
    const pool = useCandidates(this.model.nItems, this.tuning) ? this.pool(item, row, k + 20) : null;
    return this.keep(key, this.rank(item, row, pool, k));
  }

  /** Makes `get(item, k)`'s list with the searches off the request thread (see ModelSignals.similarAhead). */
  ahead(item: number, k: number): Promise<void> | null {
    const key = similarKey(item, k);
    if (this.cache.peek(key) !== undefined) return null;
    const pending = this.pending.get(key);
    if (pending !== undefined) return pending;
    if (!useCandidates(this.model.nItems, this.tuning)) return null;
    const row = this.contentRowOf(item);
    const searches = this.searches(item, row, k + 20, annTopAsync);
    if (searches === null) return null;
    const done = Promise.all(searches).then(
      ([taste, near]) => {
        this.pending.delete(key);
        // A synchronous `get` may have made it meanwhile: the same answer, kept once.
        if (this.cache.peek(key) === undefined)
          this.keep(key, this.rank(item, row, this.union(taste, near), k));
      },
      () => {
        this.pending.delete(key);
      },
    );
    this.pending.set(key, done);
    return done;
  }

  private keep(key: number, found: ScoredItems): ScoredItems {
    if (this.cache.size >= SIMILAR_CACHE_ENTRIES) this.cache.delete(this.cache.oldest()![0]);
    this.cache.set(key, found);
    return found;
  }

  /** The best `k` of `pool` (every item when null) by similarity to `item`; `row` is its content row, whole. */
  private rank(item: number, row: Float32Array | null, pool: Int32Array | null, k: number): ScoredItems {
    const items = pool ?? allItems(this.model.nItems);
    const scores = this.similarities(item, row, items);
    // The item itself is never its own neighbour.
    for (let j = 0; j < items.length; j++) if (items[j] === item) scores[j] = Number.NEGATIVE_INFINITY;
    const top = topK(scores, k);
    const found = new Int32Array(top.length);
    const topScores = new Float32Array(top.length);
    for (let j = 0; j < top.length; j++) {
      found[j] = items[top[j]!]!;
      topScores[j] = scores[top[j]!]!;
    }
    return { items: found, scores: topScores };
  }

  /**
   * Taste cosine and content cosine of `item` with each of `items`, blended as "similar items" ranks them;
   * `row` is `item`'s content row written whole. The dot products run over all of them at once, in the
   * native kernels when they load (vector-rows.ts).
   */
  private similarities(item: number, row: Float32Array | null, items: Int32Array): Float32Array {
    const als = this.model.als;
    const content = this.model.content;
    const m = items.length;
    const out = new Float32Array(m);
    if (als) {
      const norms = this.norms();
      const own = norms[item]!;
      if (own > 0) {
        const dots = new Float32Array(m).fill(Number.NaN);
        rowsDot(
          als.itemFactors,
          als.k,
          items,
          als.itemFactors.subarray(item * als.k, (item + 1) * als.k),
          dots,
        );
        const share = content ? TASTE_SHARE : 1;
        for (let j = 0; j < m; j++) {
          const other = norms[items[j]!]!;
          if (other > 0) out[j] = (share * dots[j]!) / (own * other);
        }
      }
    }
    // Content vectors are L2-normalised: the dot product of the two rows is the cosine.
    if (content && row) {
      const dots = new Float32Array(m).fill(Number.NaN);
      sparseRowsDot(content, items, row, dots);
      const share = als ? 1 - TASTE_SHARE : 1;
      for (let j = 0; j < m; j++) out[j] = out[j]! + share * dots[j]!;
    }
    return out;
  }

  /** Neighbour candidates from the HNSW indexes (taste and content), or null when there are none to ask. */
  private pool(item: number, row: Float32Array | null, k: number): Int32Array | null {
    const found = this.searches(item, row, k, annTop);
    return found === null ? null : this.union(found[0], found[1]);
  }

  /**
   * The taste and content searches for items near `item`, made with `search` (annTop, or annTopAsync off the
   * request thread); null when the model lacks an index one of them needs (the caller scans instead).
   */
  private searches<T>(
    item: number,
    row: Float32Array | null,
    k: number,
    search: (ix: AnnIndex, query: Float32Array, k: number) => T,
  ): [T | Neighbours, T | Neighbours] | null {
    const model = this.model;
    const factors = model.als ? factorIndex(model) : null;
    const content = model.content ? contentIndex(model) : null;
    if ((model.als && !factors) || (model.content && !content)) return null;
    const taste =
      factors && model.als
        ? search(factors, model.als.itemFactors.subarray(item * model.als.k, (item + 1) * model.als.k), k)
        : NO_NEIGHBOURS;
    const near = content && row ? search(content, row, k) : NO_NEIGHBOURS;
    return [taste, near];
  }

  /** The items of both searches, in first-seen order. */
  private union(taste: Neighbours, near: Neighbours): Int32Array {
    // Through a per-item mark: a Set of a few hundred numbers costs more.
    const marks = this.marks();
    const out = new Int32Array(taste.items.length + near.items.length);
    let size = 0;
    for (const list of [taste.items, near.items]) {
      for (let j = 0; j < list.length; j++) {
        const i = list[j]!;
        if (marks[i] === 1) continue;
        marks[i] = 1;
        out[size++] = i;
      }
    }
    for (let j = 0; j < size; j++) marks[out[j]!] = 0;
    return out.subarray(0, size);
  }

  /**
   * The item's content row written whole, or null without content: each candidate's cosine is then a pass
   * over its non-zeros.
   */
  private contentRowOf(item: number): Float32Array | null {
    const content = this.model.content;
    return content ? contentRow(content, item, new Float32Array(content.dims)) : null;
  }

  /** A zeroed byte per item, zero again after each use. */
  private marks(): Uint8Array {
    this.itemMarks ??= new Uint8Array(this.model.nItems);
    return this.itemMarks;
  }

  /** Each item's factor vector length (the model must have ALS factors). */
  norms(): Float32Array {
    if (this.factorNorms === null) {
      const als = this.model.als!;
      const n = this.model.nItems;
      const norms = new Float32Array(n);
      for (let i = 0; i < n; i++) {
        let s = 0;
        for (let d = 0; d < als.k; d++) s += als.itemFactors[i * als.k + d]! ** 2;
        norms[i] = Math.sqrt(s);
      }
      this.factorNorms = norms;
    }
    return this.factorNorms;
  }
}
