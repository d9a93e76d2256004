/**
 * Every end user's history of an account, read in bulk statements instead of one statement per user, for
 * the embedded store: there statements run one at a time on the database's thread, each a round trip from
 * the thread that answers requests, and a user's first request (or the first after the history cache's TTL)
 * used to spend most of its time reading that user's interactions. Kept compactly (typed arrays, products
 * as ids) and turned into a `UserHistory` only when a user is asked for.
 *
 * The read goes a few users at a time (about ROWS_PER_STEP interactions per statement) and lets the
 * statements of other requests run every few milliseconds of it; the users it has read answer at once, the
 * others are read one by one meanwhile. It starts as soon as the account's model is in memory (`warm`).
 *
 * It says no more than a read would have said at the time it was made: an answer is given only within the
 * history cache's TTL of when the bulk read started (it is read again in the background after half of it),
 * and never for a user who interacted, was updated or was erased since (those are read from the database as
 * before). A statement made after the start says at least what a read at the start would have.
 */
import { sql } from "drizzle-orm";
import type { Database } from "../../../db/client";
import {
  INTERACTION_LINE,
  materialise,
  type PreloadedHistory,
  parseChunk,
  type StoredUser,
  storedUser,
  type UserRow,
} from "./history-lines";

export type { PreloadedHistory } from "./history-lines";

/** The external id of each product id an account's model knows. */
type ProductNames = (accountId: number) => ((productId: number) => string | undefined) | undefined;

/**
 * Interactions one bulk statement aims at (about 5 ms of the database's thread on the bench tenant, parse
 * included). A request's statement that arrives during one waits for all of it: 200 users a statement read
 * 38,000 interactions of the bench tenant's heaviest users in 300 ms, and the 25 statements of a 5,000-user
 * account ran back to back for 800 ms, the p99 of every request that came in meanwhile (measured with PGlite
 * on the thread that answers requests).
 */
const ROWS_PER_STEP = 2_000;
/**
 * Time the first read of an account takes before it lets the statements of waiting requests run. Meanwhile its
 * users are read one by one (batched, history-batch.ts), each at several times its share of the bulk read,
 * so it is worth finishing: one statement per turn made it take 10 s at 32 connections (each turn waits
 * for every request queued meanwhile, 100-800 ms).
 */
const SLICE_MS = 20;
/**
 * A read again (the previous one answers until its TTL, half a TTL on) takes smaller slices and at most a fifth
 * of the thread: at full pace it held the thread for 34 of its first 43 ms, the requests queued behind it too.
 */
const RELOAD_SLICE_MS = 8;
const RELOAD_REST_MS = 32;
/** Users in the first statement, before their interactions per user are known; how far it grows after. */
const FIRST_USERS = 1;
const GROWTH = 4;
const MAX_USERS = 500;
/** Share of the account's users asked for from one bulk read that makes the next one worth reading. */
const RELOAD_SHARE = 0.1;
/** Accounts with more interactions than this are read user by user, as before. */
const MAX_INTERACTIONS = 5_000_000;

interface Generation {
  startedAt: number;
  /** Filled statement by statement while the read is under way; its users answer as soon as they are in. */
  users: Map<string, StoredUser>;
  /** Users with an event since this generation's read started: read from the database instead. */
  dirty: Set<string>;
  /** Users answered from it so far. */
  takes: number;
  interactions: number;
}

interface AccountState {
  current?: Generation;
  loading?: { generation: Generation; done: Promise<void> };
  /** The account is too large (or a read failed): nothing is preloaded. */
  disabled?: boolean;
}

/**
 * Once `sliceMs` went to the read since it last did, lets the requests that arrived meanwhile run (and queue
 * their own statements) before its next statement, and waits `restMs` more.
 */
