/**
 * Builds a tenant snapshot from a stored model: the artifact's engine model and id maps, joined with the
 * account's current product and end-user rows. Joining at load time is what keeps a snapshot honest after
 * a restart: products deleted since training come back flagged, and end users erased since training
 * (their rows are gone) are simply not mapped.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../db/client";
import type { models } from "../db/schema";
import { readArtifact } from "../training/artifact-store";
import { loadServingModel } from "../training/engine-api";
import { decodeEnvelope } from "../training/envelope";
import type { ArtifactCache } from "./artifact-cache";
import { WATERMARK } from "./freshness";
import type { Snapshot, SnapshotItems, SnapshotUsers } from "./types";

type ModelRow = Pick<
  typeof models.$inferSelect,
  "id" | "accountId" | "version" | "algorithm" | "createdAt" | "artifactBytes"
>;

export interface BuiltSnapshot {
  readonly snapshot: Snapshot;
  /** Newest catalogue change when the snapshot was built: where the freshness refresh starts. */
  readonly productsWatermark: string;
}

/** The account's products, column by column (see `catalogueColumns`). */
interface ProductColumns {
  id: number[];
  name: string[];
  price: number[];
  category: string[];
  brand: (string | null)[];
  inStock: boolean[];
  deleted: boolean[];
}

interface EndUserColumns {
  id: number[];
  externalId: string[];
}

export async function buildSnapshot(
  database: Database,
  row: ModelRow,
  cache: ArtifactCache | undefined,
): Promise<BuiltSnapshot> {
  // The catalogue is asked for first and in one statement, so Postgres builds it while this process maps
  // the artifact and loads the model (CPU-bound, hundreds of ms for a large catalogue); they are independent
  // until joined. The watermark comes from the same scan, so it is exactly as new as the rows.
  const catalogue = catalogueColumns(database, row.accountId);
  // An unread rejection would be reported as unhandled while the model loads; it is awaited below.
  catalogue.catch(() => {});
  const envelope = await loadEnvelope(database, row, cache);
  const annFiles = await cache?.annFiles(row.accountId, row.id);
  // Postgres is given a turn to receive the catalogue query before the model load holds the thread.
  await Bun.sleep(1);
  const { model, bytes: modelBytes } = loadServingModel(envelope.engineBytes, annFiles);
  const { watermark, products, endUsers } = await catalogue;
  const items = itemTable(envelope, products);

  const users = userTable(envelope.endUserIds, endUsers);

  const stringBytes = (values: readonly (string | null)[]) =>
    values.reduce((sum, v) => sum + 48 + 2 * (v?.length ?? 0), 0);
  const itemBytes =
    items.count * (8 + 8 + 4 + 4 + 1 + 1) * 2 +
    stringBytes(items.externalIds) * 2 +
    stringBytes(items.names) +
    stringBytes(items.categories) +
    stringBytes(items.brands);
  const userBytes = users.table.indexByExternalId.size * 96;
  const snapshot: Snapshot = {
    accountId: row.accountId,
    modelId: row.id,
    version: row.version,
    algorithm: row.algorithm,
    trainedAt: row.createdAt,
    loadedAt: new Date(),
    model,
    items,
    users: users.table,
    bytes: modelBytes + itemBytes + userBytes,
  };
  return { snapshot, productsWatermark: watermark };
}

/** The artifact from the local disk copy when it is intact, else from the database (then copied to disk). */
async function loadEnvelope(database: Database, row: ModelRow, cache: ArtifactCache | undefined) {
  const cached = await cache?.read(row.accountId, row.id, row.artifactBytes);
  if (cached !== undefined) {
    try {
      return decodeEnvelope(cached);
    } catch {
      // A damaged copy: read the database's.
    }
  }
  const bytes = await readArtifact(database, { accountId: row.accountId, modelId: row.id });
  if (bytes === undefined) throw new Error(`model ${row.id} has no stored artifact`);
  const envelope = decodeEnvelope(bytes);
  void cache?.write(row.accountId, row.id, bytes);
  return envelope;
}

