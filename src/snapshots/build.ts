/**
 * Builds a tenant snapshot from a stored model: the artifact's engine model and id maps, joined with the
 * account's current product and end-user rows. Joining at load time is what keeps a snapshot honest after
 * a restart: products deleted since training come back flagged, and end users erased since training
 * (their rows are gone) are simply not mapped.
 */
import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { IdRangePages, type PagedTable } from "../db/id-ranges";
import type { models } from "../db/schema";
import { readArtifact } from "../training/artifact-store";
import type { ArtifactCache } from "./artifact-cache";
import { type DecodedArtifact, decodeArtifact } from "./decode-in-worker";
import { DerivedState } from "./derived-state";
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
  // The catalogue is read while a worker decodes the artifact; they are independent until joined.
  const catalogue = catalogueColumns(database, row.accountId);
  // An unread rejection would be reported as unhandled while the model loads; it is awaited below.
  catalogue.catch(() => {});
  const decoded = await decode(database, row, cache);
  const { watermark, products, endUsers } = await catalogue;
  const items = await itemTable(decoded, products);
  const users = await userTable(decoded.endUserIds, endUsers);

  const itemBytes =
    items.count * (8 + 8 + 4 + 4 + 1 + 1) * 2 +
    (await stringBytes(items.externalIds)) * 2 +
    (await stringBytes(items.names)) +
    (await stringBytes(items.categories)) +
    (await stringBytes(items.brands));
  const userBytes = users.table.indexByExternalId.size * 96;
  const baseBytes = decoded.modelBytes + itemBytes + userBytes;
  const derived = new DerivedState();
  const snapshot: Snapshot = {
    accountId: row.accountId,
    modelId: row.id,
    version: row.version,
    algorithm: row.algorithm,
    trainedAt: row.createdAt,
    loadedAt: new Date(),
    model: decoded.model,
    items,
    users: users.table,
    derived,
    bytes: () => baseBytes + derived.bytes(),
  };
  return { snapshot, productsWatermark: watermark };
}

/**
 * The artifact decoded off this thread: from its file when there is one of the expected size (the embedded
 * store keeps artifacts only as files; on Postgres it is a local copy), else read from the database (then
 * kept as a file for the next load).
 */
async function decode(database: Database, row: ModelRow, cache: ArtifactCache | undefined) {
  const annFiles = (await cache?.annFiles(row.accountId, row.id)) ?? null;
  const path = await cache?.file(row.accountId, row.id, row.artifactBytes);
  if (path !== undefined) {
    try {
      return await decodeArtifact({ path }, annFiles);
    } catch {
      // A damaged copy: read the database's.
    }
  }
  const bytes = await readArtifact(database, { accountId: row.accountId, modelId: row.id });
  if (bytes === undefined) throw new Error(`model ${row.id} has no stored artifact`);
  if (cache !== undefined) {
    await cache.write(row.accountId, row.id, bytes);
    const written = await cache.file(row.accountId, row.id, bytes.length);
    if (written !== undefined) return decodeArtifact({ path: written }, annFiles);
  }
  return decodeArtifact({ bytes }, annFiles);
}

/**
 * Catalogue rows per statement. Where the database is embedded (PGlite) each page's rows are copied to, and
 * turned into values on, the thread that answers requests: 2,000 rows as JSON columns took ~10 ms when PGlite
 * ran on that thread, 10,000 took ~70 ms.
 */
const catalogueRows = (database: Database): number => (database.kind === "pglite" ? 2_000 : 10_000);
/** Table rows built between two turns of the event loop. */
const BUILD_SLICE = 5_000;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The account's products and end users, column by column, in id-ordered pages. Each page comes as JSON
 * columns in one result row (parsed natively, a single value is several times cheaper for the driver than a
 * row object per product). The watermark is taken first, so the rows read after it are at least as new:
 * the freshness refresh may re-apply a change, never miss one.
 */
