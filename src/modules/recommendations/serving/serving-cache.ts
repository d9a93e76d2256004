/**
 * Per-table caches of request-invariant work: which items a stock rule and filter leave (mask, count and,
 * when short, the list), the popularity order, and the sorted item lists of category listings. Kept in the
 * table's derived state (a snapshot's own, so they live, die and are counted with the snapshot) and dropped
 * whenever the table's items revision moves (a catalogue change written into the snapshot), so a cached
 * answer never outlives the data.
 */

import { categoryMatcher, type ItemPredicate, normalizeCategory } from "../../../engine/ranking/catalogue";
import { LruMap } from "../../../shared/lru-map";
import type { ItemTable } from "./item-table";

/**
 * The items a stock rule and filter leave: `count` of them, held as a list when there are at most `listMax`
 * (a selective filter: four bytes per matching item) and as a mask otherwise (a byte per item of the table).
 */
export type BaseEligibility =
  | {
      /** 1 = live, in stock when asked, and matching the filter. */
      mask: Uint8Array;
      count: number;
      list: null;
    }
  | {
      mask: null;
      count: number;
      /** The matching items in index order. */
      list: Int32Array;
    };

export type CategorySort = "popularity" | "rating" | "price_asc" | "price_desc";

interface TableCache {
  revision: number;
  bases: LruMap<string, BaseEligibility>;
  /** Bytes of `bases`: its keys, masks and lists. */
  basesBytes: number;
  /** The prices of a few broad bases' items, ascending (see `countAtMost`). */
  sortedPrices: LruMap<BaseEligibility, Float64Array>;
  categories: LruMap<string, Int32Array>;
  popularityOrder: Int32Array | null;
  /** Orders of other popularity arrays (time-of-day variants of the model's), kept as long as the table. */
  otherOrders: Map<Float32Array, Int32Array>;
  /** A zeroed byte per item (see scratchMarks). */
  marks: Uint8Array | null;
  /** Each item's category and brand as a code into its distinct values (see valueCodes). */
  codes: Map<"categories" | "brands", ValueCodes>;
}

/** A string column interned: `codes[i]` indexes `values`; a null or missing value is code -1. */
export interface ValueCodes {
  readonly codes: Int32Array;
  readonly values: readonly string[];
}

/**
 * Filter results kept per table: at least 32, and as many as fit in BASES_BYTES of masks and lists, so that a
 * shop's every category filter stays cached: computing one again scans the whole table (about 1 ms at 100k
 * items). A category of a 100k-item catalogue is kept as its list, about 4 KB for 1,000 items; as masks of
 * 100 KB only 41 would fit, and random filters over 100 categories would scan the table more often than not.
 */
const MIN_BASES = 32;
const BASES_BYTES = 4 * 2 ** 20;
const MAX_CATEGORY_LISTS = 256;
/** Broad bases whose prices are kept sorted: a shop's price caps (checkout add-ons) come from one or two. */
const MAX_SORTED_PRICES = 4;

/** A zeroed per-table byte per item; callers must zero what they set before returning. */
export function scratchMarks(table: ItemTable): Uint8Array {
  const cache = cacheFor(table);
  if (cache.marks === null || cache.marks.length !== table.size) cache.marks = new Uint8Array(table.size);
  return cache.marks;
}

function tableCacheBytes(cache: TableCache): number {
  let sum = cache.popularityOrder?.byteLength ?? 0;
  sum += cache.marks?.byteLength ?? 0;
  for (const [key, base] of cache.bases.entries()) sum += eligibilityBytes(key, base);
  for (const [, prices] of cache.sortedPrices.entries()) sum += 64 + prices.byteLength;
  for (const [key, order] of cache.categories.entries()) sum += 64 + 2 * key.length + order.byteLength;
  for (const order of cache.otherOrders.values()) sum += 64 + order.byteLength;
  for (const interned of cache.codes.values()) sum += interned.codes.byteLength + 64 * interned.values.length;
  return sum;
}

