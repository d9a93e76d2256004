/**
 * The end user's profile and latest interactions, cached per (account, user): the one piece of per-request
 * state the recommender cannot take from the snapshot. Entries take in the user's new interactions (so the
 * next answer folds them in) and are dropped when the user is created, updated or erased, and expire after a
 * TTL: a short one on a shared database, so a change made through another process is seen within seconds,
 * and a long one on the embedded store, which only this process writes. A history read again after its TTL
 * that turns out unchanged keeps its previous object, and with it everything memoised on it (the folded-in
 * vector, the HNSW neighbours, cached pages), so an active user does not pay their first request again
 * every TTL.
 */
import type { Database } from "../../../db/client";
import { LruMap } from "../../../shared/lru-map";
import { HistoryBatch } from "./history-batch";
import { HistoryPreload } from "./history-preload";
import { loadHistory } from "./history-read";
import { HISTORY_LENGTH, type HistoryEvent, noHistory, type UserHistory } from "./user-history";

export { HISTORY_LENGTH, type HistoryEvent, noHistory, type UserHistory } from "./user-history";

/**
 * TTL on a database other processes write too. Their writes are announced (history-sync.ts); the TTL is the
 * backstop for an announcement lost with a dropped connection.
 */
export const SHARED_STORE_TTL_MS = 30_000;
/**
 * TTL on the embedded store, which belongs to this process: every write to a history goes through it and is
 * taken in or dropped as it commits, so a reread finds nothing new and only costs the thread. At 30 s the
 * rereads (the account's bulk read every 15 s, and each user who interacted since, one by one) took a
 * quarter of the thread's busy time under the bench's shop mix at about 1,500 req/s, in statements of up to
 * 14 ms that the requests queued behind them waited for.
 */
export const EMBEDDED_STORE_TTL_MS = 600_000;
const MAX_ENTRIES = 50_000;

interface Entry {
  value: Promise<UserHistory>;
  loadedAt: number;
  /** The value once loaded. */
  loaded?: UserHistory;
}

/** The external id of each product id an account's model knows (without asking the database). */
export type ProductNames = (accountId: number) => ((productId: number) => string | undefined) | undefined;

export class HistoryCache {
  private readonly entries = new LruMap<string, Entry>();
  /** Bulk-read histories (embedded store only; see history-preload.ts). */
  readonly preload: HistoryPreload | undefined;
  /** Reads of single users made together (with the preload; see history-batch.ts). */
  private readonly batch: HistoryBatch | undefined;
  private readonly ttlMs: number;

  /**
   * `clock` is replaceable so tests can step past the TTL. `productNames` lets a read skip joining each
   * interaction to its product (half of Postgres's work for the read) when the account's model knows them.
   * `ttlMs` defaults to SHARED_STORE_TTL_MS.
   */
  constructor(
    private readonly database: Database,
    private readonly clock: () => number = Date.now,
    private readonly productNames: ProductNames = () => undefined,
    options: { preload?: boolean; ttlMs?: number } = {},
  ) {
    this.ttlMs = options.ttlMs ?? SHARED_STORE_TTL_MS;
    this.preload =
      options.preload === true ? new HistoryPreload(database, clock, this.ttlMs, HISTORY_LENGTH) : undefined;
    this.batch = options.preload === true ? new HistoryBatch(database, HISTORY_LENGTH) : undefined;
  }

  /**
   * The history when it is loaded and fresh, or in the account's bulk read, without waiting (a returning
   * user's request); else undefined.
   */
  loaded(accountId: number, externalUserId: string): UserHistory | undefined {
    const key = cacheKey(accountId, externalUserId);
    const hit = this.entries.get(key);
    if (hit !== undefined && this.clock() - hit.loadedAt < this.ttlMs) return hit.loaded;
    return this.fromPreload(key, accountId, externalUserId, hit);
  }

