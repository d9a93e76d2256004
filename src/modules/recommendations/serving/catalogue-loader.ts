/**
 * The item table for accounts without a published model, read from the product rows with popularity and
 * mean rating aggregated from interactions. Cached per account; a product change in this process drops the
 * entry at once, and a short TTL bounds staleness for changes made through other processes.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { buildItemTable, type ItemRow, type ItemTable } from "./item-table";
import { PerAccountLoads } from "./per-account-loads";

const TTL_MS = 5_000;
const MAX_ACCOUNTS = 256;

/**
 * Popularity of one interaction row `i`: weight by type (a purchase says more than a view, a dislike counts
 * against) times a decay that halves every 7 days ("popular this week"), plus 1% of the undecayed weight so
 * all-time volume still orders products whose events are all old.
 */
export const POPULARITY_SQL = sql.raw(`((case i.interaction_type
  when 'PURCHASE' then 5 when 'CART' then 3 when 'LIKE' then 3 when 'CLICK' then 1.5 when 'VIEW' then 1
  when 'RATING' then least(i.value, 5) / 5.0 when 'SEARCH' then 0.5 when 'DISLIKE' then -5 else 0 end)::float8
  * (0.01 + exp(greatest(-50.0, -ln(2.0) * extract(epoch from (now() - i.occurred_at))::float8 / 604800.0))))`);

export class CatalogueCache {
  private readonly cache = new PerAccountLoads<ItemTable>(TTL_MS, MAX_ACCOUNTS);

  constructor(private readonly database: Database) {}

  get(accountId: number): Promise<ItemTable> {
    return this.cache.get(accountId, () => loadCatalogue(this.database, accountId));
  }

  invalidate(accountId: number): void {
    this.cache.invalidate(accountId);
  }

  clear(): void {
    this.cache.clear();
  }
}

interface Row {
  external_id: string;
  name: string;
  price: number | string;
  category: string;
  brand: string | null;
  in_stock: boolean;
  attributes: unknown;
  popularity: number | string | null;
  rating: number | string | null;
}

/** Live products in catalogue order (creation order), with decayed popularity and mean rating. */
export async function loadCatalogue(database: Database, accountId: number): Promise<ItemTable> {
  const rows = await database.rows<Row>(sql`
    with stats as (
      select i.product_id, sum(${POPULARITY_SQL}) as popularity,
        avg(i.value) filter (where i.interaction_type = 'RATING') as rating
      from interactions i
      where i.account_id = ${accountId}
      group by i.product_id
    )
    select p.external_id, p.name, p.price, p.category, p.brand, p.in_stock, p.attributes,
           s.popularity, s.rating
    from products p left join stats s on s.product_id = p.id
    where p.account_id = ${accountId} and p.deleted_at is null
    order by p.id`);
  return buildItemTable(rows.map(toItemRow));
}

function toItemRow(row: Row): ItemRow {
  const attributes =
    typeof row.attributes === "string" ? (JSON.parse(row.attributes) as unknown) : row.attributes;
  const popularity = row.popularity === null ? 0 : Number(row.popularity);
  return {
    externalId: row.external_id,
    name: row.name,
    price: Number(row.price),
    category: row.category,
    brand: row.brand,
    inStock: row.in_stock,
    attributes:
      attributes !== null && typeof attributes === "object" && !Array.isArray(attributes)
        ? (attributes as Record<string, unknown>)
        : null,
    // Net-negative (mostly disliked) products rank below never-seen ones, never above.
    popularity: Math.max(popularity, -1),
    rating: row.rating === null ? null : Number(row.rating),
  };
}
