/**
 * Loads one account's training data into typed arrays: products that are not deleted become dense items
 * (in products.id order), end users with at least one usable interaction become dense users (in order of
 * first appearance), and interactions are read in id-range pages straight into preallocated columns.
 * Reading pages of plain rows keeps memory flat and works the same on PGlite and postgres.js; the id bounds
 * taken first make the load a consistent cut even while new events keep arriving.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { EventType } from "../engine";
import { PageBudget, type PageMark } from "../snapshots/page-budget";
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
 * Rows per page. On PGlite every statement runs on the thread that answers requests, and its page's rows
 * are turned into objects there too, so pages stay small (1,000 product rows, 5,000 interaction rows).
 * Pages budgeted to ~10 ms of CPU each were tried: with PGlite's cost per statement the thread was busy for
 * longer in all (p50 of /health 8 ms against 0.9 ms) and the worst request was not shorter. Product rows
 * cost far more than interaction rows. On Postgres the data is read by the training worker on a connection
 * of its own, off that thread, in large pages.
 */
const pagesOf = (database: Database, table: "products" | "interactions"): PageBudget =>
  database.kind === "pglite"
    ? table === "products"
      ? new PageBudget({ initial: 1_000, min: 1_000, max: 1_000, budgetMs: 10 })
      : new PageBudget({ initial: 5_000, min: 5_000, max: 5_000, budgetMs: 10 })
    : table === "products"
      ? new PageBudget({ initial: 5_000, min: 5_000, max: 5_000, budgetMs: 10 })
      : new PageBudget({ initial: 20_000, min: 20_000, max: 20_000, budgetMs: 10 });

/**
 * A turn of the event loop between two pages: PGlite's statements resolve as promise jobs, so page after
 * page would otherwise run without a single request being answered in between (measured: a 30k-item load
 * held /health for 2 s), and on Postgres a prefetched page may be waiting already.
 */
const betweenPages = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** interactions.interaction_type → the engine's numeric event type; unknown types map to -1 (skipped). */
const EVENT_TYPE_SQL = sql.raw(
  `(case interaction_type ${Object.entries(EventType)
    .map(([name, code]) => `when '${name}' then ${code}`)
    .join(" ")} else -1 end)`,
);

interface ProductRow {
  product_id: number;
  external_id: string;
  name: string;
  description: string | null;
  price: number;
  category: string;
  brand: string | null;
  attributes: Record<string, unknown> | string | null;
}

interface EventRow {
  u: number;
  p: number;
  t: number;
  v: number;
  ts: number;
}

export async function loadTrainingData(
  database: Database,
  accountId: number,
  onPage?: (loaded: number, total: number) => void,
): Promise<TrainingData> {
  const { items, productIds, externalIds, indexByProductId } = await loadItems(database, accountId);

  const [bounds] = await database.rows<{ n: number; lo: number | null; hi: number | null }>(sql`
    select count(*)::float8 as n, min(id)::float8 as lo, max(id)::float8 as hi
    from interactions where account_id = ${accountId}`);
  const expected = Number(bounds?.n ?? 0);
  const lo = Number(bounds?.lo ?? 1);
  const hi = Number(bounds?.hi ?? 0);

  let capacity = Math.max(16, expected);
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
  let seen = 0;
  // Pages are id ranges, not LIMIT/OFFSET or "id > cursor LIMIT k": each is a bounded index range scan,
  // whatever the planner's statistics say (right after a bulk load they say nothing). The span adapts to
  // the account's id density so a page holds about pageRows rows. No ORDER BY inside a page: sorting
  // spills to disk at default work_mem and the engine does not depend on event order. date_part (float8)
  // rather than extract (numeric since PG 14) keeps the timestamp conversion cheap.
  const pages = pagesOf(database, "interactions");
  let span = expected > 0 ? Math.max(1, Math.ceil(((hi - lo + 1) * pages.rows) / expected)) : 1;
  let from = lo;
  let requestedAt: PageMark | undefined;
  const nextPage = (): Promise<EventRow[]> | undefined => {
    if (from > hi) return undefined;
    requestedAt = pages.start();
    const to = Math.min(hi + 1, from + span);
    const page = database.rows<EventRow>(sql`
      select end_user_id::float8 as u, product_id::float8 as p, ${EVENT_TYPE_SQL} as t, value as v,
             date_part('epoch', occurred_at) * 1000 as ts
      from interactions
      where account_id = ${accountId} and id >= ${from} and id < ${to}`);
    from = to;
    return page;
  };
  // On Postgres the database works on the next page while this one is copied into the columns; on PGlite
  // the next statement would run on this very thread, so it waits for its turn.
  const prefetch = database.kind !== "pglite";
  let pending = nextPage();
  while (pending !== undefined) {
    const rows = await pending;
    const startedAt = requestedAt!;
    const pageRows = pages.rows;
    if (rows.length > 2 * pageRows) span = Math.max(1, Math.floor(span / 2));
    else if (rows.length < pageRows / 2) span *= 2;
    pending = prefetch ? nextPage() : undefined;
    for (const row of rows) {
      const dense = indexByProductId.get(Number(row.p));
      const t = Number(row.t);
      if (dense === undefined || t < 0) continue; // deleted product or a type the engine does not know
      if (n === capacity) {
        capacity *= 2;
        user = grow(user, capacity);
        item = grow(item, capacity);
        type = grow(type, capacity);
        value = grow(value, capacity);
        ts = grow(ts, capacity);
      }
      const endUserId = Number(row.u);
      let u = userIndex.get(endUserId);
      if (u === undefined) {
        u = endUserIds.length;
        userIndex.set(endUserId, u);
        endUserIds.push(endUserId);
      }
      const v = Number(row.v);
      user[n] = u;
      item[n] = dense;
      type[n] = t;
      value[n] = v;
      ts[n] = Number(row.ts);
      if (t === EventType.RATING) {
        ratingSum[dense]! += v;
        ratingCount[dense]!++;
      }
      n++;
    }
    seen += rows.length;
    onPage?.(seen, expected);
    pages.took(startedAt, rows.length);
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
  const pages = pagesOf(database, "products");
  const items: EngineItemMeta[] = [];
  const ids: number[] = [];
  const externalIds: string[] = [];
  const indexByProductId = new Map<number, number>();
  let cursor = 0;
  for (;;) {
    const pageRows = pages.rows;
    const startedAt = pages.start();
    const rows = await database.rows<ProductRow>(sql`
      select id::float8 as product_id, external_id, name, description, price, category, brand, attributes
      from products
      where account_id = ${accountId} and deleted_at is null and id > ${cursor}
      order by products.id
      limit ${pageRows}`);
    for (const row of rows) {
      const id = Number(row.product_id);
      indexByProductId.set(id, ids.length);
      ids.push(id);
      externalIds.push(row.external_id);
      items.push({
        name: row.name,
        description: row.description ?? undefined,
        categoryPath: row.category,
        brand: row.brand ?? undefined,
        price: Number(row.price),
        attributes: primitiveAttributes(row.attributes),
      });
    }
    pages.took(startedAt, rows.length);
    if (rows.length < pageRows) break;
    cursor = Number(rows[rows.length - 1]!.product_id);
    await betweenPages();
  }
  return { items, productIds: Float64Array.from(ids), externalIds, indexByProductId };
}

/** Content vectors hash scalar attributes only; nested values carry no reliable text to hash. */
function primitiveAttributes(raw: ProductRow["attributes"]): Record<string, string | number | boolean> {
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
