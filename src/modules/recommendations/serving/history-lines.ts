/**
 * Histories read in bulk (history-preload.ts, history-batch.ts) as one text value per statement: a line
 * `end_user_id,product_id,type,value,epoch ms` per interaction, far cheaper to hand over from the embedded
 * store than a row (or JSON value) per interaction, kept as typed arrays and turned into a history only
 * when a user is asked for.
 */
import { sql } from "drizzle-orm";

/** A user's history as the history cache holds it (see `UserHistory` there; kept structural, no import). */
export interface PreloadedHistory {
  endUserId: number;
  preferredCategories: readonly string[];
  priceRangeMin: number | null;
  priceRangeMax: number | null;
  events: { externalProductId: string; type: string; value: number; occurredAt: number }[];
  interacted: string[];
}

/**
 * One interaction `i` as a line. date_part's float8 epoch costs a third of extract's numeric one (70 against
 * 130-180 ms for 38,000 interactions on PGlite); the per-user read of history-cache.ts says times the same way.
 */
export const INTERACTION_LINE = sql`concat_ws(',', i.end_user_id, i.product_id, i.interaction_type,
  coalesce(i.value::text, ''), date_part('epoch', i.occurred_at) * 1000)`;

/** One statement's interactions, users after users, each user's newest first. */
export interface Chunk {
  products: Int32Array;
  types: Uint8Array;
  values: Float64Array;
  at: Float64Array;
}

/** A user of a bulk read: the profile, and where their interactions are in the read's chunk. */
export interface StoredUser {
  endUserId: number;
  preferredCategories: readonly string[];
  priceRangeMin: number | null;
  priceRangeMax: number | null;
  chunk: Chunk;
  /** The user's interactions in the chunk: [start, end). */
  start: number;
  end: number;
}

export interface UserRow {
  id: number | string;
  external_id: string;
  preferred_categories: unknown;
  price_range_min: number | string | null;
  price_range_max: number | string | null;
}

const TYPE_NAMES: string[] = [];
const TYPE_CODES = new Map<string, number>();
function typeCode(type: string): number {
  let code = TYPE_CODES.get(type);
  if (code === undefined) {
    code = TYPE_NAMES.length;
    TYPE_NAMES.push(type);
    TYPE_CODES.set(type, code);
  }
  return code;
}

/** `end_user_id,product_id,type,value,epoch ms` lines into arrays; null: a line this format cannot carry. */
export function parseChunk(
  lines: readonly string[],
): { data: Chunk; spans: Map<number, { start: number; end: number }> } | null {
  const n = lines.length;
  const data: Chunk = {
    products: new Int32Array(n),
    types: new Uint8Array(n),
    values: new Float64Array(n),
    at: new Float64Array(n),
  };
  const spans = new Map<number, { start: number; end: number }>();
  for (let k = 0; k < n; k++) {
    const parts = lines[k]!.split(",");
    // A type or value this format cannot carry plainly: leave these users to the per-user read.
    if (parts.length !== 5) return null;
    const productId = Number(parts[1]);
    if (!Number.isInteger(productId) || productId > 0x7fffffff) return null;
    const code = typeCode(parts[2]!);
    if (code > 0xff) return null;
    const endUserId = Number(parts[0]);
    data.products[k] = productId;
    data.types[k] = code;
    data.values[k] = parts[3] === "" ? 1 : Number(parts[3]);
    data.at[k] = Number(parts[4]);
    const span = spans.get(endUserId);
    if (span === undefined) spans.set(endUserId, { start: k, end: k + 1 });
    else span.end = k + 1;
  }
  return { data, spans };
}

/** The user of `row` with their interactions in `chunk` (none when it has no line of theirs). */
export function storedUser(
  row: UserRow,
  chunk: { data: Chunk; spans: Map<number, { start: number; end: number }> },
): StoredUser {
  const id = Number(row.id);
  const span = chunk.spans.get(id) ?? { start: 0, end: 0 };
  return {
    endUserId: id,
    preferredCategories: stringArray(row.preferred_categories),
    priceRangeMin: row.price_range_min === null ? null : Number(row.price_range_min),
    priceRangeMax: row.price_range_max === null ? null : Number(row.price_range_max),
    chunk: chunk.data,
    start: span.start,
    end: span.end,
  };
}

export function materialise(
  user: StoredUser,
  nameOf: (productId: number) => string | undefined,
  historyLength: number,
): PreloadedHistory | undefined {
  const g = user.chunk;
  const events: PreloadedHistory["events"] = [];
  const last = Math.min(user.end, user.start + historyLength);
  for (let j = user.start; j < last; j++) {
    const externalProductId = nameOf(g.products[j]!);
    // A product the model does not know (created after its training): the database names it.
    if (externalProductId === undefined) return undefined;
    events.push({
      externalProductId,
      type: TYPE_NAMES[g.types[j]!]!,
      value: g.values[j]!,
      occurredAt: g.at[j]!,
    });
  }
  // Every product ever interacted with, distinct, in product id order (as the database aggregates them).
  const ids = g.products.slice(user.start, user.end).sort();
  const interacted: string[] = [];
  for (let j = 0; j < ids.length; j++) {
    if (j > 0 && ids[j] === ids[j - 1]) continue;
    const externalProductId = nameOf(ids[j]!);
    if (externalProductId === undefined) return undefined;
    interacted.push(externalProductId);
  }
  return {
    endUserId: user.endUserId,
    preferredCategories: user.preferredCategories,
    priceRangeMin: user.priceRangeMin,
    priceRangeMax: user.priceRangeMax,
    events,
    interacted,
  };
}

function stringArray(value: unknown): string[] {
  const raw = typeof value === "string" ? (JSON.parse(value) as unknown) : value;
  return Array.isArray(raw) ? raw.filter((c): c is string => typeof c === "string") : [];
}
