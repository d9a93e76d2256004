import { CANDIDATE_MIN_ITEMS } from "../../../engine/ranking/candidates";

/** Where ranking switches from scoring every item to scoring candidates (see rank.ts). */
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
