/** Where ranking switches from scoring every item to scoring candidates (see rank.ts). */
export interface ServingTuning {
  /** Catalogues with more items than this rank HNSW candidates; at or below it every item is scored. */
  candidateMinItems: number;
  /** Catalogues with more items than this rank candidates when the trained model carries HNSW indexes. */
  indexedMinItems: number;
  /** A filter (or stock rule) leaving at most this many items is answered by scoring exactly those. */
  selectiveMaxItems: number;
}

export const DEFAULT_TUNING: Readonly<ServingTuning> = Object.freeze({
  candidateMinItems: 20_000,
  indexedMinItems: 2_000,
  selectiveMaxItems: 5_000,
});

/**
 * Candidates pay off from a few thousand items, but only with an index to ask: models trained with HNSW
 * indexes use them above `indexedMinItems`; any model above `candidateMinItems` (its index is built here on
 * first use when small enough, else the signal's top items come from one scan).
 */
export function useCandidates(items: number, indexed: boolean, tuning: ServingTuning): boolean {
  return items > tuning.candidateMinItems || (indexed && items > tuning.indexedMinItems);
}
