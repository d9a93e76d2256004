/**
 * Keeps a snapshot's item table in step with the catalogue between trainings: products changed since the
 * watermark are re-read (one indexed query per account, at most once per refresh interval, off the request
 * path) and their name, price, category, brand, stock and deleted flag are written into the snapshot's
 * arrays in place. Products created after training are not in the model and stay out until the next run.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { bumpItemsRevision } from "./revision";
import type { Snapshot } from "./types";

interface ChangedProduct {
  id: number;
  name: string;
  price: number;
  category: string;
  brand: string | null;
  in_stock: boolean;
  deleted: boolean;
}

/**
 * A product's last change: its update or its deletion. Written exactly as the expression of the index
 * products_account_changed_idx, so the planner reads the newest changes from it.
 */
export const CHANGED_AT = sql`greatest(updated_at, coalesce(deleted_at, updated_at))`;

/** Aggregate over an account's product rows: their newest change (see `productsWatermark`). */
export const WATERMARK = sql`coalesce(max(${CHANGED_AT}), '-infinity')::text`;

/**
 * The newest catalogue change of an account, as Postgres text: microsecond precision survives the round
 * trip, so an unchanged catalogue selects nothing (a JS Date would truncate to ms and re-read the last row).
 */
export async function productsWatermark(database: Database, accountId: number): Promise<string> {
  const [row] = await database.rows<{ w: string }>(sql`
    select ${WATERMARK} as w from products where account_id = ${accountId}`);
  return row?.w ?? "-infinity";
}

/** Applies catalogue changes newer than `since` (a watermark from productsWatermark); returns the new one. */
export async function refreshProducts(
  database: Database,
  snapshot: Snapshot,
  since: string,
): Promise<string> {
  const [bound] = await database.rows<{ w: string }>(sql`
    select coalesce(max(${CHANGED_AT}), ${since}::timestamptz)::text as w
    from products
    where account_id = ${snapshot.accountId} and ${CHANGED_AT} > ${since}::timestamptz`);
  const until = bound?.w ?? since;
  if (until === since) return since;
  const rows = await database.rows<ChangedProduct>(sql`
    select id::float8 as id, name, price, category, brand, in_stock, (deleted_at is not null) as deleted
    from products
    where account_id = ${snapshot.accountId}
      and ${CHANGED_AT} > ${since}::timestamptz and ${CHANGED_AT} <= ${until}::timestamptz`);
  const items = snapshot.items;
  let touched = false;
  for (const row of rows) {
    const i = items.indexByProductId.get(Number(row.id));
    if (i === undefined) continue;
    items.names[i] = row.name;
    items.prices[i] = Number(row.price);
    items.categories[i] = row.category;
    items.brands[i] = row.brand;
    items.inStock[i] = row.in_stock ? 1 : 0;
    items.deleted[i] = row.deleted ? 1 : 0;
    touched = true;
  }
  if (touched) bumpItemsRevision(snapshot);
  return until;
}