  get(accountId: number, externalUserId: string): Promise<UserHistory> {
    const key = cacheKey(accountId, externalUserId);
    const now = this.clock();
    const hit = this.entries.get(key);
    if (hit !== undefined && now - hit.loadedAt < this.ttlMs) return hit.value;
    const preloaded = this.fromPreload(key, accountId, externalUserId, hit);
    if (preloaded !== undefined) return Promise.resolve(preloaded);
    const previous = hit?.loaded;
    const entry: Entry = {
      value: this.read(accountId, externalUserId),
      loadedAt: now,
    };
    entry.value = entry.value.then((fresh) => {
      entry.loaded = previous !== undefined && sameHistory(previous, fresh) ? previous : fresh;
      return entry.loaded;
    });
    const { value } = entry;
    this.entries.set(key, entry);
    value.catch(() => {
      if (this.entries.peek(key) === entry) this.entries.delete(key);
    });
    if (this.entries.size > MAX_ENTRIES) {
      const oldest = this.entries.oldest();
      if (oldest !== undefined) this.entries.delete(oldest[0]);
    }
    return value;
  }

  /** A read of the user, with the others asked for in this turn when reads are batched. */
  private read(accountId: number, externalUserId: string): Promise<UserHistory> {
    const names = this.productNames(accountId);
    if (this.batch === undefined || names === undefined)
      return loadHistory(this.database, accountId, externalUserId, names);
    return this.batch.read(accountId, externalUserId, names).then((history) =>
      // Undefined: a product the model cannot name; the database names them all.
      history === null
        ? noHistory()
        : (history ?? loadHistory(this.database, accountId, externalUserId, undefined)),
    );
  }

  /** The user from the account's bulk read, cached as a read would be (the same object when unchanged). */
  private fromPreload(
    key: string,
    accountId: number,
    externalUserId: string,
    hit: Entry | undefined,
  ): UserHistory | undefined {
    if (this.preload === undefined) return undefined;
    // Not while a read of this user is under way: it may already hold what the bulk read does not.
    if (hit !== undefined && hit.loaded === undefined) return undefined;
    const taken = this.preload.take(accountId, externalUserId, this.productNames);
    if (taken === undefined) return undefined;
    const fresh: UserHistory = taken.history;
    const previous = hit?.loaded;
    const loaded = previous !== undefined && sameHistory(previous, fresh) ? previous : fresh;
    // As old as the bulk read: it expires when a read made at that time would have.
    this.entries.set(key, { value: Promise.resolve(loaded), loadedAt: taken.readAt, loaded });
    if (this.entries.size > MAX_ENTRIES) {
      const oldest = this.entries.oldest();
      if (oldest !== undefined) this.entries.delete(oldest[0]);
    }
    return loaded;
  }

  /** The account's model is in memory: its histories are read in bulk now rather than user by user. */
  warm(accountId: number): void {
    this.preload?.warm(accountId, this.productNames);
  }

  /**
   * Interactions this process just committed for the user. A loaded history takes them in as a new object
   * (so everything memoised on the old one is computed again, as after a read) instead of being read again
   * on the next request; one still loading, or one of a user the account did not have yet, is dropped.
   * Answers the history replaced and the one that took its place, when there was one to take them in.
   */
  recorded(
    accountId: number,
    externalUserId: string,
    endUserId: number,
    interactions: readonly RecordedEvent[],
  ): { previous: UserHistory; updated: UserHistory } | undefined {
    this.preload?.dirty(accountId, externalUserId);
    const key = cacheKey(accountId, externalUserId);
    const hit = this.entries.peek(key);
    if (hit === undefined) return undefined;
    const current = hit.loaded;
    if (current === undefined || current.endUserId !== endUserId) {
      this.entries.delete(key);
      return undefined;
    }
    const updated = withInteractions(current, interactions);
    this.entries.set(key, { value: Promise.resolve(updated), loadedAt: hit.loadedAt, loaded: updated });
    return { previous: current, updated };
  }

