/**
 * What the recommender knows of one end user beyond the snapshot: their profile and latest interactions, as
 * the history cache holds it and a read of the database returns it.
 */

/**
 * Latest interactions fed to fold-in: enough for a stable vector, small enough to read in one indexed scan.
 * What is left out of the answers is every product of the history (`interacted`), not only these.
 */
export const HISTORY_LENGTH = 200;

export interface HistoryEvent {
  externalProductId: string;
  /** Upper-case interaction type: VIEW, CLICK, CART, PURCHASE, RATING, LIKE, DISLIKE, SEARCH. */
  type: string;
  value: number;
  occurredAt: number;
}

export interface UserHistory {
  /** end_users.id, or null when the end user does not exist in the account (treated as a cold user). */
  endUserId: number | null;
  preferredCategories: readonly string[];
  priceRangeMin: number | null;
  priceRangeMax: number | null;
  /** Newest first; the latest HISTORY_LENGTH interactions. */
  events: readonly HistoryEvent[];
  /**
   * Every product the user ever interacted with, however old (the contract never recommends them back),
   * distinct: `events` stops at the latest HISTORY_LENGTH, this list does not.
   */
  interacted: readonly string[];
}

/** A user the account does not have (a fresh object each time, as every read's result is). */
export const noHistory = (): UserHistory => ({
  endUserId: null,
  preferredCategories: [],
  priceRangeMin: null,
  priceRangeMax: null,
  events: [],
  interacted: [],
});