function slicer(sliceMs: number, restMs: number): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await new Promise<void>((resolve) => (restMs > 0 ? setTimeout(resolve, restMs) : setImmediate(resolve)));
    since = performance.now();
  };
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
    const state = this.state(accountId);
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
    // The read under way first (it is the newer), for the users it has read so far; then the previous one.
    for (const generation of [state.loading?.generation, current]) {
      if (generation === undefined || now - generation.startedAt >= this.ttlMs) continue;
      if (generation.dirty.has(externalUserId)) continue;
      const user = generation.users.get(externalUserId);
      if (user === undefined) continue;
      generation.takes++;
      const history = materialise(user, nameOf, this.historyLength);
      return history === undefined ? undefined : { history, readAt: generation.startedAt };
    }
    return undefined;
  }

  /**
   * Starts the account's first bulk read unless one was made or is under way: called once its model is in
   * memory, so the users who come after a restart find their histories read instead of each waiting for a
   * statement of their own.
   */
  warm(accountId: number, names: ProductNames): void {
    if (names(accountId) === undefined) return;
    const state = this.state(accountId);
    if (state.disabled || state.current !== undefined || state.loading !== undefined) return;
    this.load(accountId, state);
  }

  private state(accountId: number): AccountState {
    let state = this.accounts.get(accountId);
    if (state === undefined) {
      state = {};
      this.accounts.set(accountId, state);
    }
    return state;
  }

  /** Something happened to the user (an interaction, an update, an erasure): read them from the database. */
  dirty(accountId: number, externalUserId: string): void {
    const state = this.accounts.get(accountId);
    if (state === undefined) return;
    state.current?.dirty.add(externalUserId);
    state.loading?.generation.dirty.add(externalUserId);
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
    const generation: Generation = {
      startedAt: this.clock(),
      users: new Map(),
      dirty: new Set(),
      takes: 0,
      interactions: 0,
    };
    const pause = state.current === undefined ? slicer(SLICE_MS, 0) : slicer(RELOAD_SLICE_MS, RELOAD_REST_MS);
    const done = readAccount(this.database, accountId, generation, pause, () => state.disabled === true)
      .then((complete) => {
        if (state.disabled) return;
        if (!complete) {
          state.disabled = true;
          state.current = undefined;
          return;
        }
        state.current = generation;
      })
      .catch(() => {
        // The user-by-user read still answers; a failing bulk read is not retried for this account.
        state.disabled = true;
        state.current = undefined;
      })
      .finally(() => {
        state.loading = undefined;
      });
    state.loading = { generation, done };
  }
}

/**
 * Every end user of the account with their interactions into `g`, a few users per statement (as many as
 * make about ROWS_PER_STEP interactions, judging by the previous statement), letting requests run every
 * slice (`pause`). False: the account is too large, or holds what this format cannot carry.
 */
async function readAccount(
  database: Database,
  accountId: number,
  g: Generation,
  pause: () => Promise<void>,
  stopped: () => boolean,
): Promise<boolean> {
  let after = 0;
  let want = FIRST_USERS;
  for (;;) {
    if (stopped()) return false;
    const users = await database.rows<UserRow>(sql`
      select id, external_id, preferred_categories, price_range_min, price_range_max
      from end_users where account_id = ${accountId} and id > ${after} order by id limit ${want}`);
    if (users.length === 0) return true;
    const lo = Number(users[0]!.id);
    const hi = Number(users[users.length - 1]!.id);
    await pause();
    if (stopped()) return false;
    // One text value per statement: far cheaper to hand over than a row (or JSON value) per interaction.
    const [result] = await database.rows<{ lines: string | null }>(sql`
      select string_agg(${INTERACTION_LINE}, E'\n' order by i.end_user_id, i.occurred_at desc, i.id desc) as lines
      from interactions i
      where i.account_id = ${accountId} and i.end_user_id between ${lo} and ${hi}`);
    const lines = result?.lines ? result.lines.split("\n") : [];
    g.interactions += lines.length;
    if (g.interactions > MAX_INTERACTIONS) return false;
    const chunk = parseChunk(lines);
    if (chunk === null) return false;
    for (const row of users) g.users.set(row.external_id, storedUser(row, chunk));
    if (users.length < want) return true;
    after = hi;
    const perUser = Math.max(1, lines.length) / users.length;
    want = Math.max(1, Math.min(MAX_USERS, want * GROWTH, Math.floor(ROWS_PER_STEP / perUser)));
    await pause();
  }
}