  /** The user's data changed: the next request reads it again. */
  invalidate(accountId: number, externalUserId: string): void {
    this.preload?.dirty(accountId, externalUserId);
    this.entries.delete(cacheKey(accountId, externalUserId));
  }

  invalidateAccount(accountId: number): void {
    this.preload?.dropAccount(accountId);
    const prefix = `${accountId}\u0000`;
    for (const [key] of this.entries.entries()) if (key.startsWith(prefix)) this.entries.delete(key);
  }

  clear(): void {
    this.preload?.clear();
    this.entries.clear();
  }
}

const cacheKey = (accountId: number, externalUserId: string) => `${accountId}\u0000${externalUserId}`;

/** An interaction as recorded (see interactions/events.ts). */
export interface RecordedEvent {
  externalProductId: string;
  interactionType: string;
  value: number;
  occurredAt: Date;
}

/**
 * The history as a read would now return it: newest first (the just-recorded interactions, whose ids are the
 * highest, before older ones of the same time), the latest HISTORY_LENGTH, their products added to the
 * interacted ones.
 */
export function withInteractions(history: UserHistory, interactions: readonly RecordedEvent[]): UserHistory {
  const added: HistoryEvent[] = [];
  for (let i = interactions.length - 1; i >= 0; i--) {
    const recorded = interactions[i]!;
    added.push({
      externalProductId: recorded.externalProductId,
      type: recorded.interactionType,
      value: recorded.value,
      occurredAt: recorded.occurredAt.getTime(),
    });
  }
  // A stable sort keeps the new ones ahead of older entries with the same time. Interactions recorded as they
  // happen are already the newest, in order: then the lists are only joined.
  const events = newestFirst(added, history.events)
    ? added.concat(history.events.slice(0, Math.max(0, HISTORY_LENGTH - added.length)))
    : [...added, ...history.events].sort((a, b) => b.occurredAt - a.occurredAt);
  // Products new to the user, each once (a few per write: a scan of the list costs less than a Set of it).
  const fresh: string[] = [];
  for (const event of added) {
    const id = event.externalProductId;
    if (!history.interacted.includes(id) && !fresh.includes(id)) fresh.push(id);
  }
  const interacted = fresh.length > 0 ? [...history.interacted, ...fresh] : history.interacted;
  return {
    ...history,
    events: events.length > HISTORY_LENGTH ? events.slice(0, HISTORY_LENGTH) : events,
    interacted,
  };
}

/** Whether `added`, newest first, followed by `older` (newest first) is newest first as it stands. */
function newestFirst(added: readonly HistoryEvent[], older: readonly HistoryEvent[]): boolean {
  for (let i = 1; i < added.length; i++) if (added[i]!.occurredAt > added[i - 1]!.occurredAt) return false;
  const last = added[added.length - 1];
  return last === undefined || older.length === 0 || last.occurredAt >= older[0]!.occurredAt;
}

/** Whether a history read again says exactly what the cached one does. */
function sameHistory(a: UserHistory, b: UserHistory): boolean {
  if (
    a.endUserId !== b.endUserId ||
    a.priceRangeMin !== b.priceRangeMin ||
    a.priceRangeMax !== b.priceRangeMax ||
    !sameStrings(a.preferredCategories, b.preferredCategories) ||
    !sameMembers(a.interacted, b.interacted) ||
    a.events.length !== b.events.length
  ) {
    return false;
  }
  for (let i = 0; i < a.events.length; i++) {
    const x = a.events[i]!;
    const y = b.events[i]!;
    if (
      x.externalProductId !== y.externalProductId ||
      x.type !== y.type ||
      x.value !== y.value ||
      x.occurredAt !== y.occurredAt
    ) {
      return false;
    }
  }
  return true;
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}

/**
 * The same distinct values in any order: a read lists the interacted products in the database's order, a
 * history that took in recorded interactions has the new ones last.
 */
function sameMembers(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  if (sameStrings(a, b)) return true;
  const members = new Set(a);
  return b.every((value) => members.has(value));
}
