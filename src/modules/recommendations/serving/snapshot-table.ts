/**
 * The recommender's ItemTable over a tenant snapshot: zero-copy over the snapshot's arrays (whose freshness
 * fields the registry updates in place, moving the items revision), attributes loaded on first use.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { itemsRevision } from "../../../snapshots/revision";
import type { Snapshot } from "../../../snapshots/types";
import type { ItemTable } from "./item-table";

export function snapshotTable(snapshot: Snapshot, database: Database): ItemTable {
  const items = snapshot.items;
  let attributes: Promise<(Record<string, unknown> | undefined)[]> | undefined;
  return {
    size: items.count,
    externalIds: items.externalIds,
    names: items.names,
    prices: items.prices,
    categories: items.categories,
    brands: items.brands,
    inStock: items.inStock,
    deleted: items.deleted,
    rating: items.meanRating,
    // Only attribute filters read these, so they are loaded on first use, once per snapshot.
    attributes: () => {
      attributes ??= loadAttributes(database, snapshot);
      attributes.catch(() => {
        attributes = undefined;
      });
      return attributes;
    },
    popularity: snapshot.model.popularity.score,
    indexOf: items.indexByExternalId,
    revision: () => itemsRevision(snapshot),
    derived: snapshot.derived,
  };
}

async function loadAttributes(
  database: Database,
  snapshot: Snapshot,
): Promise<(Record<string, unknown> | undefined)[]> {
  const rows = await database.rows<{ id: number | string; attributes: unknown }>(sql`
    select id, attributes from products
    where account_id = ${snapshot.accountId} and attributes <> '{}'::jsonb`);
  const out: (Record<string, unknown> | undefined)[] = new Array(snapshot.items.count);
  for (const row of rows) {
    const index = snapshot.items.indexByProductId.get(Number(row.id));
    if (index === undefined) continue;
    const value =
      typeof row.attributes === "string" ? (JSON.parse(row.attributes) as unknown) : row.attributes;
    if (value !== null && typeof value === "object" && !Array.isArray(value))
      out[index] = value as Record<string, unknown>;
  }
  return out;
}
