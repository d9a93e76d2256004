/**
 * Loads one account's training data into typed arrays: products that are not deleted become dense items
 * (in products.id order), end users with at least one usable interaction become dense users (in order of
 * first appearance), and interactions are read in id-range pages straight into preallocated columns.
 * Reading pages of plain rows keeps memory flat and works the same on PGlite and postgres.js; the id bounds
 * taken first make the load a consistent cut even while new events keep arriving.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { IdRangePages } from "../db/id-ranges";
import { EventType } from "../engine";
import type { EngineInteractions, EngineItemMeta } from "./engine-api";

export interface TrainingData {
  readonly events: EngineInteractions;
  readonly items: EngineItemMeta[];
  /** products.id per dense item. */
  readonly productIds: Float64Array;
  readonly externalIds: string[];
  /** end_users.id per dense user. */
  readonly endUserIds: Float64Array;
  readonly meanRating: Float32Array;
  readonly ratingCount: Int32Array;
}

/**
 * Rows per page. On PGlite every page's rows are copied from the database's thread to the one that answers
 * requests and turned into values there, so its pages stay small: 2,000 products (one row of JSON columns,
 * ~10 ms) and 5,000 interactions. On Postgres the data is read by the training worker on a connection of its own,
 * off that thread, in larger pages.
 */
const rowsPerPage = (database: Database, table: "products" | "interactions"): number =>
  database.kind === "pglite" ? (table === "products" ? 2_000 : 5_000) : table === "products" ? 5_000 : 20_000;

/** Columns preallocated before the first page; they grow by doubling (ids are shared by all accounts, so
 * the id span says little about one account's row count). */
const INITIAL_CAPACITY = 1 << 16;

/**
 * A turn of the event loop between two pages, so that requests are answered between them (when PGlite ran on
 * the thread that answers requests, page after page held /health for 2 s during a 30k-item load), and on
 * Postgres a prefetched page may be waiting already.
 */
const betweenPages = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** interactions.interaction_type → the engine's numeric event type; unknown types map to -1 (skipped). */
const EVENT_TYPE_SQL = sql.raw(
  `(case interaction_type ${Object.entries(EventType)
    .map(([name, code]) => `when '${name}' then ${code}`)
    .join(" ")} else -1 end)`,
);

/** One page of products, column by column. */
interface ProductColumns {
  id: number[];
  externalId: string[];
  name: string[];
  description: (string | null)[];
  price: number[];
  category: string[];
  brand: (string | null)[];
  attributes: (Record<string, unknown> | null)[];
}

/** Progress is reported as the share of the id span read, in thousandths. */
const PROGRESS_SCALE = 1_000;

/** One page of interactions, column by column (end user id, product id, event type, value, time in ms). */
interface EventColumns {
  u: number[];
  p: number[];
  t: number[];
  v: (number | string)[];
  ts: number[];
}

interface EventPage {
  columns: EventColumns | string;
}

export async function loadTrainingData(
  database: Database,
  accountId: number,
  onPage?: (loaded: number, total: number) => void,
): Promise<TrainingData> {
  const { items, productIds, externalIds, indexByProductId } = await loadItems(database, accountId);

  let capacity = INITIAL_CAPACITY;
  let user = new Int32Array(capacity);
  let item = new Int32Array(capacity);
  let type = new Uint8Array(capacity);
  let value = new Float32Array(capacity);
  let ts = new Float64Array(capacity);
  const userIndex = new Map<number, number>();
  const endUserIds: number[] = [];
  const ratingSum = new Float64Array(productIds.length);
  const ratingCount = new Int32Array(productIds.length);
  let n = 0;
  // No ORDER BY inside a page: the engine does not depend on event order. date_part (float8) rather than
  // extract (numeric since PG 14) keeps the timestamp conversion cheap.
  const pages = await IdRangePages.of(
    database,
    "interactions",
    accountId,
    rowsPerPage(database, "interactions"),
  );
  const nextPage = (): Promise<EventPage[]> | undefined => {
    const range = pages.next();
    if (range === undefined) return undefined;
    // One row of JSON columns, like the products: 5,000 interactions cost ~10 ms this way on PGlite, ~45 ms
    // as a row object each.
    return database.rows<EventPage>(sql`
      select json_build_object(
          'u', coalesce(json_agg(end_user_id::float8), '[]'), 'p', coalesce(json_agg(product_id::float8), '[]'),
          't', coalesce(json_agg(${EVENT_TYPE_SQL}), '[]'), 'v', coalesce(json_agg(value), '[]'),
          'ts', coalesce(json_agg(date_part('epoch', occurred_at) * 1000), '[]')
        ) as columns
      from interactions
      where account_id = ${accountId} and id >= ${range.from} and id < ${range.to}`);
  };
  // On Postgres the database works on the next page while this one is copied into the columns; on PGlite
  // the next statement would run on this very thread, so it waits for its turn.
  const prefetch = database.kind !== "pglite";
  let pending = nextPage();
  while (pending !== undefined) {
    const [result] = await pending;
    const raw = result?.columns;
    const page: EventColumns = typeof raw === "string" ? (JSON.parse(raw) as EventColumns) : raw!;
    const rows = page.u.length;
    pages.took(rows);
    pending = prefetch ? nextPage() : undefined;
    for (let r = 0; r < rows; r++) {
      const dense = indexByProductId.get(Number(page.p[r]));
      const t = Number(page.t[r]);
      if (dense === undefined || t < 0) continue; // deleted product or a type the engine does not know
      if (n === capacity) {
        capacity *= 2;
        user = grow(user, capacity);
        item = grow(item, capacity);
        type = grow(type, capacity);
        value = grow(value, capacity);
        ts = grow(ts, capacity);
      }
      const endUserId = Number(page.u[r]);
      let u = userIndex.get(endUserId);
      if (u === undefined) {
        u = endUserIds.length;
        userIndex.set(endUserId, u);
        endUserIds.push(endUserId);
      }
      const v = Number(page.v[r]);
      user[n] = u;
      item[n] = dense;
      type[n] = t;
      value[n] = v;
      ts[n] = Number(page.ts[r]);
      if (t === EventType.RATING) {
        ratingSum[dense]! += v;
        ratingCount[dense]!++;
      }
      n++;
    }
    onPage?.(Math.round(PROGRESS_SCALE * pages.done), PROGRESS_SCALE);
    await betweenPages();
    if (!prefetch) pending = nextPage();
  }

  const meanRating = new Float32Array(productIds.length);
  for (let i = 0; i < meanRating.length; i++) {
    meanRating[i] = ratingCount[i]! > 0 ? ratingSum[i]! / ratingCount[i]! : Number.NaN;
  }
  return {
    events: {
      user: user.slice(0, n),
      item: item.slice(0, n),
      type: type.slice(0, n),
      value: value.slice(0, n),
      ts: ts.slice(0, n),
      nUsers: endUserIds.length,
      nItems: productIds.length,
    },
    items,
    productIds,
    externalIds,
    endUserIds: Float64Array.from(endUserIds),
    meanRating,
    ratingCount,
  };
}

