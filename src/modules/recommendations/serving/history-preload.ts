/**
 * Every end user's history of an account, read in a few bulk statements instead of one statement per user,
 * for the embedded store: there each statement runs on the thread that answers requests, and a user's
 * first request (or the first after the history cache's TTL) used to spend most of its time reading that
 * user's interactions. Kept compactly (typed arrays, products as ids) and turned into a `UserHistory` only
 * when a user is asked for.
 *
 * It says no more than a read would have said at the time it was made: an answer is given only within the
 * history cache's TTL of when the bulk read started (it is read again in the background after half of it),
 * and never for a user who interacted, was updated or was erased since (those are read from the database as
 * before); users created since are not in it at all.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../../../db/client";

/** A user's history as the history cache holds it (see `UserHistory` there; kept structural, no import). */
export interface PreloadedHistory {
  endUserId: number;
  preferredCategories: readonly string[];
  priceRangeMin: number | null;
  priceRangeMax: number | null;
  events: { externalProductId: string; type: string; value: number; occurredAt: number }[];
  interacted: string[];
}

/** The external id of each product id an account's model knows. */
type ProductNames = (accountId: number) => ((productId: number) => string | undefined) | undefined;

/** Users per bulk statement (about 6,000 interactions at 30 each): each holds the thread a few milliseconds. */
const USERS_PER_CHUNK = 200;
/** Share of the account's users asked for from one bulk read that makes the next one worth reading. */
const RELOAD_SHARE = 0.1;
/** Accounts with more interactions than this are read user by user, as before. */
const MAX_INTERACTIONS = 5_000_000;

interface StoredUser {
  endUserId: number;
  preferredCategories: readonly string[];
  priceRangeMin: number | null;
  priceRangeMax: number | null;
  /** The user's interactions in the shared arrays, newest first: [start, end). */
  start: number;
  end: number;
}

interface Generation {
  startedAt: number;
  users: Map<string, StoredUser>;
  products: Int32Array;
  types: Uint8Array;
  values: Float64Array;
  at: Float64Array;
  /** Users with an event since this generation's read started: read from the database instead. */
  dirty: Set<string>;
  /** Users answered from it so far. */
  takes: number;
}

interface AccountState {
  current?: Generation;
  loading?: { dirty: Set<string>; done: Promise<void> };
  /** The account is too large (or a read failed): nothing is preloaded. */
  disabled?: boolean;
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

export class HistoryPreload {
  private readonly accounts = new Map<number, AccountState>();

  constructor(
    private readonly database: Database,
    private readonly clock: () => number,
    private readonly ttlMs: number,
    private readonly historyLength: number,
  ) {}

  /**
   * The user's history as the bulk read found it, when that read is recent enough and nothing happened to
   * the user since; undefined otherwise (read the user from the database). Starts a bulk read of the account
   * when there is none, or the current one is past half its TTL.
   */
  take(
    accountId: number,
    externalUserId: string,
    names: ProductNames,
  ): { history: PreloadedHistory; readAt: number } | undefined {
    const nameOf = names(accountId);
    // Products are named from the account's model; without one in memory there is nothing to name them by.
    if (nameOf === undefined) return undefined;
    let state = this.accounts.get(accountId);
    if (state === undefined) {
      state = {};
      this.accounts.set(accountId, state);
    }
    if (state.disabled) return undefined;
    const now = this.clock();
    const current = state.current;
    // Read again past half the TTL, when enough of the account's users were asked for to be worth it (a
    // read costs a small fraction of reading those users one by one); else users are read one by one.
    if (
      state.loading === undefined &&
      (current === undefined ||
        (now - current.startedAt > this.ttlMs / 2 && current.takes >= current.users.size * RELOAD_SHARE))
    ) {
      this.load(accountId, state);
    }
    if (current === undefined || now - current.startedAt >= this.ttlMs) return undefined;
    if (current.dirty.has(externalUserId)) return undefined;
    const user = current.users.get(externalUserId);
    if (user === undefined) return undefined;
    current.takes++;
    const history = materialise(current, user, nameOf, this.historyLength);
    return history === undefined ? undefined : { history, readAt: current.startedAt };
  }

  /** Something happened to the user (an interaction, an update, an erasure): read them from the database. */
  dirty(accountId: number, externalUserId: string): void {
    const state = this.accounts.get(accountId);
    if (state === undefined) return;
    state.current?.dirty.add(externalUserId);
    state.loading?.dirty.add(externalUserId);
  }

  dropAccount(accountId: number): void {
    const state = this.accounts.get(accountId);
    if (state === undefined) return;
    // A read under way finishes into a state nobody holds any more.
    this.accounts.delete(accountId);
    state.disabled = true;
  }

  clear(): void {
    for (const accountId of [...this.accounts.keys()]) this.dropAccount(accountId);
  }

