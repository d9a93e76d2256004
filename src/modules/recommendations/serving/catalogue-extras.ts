/**
 * Live products a snapshot does not hold (created after its model was trained), for listings served from
 * the snapshot: one indexed query per account, cached briefly and dropped at once by a product change in
 * this process, so category listings need no SQL per request and still show new products.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../../../db/client";
import type { Snapshot } from "../../../snapshots/types";
import { PerAccountLoads } from "./per-account-loads";

const TTL_MS = 5_000;
const MAX_ACCOUNTS = 256;

export interface ExtraProduct {
  externalId: string;
  name: string;
  price: number;
  category: string;
}

function maxProductId(snapshot: Snapshot): number {
  return snapshot.derived.get(
    "max-product-id",
    () => {
      let max = 0;
      for (const id of snapshot.items.productIds) if (id > max) max = id;
      return max;
    },
    () => 8,
  );
}

export class CatalogueExtras {
  private readonly cache = new PerAccountLoads<ExtraProduct[]>(TTL_MS, MAX_ACCOUNTS);

  constructor(private readonly database: Database) {}

  get(snapshot: Snapshot): Promise<ExtraProduct[]> {
    return this.cache.get(snapshot.accountId, () => this.load(snapshot), snapshot);
  }

  /** The newer products when already loaded for this snapshot and fresh, without waiting; else undefined. */
  loaded(snapshot: Snapshot): ExtraProduct[] | undefined {
    return this.cache.loaded(snapshot.accountId, snapshot);
  }

  invalidate(accountId: number): void {
    this.cache.invalidate(accountId);
  }

  clear(): void {
    this.cache.clear();
  }

  private async load(snapshot: Snapshot): Promise<ExtraProduct[]> {
    // Product ids grow with creation, so everything created after training lies above the snapshot's ids.
    const rows = await this.database.rows<{
      external_id: string;
      name: string;
      price: number | string;
      category: string;
    }>(sql`
      select external_id, name, price, category from products
      where account_id = ${snapshot.accountId} and deleted_at is null and id > ${maxProductId(snapshot)}
      order by id`);
    return rows
      .filter((row) => !snapshot.items.indexByExternalId.has(row.external_id))
      .map((row) => ({
        externalId: row.external_id,
        name: row.name,
        price: Number(row.price),
        category: row.category,
      }));
  }
}
