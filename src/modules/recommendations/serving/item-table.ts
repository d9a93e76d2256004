/**
 * The product columns every recommendation reads, as typed arrays indexed by a dense item index. Built from
 * a trained snapshot when the account has one, otherwise from the product rows (see catalogue-loader.ts), so
 * filters, ranking and explanations run the same code either way.
 */
import { DerivedState } from "../../../snapshots/derived-state";
export interface ItemTable {
  readonly size: number;
  readonly externalIds: readonly string[];
  readonly names: readonly string[];
  readonly prices: Float64Array;
  /** Slash-separated category path per item ("electronics/phones"). */
  readonly categories: readonly string[];
  readonly brands: readonly (string | null)[];
  readonly inStock: Uint8Array;
  /** 1 = soft-deleted (a snapshot keeps rows deleted after training, flagged). Never serve these. */
  readonly deleted: Uint8Array;
  /** Mean RATING value, NaN when the product was never rated. */
  readonly rating: Float32Array;
  /** Free attributes per item; loaded lazily for snapshots (only attribute filters read them). */
  attributes(): Promise<readonly (Readonly<Record<string, unknown>> | undefined)[]>;
  /** Time-decayed interaction weight: "popular this week". */
  readonly popularity: Float32Array;
  readonly indexOf: ReadonlyMap<string, number>;
  /** Moves whenever the arrays above are written in place; caches derived from them rebuild then. */
  revision(): number;
  /**
   * Where caches derived from this table are kept (and counted): the snapshot's own state for a snapshot's
   * table, the table's for a catalogue table. Nothing derived hangs off a table in a module-level map.
   */
  readonly derived: DerivedState;
}

export interface ItemRow {
  externalId: string;
  name: string;
  price: number;
  category: string;
  brand: string | null;
  inStock: boolean;
  attributes: Record<string, unknown> | null;
  popularity: number;
  rating: number | null;
}

/** Builds an ItemTable from product rows (the no-model path). */
export function buildItemTable(rows: readonly ItemRow[]): ItemTable {
  const n = rows.length;
  const prices = new Float64Array(n);
  const inStock = new Uint8Array(n);
  const rating = new Float32Array(n);
  const popularity = new Float32Array(n);
  const indexOf = new Map<string, number>();
  const externalIds: string[] = new Array(n);
  const names: string[] = new Array(n);
  const categories: string[] = new Array(n);
  const brands: (string | null)[] = new Array(n);
  const attributes: (Record<string, unknown> | undefined)[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const row = rows[i]!;
    externalIds[i] = row.externalId;
    names[i] = row.name;
    indexOf.set(row.externalId, i);
    prices[i] = row.price;
    categories[i] = row.category;
    brands[i] = row.brand === "" ? null : row.brand;
    inStock[i] = row.inStock ? 1 : 0;
    rating[i] = row.rating ?? Number.NaN;
    popularity[i] = row.popularity;
    attributes[i] =
      row.attributes !== null && Object.keys(row.attributes).length > 0 ? row.attributes : undefined;
  }
  return {
    size: n,
    externalIds,
    names,
    prices,
    categories,
    brands,
    inStock,
    deleted: new Uint8Array(n),
    rating,
    attributes: async () => attributes,
    popularity,
    indexOf,
    // A changed catalogue is a new table (the cache reloads it), never an in-place write.
    revision: () => 0,
    derived: new DerivedState(),
  };
}

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