  /** Resolves when the account's bulk read under way (if any) has finished; for tests. */
  async settled(accountId: number): Promise<void> {
    await this.accounts.get(accountId)?.loading?.done;
  }

  private load(accountId: number, state: AccountState): void {
    const dirty = new Set<string>();
    const startedAt = this.clock();
    const done = readAccount(this.database, accountId)
      .then((read) => {
        if (state.disabled) return;
        if (read === null) {
          state.disabled = true;
          state.current = undefined;
          return;
        }
        state.current = { ...read, startedAt, dirty, takes: 0 };
      })
      .catch(() => {
        // The user-by-user read still answers; a failing bulk read is not retried for this account.
        state.disabled = true;
        state.current = undefined;
      })
      .finally(() => {
        state.loading = undefined;
      });
    state.loading = { dirty, done };
  }
}

function materialise(
  g: Generation,
  user: StoredUser,
  nameOf: (productId: number) => string | undefined,
  historyLength: number,
): PreloadedHistory | undefined {
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

interface UserRow {
  id: number | string;
  external_id: string;
  preferred_categories: unknown;
  price_range_min: number | string | null;
  price_range_max: number | string | null;
}

/** Every end user of the account with their interactions, a chunk of users per statement; null: too large. */
async function readAccount(
  database: Database,
  accountId: number,
): Promise<Omit<Generation, "startedAt" | "dirty" | "takes"> | null> {
  const rows = await database.rows<UserRow>(sql`
    select id, external_id, preferred_categories, price_range_min, price_range_max
    from end_users where account_id = ${accountId} order by id`);
  const users = new Map<string, StoredUser>();
  let capacity = 1 << 16;
  let products = new Int32Array(capacity);
  let types = new Uint8Array(capacity);
  let values = new Float64Array(capacity);
  let at = new Float64Array(capacity);
  let n = 0;
  const grow = () => {
    capacity *= 2;
    const grown = <T extends Int32Array | Uint8Array | Float64Array>(a: T, make: (size: number) => T) => {
      const b = make(capacity);
      b.set(a);
      return b;
    };
    products = grown(products, (s) => new Int32Array(s));
    types = grown(types, (s) => new Uint8Array(s));
    values = grown(values, (s) => new Float64Array(s));
    at = grown(at, (s) => new Float64Array(s));
  };
  for (let c = 0; c < rows.length; c += USERS_PER_CHUNK) {
    const chunk = rows.slice(c, c + USERS_PER_CHUNK);
    const lo = Number(chunk[0]!.id);
    const hi = Number(chunk[chunk.length - 1]!.id);
    // One text value per chunk: far cheaper to hand over than a row (or JSON value) per interaction.
    const [result] = await database.rows<{ lines: string | null }>(sql`
      select string_agg(concat_ws(',', i.end_user_id, i.product_id, i.interaction_type, coalesce(i.value::text, ''),
                                  (extract(epoch from i.occurred_at) * 1000)::float8),
                        E'\n' order by i.end_user_id, i.occurred_at desc, i.id desc) as lines
      from interactions i
      where i.account_id = ${accountId} and i.end_user_id between ${lo} and ${hi}`);
    const lines = result?.lines ? result.lines.split("\n") : [];
    const byUser = new Map<number, { start: number; end: number }>();
    for (const line of lines) {
      const parts = line.split(",");
      // A type or value this format cannot carry plainly: leave the account to the per-user read.
      if (parts.length !== 5) return null;
      const productId = Number(parts[1]);
      if (!Number.isInteger(productId) || productId > 0x7fffffff) return null;
      if (n === capacity) grow();
      if (n >= MAX_INTERACTIONS) return null;
      const endUserId = Number(parts[0]);
      products[n] = productId;
      types[n] = typeCode(parts[2]!);
      values[n] = parts[3] === "" ? 1 : Number(parts[3]);
      at[n] = Number(parts[4] ?? 0);
      const span = byUser.get(endUserId);
      if (span === undefined) byUser.set(endUserId, { start: n, end: n + 1 });
      else span.end = n + 1;
      n++;
    }
    for (const row of chunk) {
      const id = Number(row.id);
      const span = byUser.get(id) ?? { start: 0, end: 0 };
      users.set(row.external_id, {
        endUserId: id,
        preferredCategories: stringArray(row.preferred_categories),
        priceRangeMin: row.price_range_min === null ? null : Number(row.price_range_min),
        priceRangeMax: row.price_range_max === null ? null : Number(row.price_range_max),
        start: span.start,
        end: span.end,
      });
    }
  }
  return {
    users,
    products: products.slice(0, n),
    types: types.slice(0, n),
    values: values.slice(0, n),
    at: at.slice(0, n),
  };
}

function stringArray(value: unknown): string[] {
  const raw = typeof value === "string" ? (JSON.parse(value) as unknown) : value;
  return Array.isArray(raw) ? raw.filter((c): c is string => typeof c === "string") : [];
}