async function catalogueColumns(
  database: Database,
  accountId: number,
): Promise<{ watermark: string; products: ProductColumns; endUsers: EndUserColumns }> {
  const watermark = await productsWatermark(database, accountId);
  const products: ProductColumns = {
    id: [],
    name: [],
    price: [],
    category: [],
    brand: [],
    inStock: [],
    deleted: [],
  };
  for await (const page of columnPages<ProductColumns>(
    database,
    "products",
    accountId,
    (range) => sql`select id, name, price, category, brand, in_stock, deleted_at from products
        where account_id = ${accountId} and id >= ${range.from} and id < ${range.to} order by id`,
    sql`'id', coalesce(json_agg(id), '[]'), 'name', coalesce(json_agg(name), '[]'),
        'price', coalesce(json_agg(price), '[]'), 'category', coalesce(json_agg(category), '[]'),
        'brand', coalesce(json_agg(brand), '[]'), 'inStock', coalesce(json_agg(in_stock), '[]'),
        'deleted', coalesce(json_agg(deleted_at is not null), '[]')`,
  )) {
    for (const key of Object.keys(products) as (keyof ProductColumns)[]) {
      append(products[key] as unknown[], page[key] as unknown[]);
    }
  }
  const endUsers: EndUserColumns = { id: [], externalId: [] };
  for await (const page of columnPages<EndUserColumns>(
    database,
    "end_users",
    accountId,
    (range) => sql`select id, external_id from end_users
        where account_id = ${accountId} and id >= ${range.from} and id < ${range.to} order by id`,
    sql`'id', coalesce(json_agg(id), '[]'), 'externalId', coalesce(json_agg(external_id), '[]')`,
  )) {
    append(endUsers.id, page.id);
    append(endUsers.externalId, page.externalId);
  }
  return { watermark, products, endUsers };
}

/** Appends without spreading (a spread of a large page passes every value as an argument). */
function append<T>(into: T[], values: readonly T[]): void {
  for (let i = 0; i < values.length; i++) into.push(values[i]!);
}

/**
 * The account's rows of `table` as id-range pages (`rows`, ordered by id), each aggregated into JSON columns
 * (`columns`, json_build_object pairs). Rows added after the first page's bounds are not read: a snapshot
 * only maps the products and end users its model was trained on, which all existed then.
 */
async function* columnPages<T>(
  database: Database,
  table: PagedTable,
  accountId: number,
  rows: (range: { from: number; to: number }) => SQL,
  columns: SQL,
): AsyncGenerator<T> {
  const pages = await IdRangePages.of(database, table, accountId, catalogueRows(database));
  for (let range = pages.next(); range !== undefined; range = pages.next()) {
    const [result] = await database.rows<{ columns: unknown; n: number }>(sql`
      select json_build_object(${columns}) as columns, count(*)::int as n from (${rows(range)}) p`);
    const n = Number(result?.n ?? 0);
    pages.took(n);
    // A turn of the event loop after each page, so that consecutive pages never run back to back without a
    // request answered in between.
    await nextTurn();
    if (n === 0) continue;
    yield (typeof result?.columns === "string" ? JSON.parse(result.columns) : result?.columns) as T;
  }
}

/** Estimated resident bytes of a column of strings, counted in slices. */
async function stringBytes(values: readonly (string | null)[]): Promise<number> {
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    if (i > 0 && i % BUILD_SLICE === 0) await nextTurn();
    sum += 48 + 2 * (values[i]?.length ?? 0);
  }
  return sum;
}

async function itemTable(envelope: DecodedArtifact, products: ProductColumns): Promise<SnapshotItems> {
  const n = envelope.productIds.length;
  const rowOf = new Map<number, number>();
  for (let r = 0; r < products.id.length; r++) {
    if (r > 0 && r % BUILD_SLICE === 0) await nextTurn();
    rowOf.set(Number(products.id[r]), r);
  }
  const names: string[] = new Array(n);
  const categories: string[] = new Array(n);
  const brands: (string | null)[] = new Array(n);
  const prices = new Float64Array(n);
  const inStock = new Uint8Array(n);
  const deleted = new Uint8Array(n);
  const indexByExternalId = new Map<string, number>();
  const indexByProductId = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    if (i > 0 && i % BUILD_SLICE === 0) await nextTurn();
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

async function userTable(
  endUserIds: Float64Array,
  endUsers: EndUserColumns,
): Promise<{ table: SnapshotUsers }> {
  const externalById = new Map<number, string>();
  for (let r = 0; r < endUsers.id.length; r++) {
    if (r > 0 && r % BUILD_SLICE === 0) await nextTurn();
    externalById.set(Number(endUsers.id[r]), endUsers.externalId[r]!);
  }
  const indexByExternalId = new Map<string, number>();
  for (let u = 0; u < endUserIds.length; u++) {
    if (u > 0 && u % BUILD_SLICE === 0) await nextTurn();
    const external = externalById.get(endUserIds[u]!);
    if (external === undefined) continue;
    indexByExternalId.set(external, u);
  }
  return { table: { count: endUserIds.length, indexByExternalId } };
}
