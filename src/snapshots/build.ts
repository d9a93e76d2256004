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
import { productsWatermark } from "./freshness";
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

interface ProductRow {
  id: number;
  external_id: string;
  name: string;
  price: number;
  category: string;
  brand: string | null;
  in_stock: boolean;
  deleted: boolean;
}

export async function buildSnapshot(
  database: Database,
  row: ModelRow,
  cache: ArtifactCache | undefined,
): Promise<BuiltSnapshot> {
  // The artifact and the catalogue rows are read at the same time: they are independent until joined.
  const rows = async () => {
    // Taken before the rows: a change racing with the load is re-applied by the first refresh, never lost.
    const watermark = await productsWatermark(database, row.accountId);
    const [products, endUsers] = await Promise.all([
      database.rows<ProductRow>(sql`
        select id::float8 as id, external_id, name, price, category, brand, in_stock,
               (deleted_at is not null) as deleted
        from products where account_id = ${row.accountId}`),
      database.rows<{ id: number; external_id: string }>(sql`
        select id::float8 as id, external_id from end_users where account_id = ${row.accountId}`),
    ]);
    return { watermark, products, endUsers };
  };
  const [envelope, { watermark, products, endUsers }] = await Promise.all([
    loadEnvelope(database, row, cache),
    rows(),
  ]);
  const { model, bytes: modelBytes } = loadServingModel(envelope.engineBytes);
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

function itemTable(envelope: ReturnType<typeof decodeEnvelope>, products: ProductRow[]): SnapshotItems {
  const n = envelope.productIds.length;
  const byId = new Map<number, ProductRow>();
  for (const p of products) byId.set(Number(p.id), p);
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
    const p = byId.get(productId);
    if (p === undefined) {
      // Hard-deleted since training (e.g. a sandbox reset): keep the slot, never serve it.
      names[i] = "";
      categories[i] = "";
      brands[i] = null;
      prices[i] = Number.NaN;
      deleted[i] = 1;
      continue;
    }
    names[i] = p.name;
    categories[i] = p.category;
    brands[i] = p.brand;
    prices[i] = Number(p.price);
    inStock[i] = p.in_stock ? 1 : 0;
    deleted[i] = p.deleted ? 1 : 0;
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

function userTable(
  endUserIds: Float64Array,
  rows: { id: number; external_id: string }[],
): { table: SnapshotUsers } {
  const externalById = new Map<number, string>();
  for (const r of rows) externalById.set(Number(r.id), r.external_id);
  const indexByExternalId = new Map<string, number>();
  for (let u = 0; u < endUserIds.length; u++) {
    const external = externalById.get(endUserIds[u]!);
    if (external === undefined) continue;
    indexByExternalId.set(external, u);
  }
  return { table: { count: endUserIds.length, indexByExternalId } };
}
