/**
 * What pure ranking reads of a catalogue and of a user, as plain columns and values: the recommendation
 * module's item table and cached history have these fields (and more), so the ranking here never names them.
 */

/** Catalogue columns indexed by a dense item index. */
export interface RankCatalogue {
  readonly size: number;
  readonly prices: Float64Array;
  /** Slash-separated category path per item ("electronics/phones"). */
  readonly categories: readonly string[];
  readonly brands: readonly (string | null)[];
  readonly indexOf: ReadonlyMap<string, number>;
}

/** One interaction of a user's recent history, newest first. */
export interface RankEvent {
  readonly externalProductId: string;
  /** Upper-case interaction type: VIEW, CLICK, CART, PURCHASE, RATING, LIKE, DISLIKE, SEARCH. */
  readonly type: string;
  readonly value: number;
  readonly occurredAt: number;
}

/** A user as ranking sees them: recent events, every product ever touched, stated preferences. */
export interface RankHistory {
  readonly events: readonly RankEvent[];
  /** Every product the user ever interacted with, distinct, however old. */
  readonly interacted: readonly string[];
  readonly preferredCategories: readonly string[];
  readonly priceRangeMin: number | null;
  readonly priceRangeMax: number | null;
}

/** Whether an item (dense index) passes a request's filters. */
export type ItemPredicate = (item: number) => boolean;

/**
 * True when `path` is `category` or one of its sub-categories. Case-sensitive, like the product listing's
 * category filter, so the same category string selects the same products everywhere.
 */
export function inCategory(path: string, category: string): boolean {
  const c = normalizeCategory(category);
  return path === c || path.startsWith(`${c}/`);
}

export function normalizeCategory(category: string): string {
  return category.trim().replace(/^\/+|\/+$/g, "");
}

/**
 * A per-request memo of "is this category path inside one of these subtrees": paths repeat across items, so
 * each distinct path is tested once and later items cost one Map lookup.
 */
export function categoryMatcher(categories: readonly string[]): (path: string) => boolean {
  const memo = new Map<string, boolean>();
  return (path) => {
    let hit = memo.get(path);
    if (hit === undefined) {
      hit = categories.some((category) => inCategory(path, category));
      memo.set(path, hit);
    }
    return hit;
  };
}

/** The most specific part of a category path, for "Popular in <category>" and diversity. */
export function categoryLabel(path: string): string {
  const parts = path.split("/").filter((p) => p !== "");
  return parts.length > 0 ? parts[parts.length - 1]! : path;
}