/**
 * The account's products and end users as JSON columns in one result row: parsed natively, a single value
 * is several times cheaper for the driver than a row object per product. Each table's aggregates are fed by
 * one scan, so position r of every column is the same row.
 */
async function catalogueColumns(
  database: Database,
  accountId: number,
): Promise<{ watermark: string; products: ProductColumns; endUsers: EndUserColumns }> {
  const [result] = await database.rows<{ watermark: string; products: unknown; end_users: unknown }>(sql`
    select p.watermark, p.columns as products, u.columns as end_users
    from (select ${WATERMARK} as watermark, json_build_object(
            'id', coalesce(json_agg(id), '[]'), 'name', coalesce(json_agg(name), '[]'),
            'price', coalesce(json_agg(price), '[]'), 'category', coalesce(json_agg(category), '[]'),
            'brand', coalesce(json_agg(brand), '[]'), 'inStock', coalesce(json_agg(in_stock), '[]'),
            'deleted', coalesce(json_agg(deleted_at is not null), '[]')) as columns
          from products where account_id = ${accountId}) p,
         (select json_build_object(
            'id', coalesce(json_agg(id), '[]'), 'externalId', coalesce(json_agg(external_id), '[]')) as columns
          from end_users where account_id = ${accountId}) u`);
  const parsed = (value: unknown) => (typeof value === "string" ? JSON.parse(value) : value);
  return {
    watermark: result?.watermark ?? "-infinity",
    products: parsed(result?.products) as ProductColumns,
    endUsers: parsed(result?.end_users) as EndUserColumns,
  };
}

function itemTable(envelope: ReturnType<typeof decodeEnvelope>, products: ProductColumns): SnapshotItems {
  const n = envelope.productIds.length;
  const rowOf = new Map<number, number>();
  for (let r = 0; r < products.id.length; r++) rowOf.set(Number(products.id[r]), r);
  const names: string[] = new Array(n);
  const categories: string[] = new Array(n);
  const brands: (string | null)[] = new Array(n);
  const prices = new Float64Array(n);
  const inStock = new Uint8Array(n);
  const deleted = new Uint8Array(n);
  const indexByExternalId = new Map<string, number>();
  const indexByProductId = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const productId = envelope.productIds[i]!;
    const externalId = envelope.externalIds[i] ?? "";
    indexByExternalId.set(externalId, i);
    indexByProductId.set(productId, i);
    const r = rowOf.get(productId);
    if (r === undefined) {
      // Hard-deleted since training (e.g. a sandbox reset): keep the slot, never serve it.
      names[i] = "";
      categories[i] = "";
      brands[i] = null;
      prices[i] = Number.NaN;
      deleted[i] = 1;
      continue;
    }
    names[i] = products.name[r]!;
    categories[i] = products.category[r]!;
    brands[i] = products.brand[r] ?? null;
    prices[i] = Number(products.price[r]);
    inStock[i] = products.inStock[r] ? 1 : 0;
    deleted[i] = products.deleted[r] ? 1 : 0;
  }
  return {
    count: n,
    productIds: envelope.productIds,
    externalIds: envelope.externalIds,
    indexByExternalId,
    indexByProductId,
    names,
    prices,
    categories,
    brands,
    inStock,
    deleted,
    meanRating: envelope.meanRating,
    ratingCount: envelope.ratingCount,
  };
}

function userTable(endUserIds: Float64Array, endUsers: EndUserColumns): { table: SnapshotUsers } {
  const externalById = new Map<number, string>();
  for (let r = 0; r < endUsers.id.length; r++)
    externalById.set(Number(endUsers.id[r]), endUsers.externalId[r]!);
  const indexByExternalId = new Map<string, number>();
  for (let u = 0; u < endUserIds.length; u++) {
    const external = externalById.get(endUserIds[u]!);
    if (external === undefined) continue;
    indexByExternalId.set(external, u);
  }
  return { table: { count: endUserIds.length, indexByExternalId } };
}
