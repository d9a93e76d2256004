/**
 * Candidate generation for large catalogues, shared by the service's ranker and training's evaluation: a
 * catalogue of more than `CANDIDATE_MIN_ITEMS` items is ranked over candidates only (the best items of each
 * personal signal, then the most popular ones), and the blend is scaled and applied over those. Training
 * measures its model with this very step, so the figure a job reports is that of the answers served.
 */

/** Catalogues with more items than this rank candidates instead of scoring every item. */
export const CANDIDATE_MIN_ITEMS = 2_000;

/** Where ranking switches from scoring every item to scoring candidates. */
export interface ServingTuning {
  /**
   * Catalogues with more items than this rank candidates. Their best items per signal come from the
   * model's HNSW indexes (built at training for large catalogues), else from one scan per user, memoised
   * with the user's cached history, so repeated requests of a user skip the scan.
   */
  candidateMinItems: number;
  /** A filter (or stock rule) leaving at most this many items is answered by scoring exactly those. */
  selectiveMaxItems: number;
}

export const DEFAULT_TUNING: Readonly<ServingTuning> = Object.freeze({
  candidateMinItems: CANDIDATE_MIN_ITEMS,
  selectiveMaxItems: 5_000,
});

export function useCandidates(items: number, tuning: ServingTuning): boolean {
  return items > tuning.candidateMinItems;
}

/** Most items fetched from one ranked source per request; past that, scoring the matches exactly is cheaper. */
export const MAX_RANKED_CANDIDATES = 2000;

/** A per-user signal that can list its best items (an HNSW index or a scan of every item's score). */
export interface RankedSource {
  /** Up to `k` items with the highest scores, best first (eligible or not). */
  top(k: number): Int32Array;
}

/**
 * Collects distinct eligible items in the order they are added. Marks live in a caller-owned zeroed byte
 * array (one per item), cleared again by `finish`, so a collection costs no Set.
 */
export class CandidateCollector {
  private readonly items: number[] = [];

  constructor(
    private readonly marks: Uint8Array,
    readonly eligible: (item: number) => boolean,
  ) {}

  add(item: number): void {
    if (this.marks[item] === 0 && this.eligible(item)) {
      this.marks[item] = 1;
      this.items.push(item);
    }
  }

  /** The first `wanted` eligible items of `order` (a precomputed ranking, e.g. by popularity). */
  fromOrder(order: ArrayLike<number>, wanted: number): void {
    let found = 0;
    for (let j = 0; j < order.length && found < wanted; j++) {
      const i = order[j]!;
      if (this.eligible(i)) {
        this.add(i);
        found++;
      }
    }
  }

  /** The candidates, in the order added; the marks are zeroed again. */
  finish(): Int32Array {
    for (const item of this.items) this.marks[item] = 0;
    return Int32Array.from(this.items);
  }
}

export interface PersonalCandidateInput {
  /** Items the answer needs (skip + limit, or the diversity pool). */
  pool: number;
  /** Share of the catalogue eligible under the request's filters (1 without filters). */
  share: number;
  /** Items the request leaves out (the user's own, the request's exclusions). */
  excludedCount: number;
  collab: RankedSource | null;
  content: RankedSource | null;
  /** Content weighs at most half as much as collaborative filtering: a page of its candidates is enough. */
  contentSecondary: boolean;
  /** The catalogue by popularity, best first; null: no popular candidates. */
  popularOrder: (() => ArrayLike<number>) | null;
  /** Called between the personal signals and the popular items (the request's sparse lists). */
  between?: (add: (item: number) => void) => void;
}

/**
 * Each ranked source contributes its best eligible items (collaborative twice the page, content one page
 * when secondary, else twice): the search asks for more to make up for exclusions and the filter, starting
 * small (most of a long history is not among the user's nearest items) and widening only when too few
 * survive. What a source returns past those is not scored: an item ranked below twice the page by its
 * strongest signal practically never reaches the page. Then the most popular eligible items (a page):
 * decisive for cold users, and the trend component's best.
 */
export function personalCandidates(collector: CandidateCollector, input: PersonalCandidateInput): void {
  const { pool } = input;
  const widths = searchWidths(input);
  const fetch = (source: RankedSource, wanted: number) => {
    let k = widths.first(wanted);
    for (;;) {
      const top = source.top(k);
      let found = 0;
      for (let j = 0; j < top.length && found < wanted; j++) {
        const i = top[j]!;
        if (collector.eligible(i)) {
          collector.add(i);
          found++;
        }
      }
      if (found >= wanted || k >= widths.widest || top.length < k) return;
      k = Math.min(widths.widest, k * 3);
    }
  };
  if (input.collab) fetch(input.collab, 2 * pool);
  if (input.content) fetch(input.content, input.contentSecondary ? pool : 2 * pool);
  input.between?.((item) => collector.add(item));
  if (input.popularOrder) collector.fromOrder(input.popularOrder(), pool);
}

/**
 * The `k` that `personalCandidates` asks of each ranked source first (it asks again, wider, only when too few
 * of those items are eligible): for searching them ahead of the ranking.
 */
export function firstSearches(
  input: Pick<PersonalCandidateInput, "pool" | "share" | "excludedCount" | "contentSecondary">,
): { collab: number; content: number } {
  const { first } = searchWidths(input);
  const { pool } = input;
  return { collab: first(2 * pool), content: first(input.contentSecondary ? pool : 2 * pool) };
}

/**
 * How widely a source is searched for `wanted` eligible items: enough to make up for the exclusions and for
 * the filter's share of the catalogue, and never beyond `widest`.
 */
function searchWidths({
  pool,
  share,
  excludedCount,
}: Pick<PersonalCandidateInput, "pool" | "share" | "excludedCount">) {
  const widest = Math.min(
    MAX_RANKED_CANDIDATES,
    Math.ceil((2 * pool + excludedCount + 20) / Math.max(share, 1e-3)),
  );
  const first = (wanted: number) =>
    Math.min(widest, Math.ceil((wanted + Math.min(excludedCount, wanted) + 20) / Math.max(share, 1e-3)));
  return { widest, first };
}