async function loadItems(database: Database, accountId: number) {
  const items: EngineItemMeta[] = [];
  const ids: number[] = [];
  const externalIds: string[] = [];
  const indexByProductId = new Map<number, number>();
  const pages = await IdRangePages.of(database, "products", accountId, rowsPerPage(database, "products"));
  for (let range = pages.next(); range !== undefined; range = pages.next()) {
    // One row of JSON columns per page: parsed natively, a single value is several times cheaper for the
    // driver than a row object per product.
    const [result] = await database.rows<{ columns: ProductColumns | string | null; n: number }>(sql`
      select json_build_object(
          'id', coalesce(json_agg(id::float8), '[]'), 'externalId', coalesce(json_agg(external_id), '[]'),
          'name', coalesce(json_agg(name), '[]'), 'description', coalesce(json_agg(description), '[]'),
          'price', coalesce(json_agg(price), '[]'), 'category', coalesce(json_agg(category), '[]'),
          'brand', coalesce(json_agg(brand), '[]'), 'attributes', coalesce(json_agg(attributes), '[]')
        ) as columns, count(*)::int as n
      from (select id, external_id, name, description, price, category, brand, attributes from products
            where account_id = ${accountId} and deleted_at is null and id >= ${range.from} and id < ${range.to}
            order by id) p`);
    const raw = result?.columns;
    const page: ProductColumns | null =
      typeof raw === "string" ? (JSON.parse(raw) as ProductColumns) : (raw ?? null);
    const rows = Number(result?.n ?? 0);
    pages.took(rows);
    for (let r = 0; r < rows && page !== null; r++) {
      const id = Number(page.id[r]);
      indexByProductId.set(id, ids.length);
      ids.push(id);
      externalIds.push(page.externalId[r]!);
      items.push({
        name: page.name[r]!,
        description: page.description[r] ?? undefined,
        categoryPath: page.category[r]!,
        brand: page.brand[r] ?? undefined,
        price: Number(page.price[r]),
        attributes: primitiveAttributes(page.attributes[r] ?? null),
      });
    }
    await betweenPages();
  }
  return { items, productIds: Float64Array.from(ids), externalIds, indexByProductId };
}

/** Content vectors hash scalar attributes only; nested values carry no reliable text to hash. */
function primitiveAttributes(
  raw: ProductColumns["attributes"][number] | string,
): Record<string, string | number | boolean> {
  const source = typeof raw === "string" ? (JSON.parse(raw) as unknown) : raw;
  const out: Record<string, string | number | boolean> = {};
  if (source === null || typeof source !== "object" || Array.isArray(source)) return out;
  for (const [key, v] of Object.entries(source)) {
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") out[key] = v;
  }
  return out;
}

function grow<T extends Int32Array | Uint8Array | Float32Array | Float64Array>(
  array: T,
  capacity: number,
): T {
  const next = new (array.constructor as new (length: number) => T)(capacity);
  next.set(array);
  return next;
}
