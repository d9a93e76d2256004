/**
 * The product columns every recommendation reads, as typed arrays indexed by a dense item index. Built from
 * a trained snapshot when the account has one, otherwise from the product rows (see catalogue-loader.ts), so
 * filters, ranking and explanations run the same code either way.
 */
import type { RankCatalogue } from "../../../engine/ranking/catalogue";
import { DerivedState } from "../../../snapshots/derived-state";

export interface ItemTable extends RankCatalogue {
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
