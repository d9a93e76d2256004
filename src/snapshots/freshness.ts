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
  changed_at: Date | string;
}

/** Applies catalogue changes newer than `since`; returns the new watermark. */
export async function refreshProducts(database: Database, snapshot: Snapshot, since: Date): Promise<Date> {
  const rows = await database.rows<ChangedProduct>(sql`
    select id::float8 as id, name, price, category, brand, in_stock, (deleted_at is not null) as deleted,
           greatest(updated_at, coalesce(deleted_at, updated_at)) as changed_at
    from products
    where account_id = ${snapshot.accountId}
      and (updated_at > ${since.toISOString()} or deleted_at > ${since.toISOString()})`);
  let watermark = since.getTime();
  const items = snapshot.items;
  for (const row of rows) {
    const changedAt = new Date(row.changed_at).getTime();
    if (changedAt > watermark) watermark = changedAt;
    const i = items.indexByProductId.get(Number(row.id));
    if (i === undefined) continue;
    items.names[i] = row.name;
    items.prices[i] = Number(row.price);
    items.categories[i] = row.category;
    items.brands[i] = row.brand;
    items.inStock[i] = row.in_stock ? 1 : 0;
    items.deleted[i] = row.deleted ? 1 : 0;
  }
  if (rows.length > 0) bumpItemsRevision(snapshot);
  return new Date(watermark);
}