function cacheFor(table: ItemTable): TableCache {
  const revision = table.revision();
  const cache = table.derived.get<TableCache>(
    "serving-cache",
    () => ({
      revision,
      bases: new LruMap(),
      basesBytes: 0,
      sortedPrices: new LruMap(),
      categories: new LruMap(),
      popularityOrder: null,
      otherOrders: new Map(),
      marks: null,
      codes: new Map(),
    }),
    tableCacheBytes,
  );
  if (cache.revision !== revision) {
    // Popularity is trained (or loaded with the table) and does not move with catalogue edits.
    cache.revision = revision;
    cache.bases.clear();
    cache.basesBytes = 0;
    cache.sortedPrices.clear();
    cache.categories.clear();
    cache.codes.clear();
  }
  return cache;
}

/**
 * The table's categories or brands as codes into their distinct values, made once per items revision. A
 * filter on them then tests each distinct value once and each item with one array read: with the Map of
 * tested values it replaced, the lookup per item was a fifth of the CPU of a filtered query on 20k items.
 */
export function valueCodes(table: ItemTable, column: "categories" | "brands"): ValueCodes {
  const cache = cacheFor(table);
  const known = cache.codes.get(column);
  if (known !== undefined) return known;
  const source = table[column];
  const codes = new Int32Array(table.size);
  const values: string[] = [];
  const codeOf = new Map<string, number>();
  for (let i = 0; i < table.size; i++) {
    const value = source[i];
    if (value === null || value === undefined) {
      codes[i] = -1;
      continue;
    }
    let code = codeOf.get(value);
    if (code === undefined) {
      code = values.length;
      values.push(value);
      codeOf.set(value, code);
    }
    codes[i] = code;
  }
  const interned = { codes, values };
  cache.codes.set(column, interned);
  return interned;
}

function remember<K, V>(map: LruMap<K, V>, key: K, value: V, max: number): V {
  map.set(key, value);
  if (map.size > max) {
    const oldest = map.oldest();
    if (oldest !== undefined) map.delete(oldest[0]);
  }
  return value;
}

/**
 * Live items passing the stock rule and the compiled filter. `filterKey` identifies the filter (its JSON);
 * without one (a predicate nobody can name) the result is computed and not cached.
 */
export function baseEligibility(
  table: ItemTable,
  inStockOnly: boolean,
  predicate: ItemPredicate | null,
  filterKey: string | null,
  listMax: number,
): BaseEligibility {
  const cacheable = predicate === null || filterKey !== null;
  const key = `${inStockOnly ? 1 : 0}|${listMax}|${filterKey ?? ""}`;
  const cache = cacheFor(table);
  const hit = cacheable ? cache.bases.get(key) : undefined;
  if (hit !== undefined) return hit;
  const n = table.size;
  // The matches are collected as a list until there are more than `listMax`, then marked in a mask.
  const found: number[] = [];
  let mask: Uint8Array | null = null;
  let count = 0;
  for (let i = 0; i < n; i++) {
    if (table.deleted[i] === 1) continue;
    if (inStockOnly && table.inStock[i] !== 1) continue;
    if (predicate !== null && !predicate(i)) continue;
    count++;
    if (mask !== null) mask[i] = 1;
    else if (found.length < listMax) found.push(i);
    else {
      mask = new Uint8Array(n);
      for (const j of found) mask[j] = 1;
      mask[i] = 1;
    }
  }
  const base: BaseEligibility =
    mask === null ? { mask: null, count, list: Int32Array.from(found) } : { mask, count, list: null };
  if (!cacheable) return base;
  cache.bases.set(key, base);
  cache.basesBytes += eligibilityBytes(key, base);
  while (cache.basesBytes > BASES_BYTES && cache.bases.size > MIN_BASES) {
    const [oldestKey, oldest] = cache.bases.oldest()!;
    cache.bases.delete(oldestKey);
    cache.basesBytes -= eligibilityBytes(oldestKey, oldest);
  }
  return base;
}

