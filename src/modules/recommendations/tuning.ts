/** Where ranking switches from scoring every item to scoring candidates (see rank.ts). */
export interface ServingTuning {
  /** Catalogues with more items than this rank HNSW candidates; at or below it every item is scored. */
  candidateMinItems: number;
  /** A filter (or stock rule) leaving at most this many items is answered by scoring exactly those. */
  selectiveMaxItems: number;
}

export const DEFAULT_TUNING: Readonly<ServingTuning> = Object.freeze({
  candidateMinItems: 20_000,
  selectiveMaxItems: 5_000,
});
