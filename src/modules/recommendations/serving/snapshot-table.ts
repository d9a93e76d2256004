/**
 * The recommender's ItemTable over a tenant snapshot: zero-copy over the snapshot's arrays (whose freshness
 * fields the registry updates in place, moving the items revision), attributes loaded on first use and kept
 * in step with the catalogue (see `SnapshotAttributes`).
 */
import { sql } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { CHANGED_AT, productsWatermark } from "../../../snapshots/freshness";
import { itemsRevision } from "../../../snapshots/revision";
import type { Snapshot } from "../../../snapshots/types";
import type { ItemTable } from "./item-table";

type AttributeColumn = (Record<string, unknown> | undefined)[];

export function snapshotTable(snapshot: Snapshot, database: Database): ItemTable {
  const items = snapshot.items;
  // Only attribute filters read these, so they are loaded on first use.
  const attributes = new SnapshotAttributes(database, snapshot);
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
    attributes: () => attributes.current(),
    popularity: snapshot.model.popularity.score,
    indexOf: items.indexByExternalId,
    revision: () => itemsRevision(snapshot),
    derived: snapshot.derived,
  };
}

interface Read {
  /** The catalogue watermark taken before the read: products changed after it are read again next time. */
  watermark: string;
  column: AttributeColumn;
}

/**
 * The products' attributes as the catalogue holds them now. The freshness refresh writes a changed product's
 * other fields into the snapshot's arrays and moves the items revision, but it does not carry attributes, and
 * they used to be read once per snapshot: a product whose attributes were edited kept matching (or failing)
 * attribute filters by its old ones until the next published model, while a restarted process filtered by the
 * new ones. So the column is read again whenever the revision has moved since: only the products changed
 * since the previous read's watermark, into a new array (filters.ts keeps its lower-cased copy per array, and
 * the eligibility masks are kept per revision, so both follow).
 */
class SnapshotAttributes {
  private kept: { revision: number; read: Promise<Read> } | undefined;

  constructor(
    private readonly database: Database,
    private readonly snapshot: Snapshot,
  ) {}

  /**
   * The column for the revision current when it resolves: a refresh landing while it was read has it read
   * again, so a filter compiled from it never gets cached under a revision it does not describe.
   */
  async current(): Promise<AttributeColumn> {
    for (;;) {
      const revision = itemsRevision(this.snapshot);
      const { column } = await this.at(revision);
      if (itemsRevision(this.snapshot) === revision) return column;
    }
  }

  private at(revision: number): Promise<Read> {
    const kept = this.kept;
    if (kept !== undefined && kept.revision === revision) return kept.read;
    const read =
      kept === undefined
        ? this.readAll()
        : kept.read.then(
            (previous) => this.readChanged(previous),
            () => this.readAll(),
          );
    const entry = { revision, read };
    this.kept = entry;
    read.catch(() => {
      // Read again (in full) by the next request rather than answering this failure forever.
      if (this.kept === entry) this.kept = undefined;
    });
    return read;
  }

  private async readAll(): Promise<Read> {
    const watermark = await productsWatermark(this.database, this.snapshot.accountId);
    const rows = await this.database.rows<{ id: number | string; attributes: unknown }>(sql`
      select id, attributes from products
      where account_id = ${this.snapshot.accountId} and attributes <> '{}'::jsonb`);
    const column: AttributeColumn = new Array(this.snapshot.items.count);
    for (const row of rows) this.place(column, row);
    return { watermark, column };
  }

  private async readChanged(previous: Read): Promise<Read> {
    const watermark = await productsWatermark(this.database, this.snapshot.accountId);
    if (watermark === previous.watermark) return previous;
    const rows = await this.database.rows<{ id: number | string; attributes: unknown }>(sql`
      select id, attributes from products
      where account_id = ${this.snapshot.accountId} and ${CHANGED_AT} > ${previous.watermark}::timestamptz`);
    const column = previous.column.slice();
    for (const row of rows) this.place(column, row);
    return { watermark, column };
  }

  /** The row's attributes into its item's slot; none (an empty object) clears the slot. */
  private place(column: AttributeColumn, row: { id: number | string; attributes: unknown }): void {
    const index = this.snapshot.items.indexByProductId.get(Number(row.id));
    if (index === undefined) return;
    const value =
      typeof row.attributes === "string" ? (JSON.parse(row.attributes) as unknown) : row.attributes;
    column[index] =
      value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length > 0
        ? (value as Record<string, unknown>)
        : undefined;
  }
}