/** An entry's bytes, its key counted too: a filter matching nothing still takes room. */
function eligibilityBytes(key: string, base: BaseEligibility): number {
  return 64 + 2 * key.length + (base.mask !== null ? base.mask.byteLength : base.list.byteLength);
}

/**
 * How many of a broad base's items cost at most `maxPrice`: a binary search in the base's prices, sorted on
 * first use, instead of a pass over every item of the table on each request with a price cap. The sort (about
 * 1 ms for 66k prices) is paid again after each catalogue revision, and repaid by a few dozen capped requests.
 * The base must be one `baseEligibility` keeps (no filter, or a named one), as the presets' are: an uncached
 * base is a new object on each request and would be sorted every time.
 */
export function countAtMost(
  table: ItemTable,
  base: BaseEligibility & { mask: Uint8Array },
  maxPrice: number,
): number {
  const cache = cacheFor(table);
  let sorted = cache.sortedPrices.get(base);
  if (sorted === undefined) {
    sorted = new Float64Array(base.count);
    const { mask } = base;
    const prices = table.prices;
    for (let i = 0, j = 0; i < mask.length; i++) if (mask[i] === 1) sorted[j++] = prices[i]!;
    // Ascending, a price that is not a number last: it is never at most any cap.
    sorted.sort();
    remember(cache.sortedPrices, base, sorted, MAX_SORTED_PRICES);
  }
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! <= maxPrice) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Every item, most popular first (ties by index), by the table's popularity or the one given. */
export function popularityOrder(table: ItemTable, popularity: Float32Array = table.popularity): Int32Array {
  const sorted = () => {
    const order = Int32Array.from({ length: table.size }, (_, i) => i);
    order.sort((a, b) => popularity[b]! - popularity[a]! || a - b);
    return order;
  };
  const cache = cacheFor(table);
  if (popularity !== table.popularity) {
    let order = cache.otherOrders.get(popularity);
    if (order === undefined) {
      order = sorted();
      cache.otherOrders.set(popularity, order);
    }
    return order;
  }
  cache.popularityOrder ??= sorted();
  return cache.popularityOrder;
}

/** Live items of a category and its sub-categories in listing order; cached per category and sort key. */
export function categoryOrder(table: ItemTable, category: string, sortBy: CategorySort): Int32Array {
  const path = normalizeCategory(category);
  const key = `${sortBy}|${path}`;
  const cache = cacheFor(table);
  const hit = cache.categories.get(key);
  if (hit !== undefined) return hit;
  const inCategory = categoryMatcher([path]);
  const items: number[] = [];
  for (let i = 0; i < table.size; i++) {
    if (table.deleted[i] !== 1 && inCategory(table.categories[i]!)) items.push(i);
  }
  const order = Int32Array.from(items);
  const pop = table.popularity;
  const price = table.prices;
  const rating = table.rating;
  const byPopularity = (a: number, b: number) => pop[b]! - pop[a]! || a - b;
  // Unrated (NaN) items sort after every rated one, as `nulls last` does in SQL.
  const rated = (i: number) => (Number.isNaN(rating[i]!) ? Number.NEGATIVE_INFINITY : rating[i]!);
  const compare: Record<CategorySort, (a: number, b: number) => number> = {
    popularity: byPopularity,
    rating: (a, b) => rated(b) - rated(a) || byPopularity(a, b),
    price_asc: (a, b) => price[a]! - price[b]! || a - b,
    price_desc: (a, b) => price[b]! - price[a]! || a - b,
  };
  order.sort((a, b) => {
    const c = compare[sortBy](a, b);
    return Number.isNaN(c) ? 0 : c;
  });
  return remember(cache.categories, key, order, MAX_CATEGORY_LISTS);
}
