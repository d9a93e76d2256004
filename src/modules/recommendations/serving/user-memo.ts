/**
 * Per-user work that only changes when the user's history does: the dense history, the items never to
 * recommend back, the folded-in user vector and content profile, and the HNSW neighbours fetched for them.
 * Memoised on the cached history object itself, so it lives exactly as long as that cache entry: a recorded
 * interaction or an erasure drops the entry (and with it this memo), and a newly published model is a new
 * table and signals.
 *
 * A history that took in an interaction this process recorded starts its candidates from the previous
 * history's (`carryCandidates`): the items each of its two searches (collaborative and content) returned,
 * scored again with the new folded-in vector or content profile, instead of new HNSW searches. One more
 * product moves a long history's vector and profile little, so the best items for the new ones are nearly
 * always among the best for the old (`bun run bench/carried-candidates.ts [--content] [--uniform]`: on the
 * serving bench's 20k-product synthetic shop, for 559 users of 20 or more products, the top 20 of the
 * rescored items held 99.96% of an exact scan's collaborative top 20 one view later and 99.90% two views
 * later, and 99.88% and 99.78% of the content top 20, views drawn by popularity; the HNSW searches themselves
 * hold 99.84% and about 95%). Two histories in a row may rank this way; the third searches again, so the
 * approximation never drifts further. Shorter histories always search.
 *
 * A ranking's searches are mostly made just ahead of it, on a thread of the runtime's pool (`search`, see
 * `searchesAhead` in ranking/rank.ts), and kept here under the `k` it then asks for.
 */
import { denseHistory, type TypedHistory } from "../../../engine/ranking/components";
import { type ItemSet, SortedItems } from "../../../engine/ranking/item-set";
import type { ModelSignals, SignalQuery } from "../../../engine/ranking/signals";
import { attached } from "../../../shared/attached";
import type { UserHistory } from "./history-cache";
import type { ItemTable } from "./item-table";

interface Memo {
  table: ItemTable;
  signals: ModelSignals | null;
  dense: TypedHistory;
  historyItems?: ItemSet;
  /** Null: the model has no such signal for this history. A volatile query is never kept here. */
  collab?: Remembered | null;
  content?: Remembered | null;
}

/** Candidates of one signal a history took over from the one before it (see `carryCandidates`). */
interface Carried {
  table: ItemTable;
  signals: ModelSignals;
  /** The previous history's candidates: what its search (or its own carried list) returned. */
  items: Int32Array;
  /** The search returned fewer items than asked: every item the index holds, so any k is answered. */
  complete: boolean;
  /** How many histories in a row these candidates have now been carried through. */
  generation: number;
}

/** Histories in a row that may rank from carried candidates; the next one searches the index again. */
export const MAX_CARRIED_GENERATIONS = 2;
/**
 * Products a history must hold for its candidates to be carried: a few more products move a short history's
 * vector far (two views later, users of fewer than 10 products kept 70% of an exact scan's top 20, users of
 * 10 to 19 products 97.4%, users of 20 or more 99.9%; views drawn by popularity).
 */
export const MIN_CARRIED_HISTORY = 20;
/**
 * Items a search fetches beyond what was asked, so a later history can still be served from them: a user
 * with a short history asks for one more candidate per product they add (to make up for the exclusion).
 */
export const CARRY_SLACK = 4;

export interface UserSignals {
  dense: TypedHistory;
  /** Every item the user ever interacted with, beyond the latest events too: never recommended back. */
  historyItems(): ItemSet;
  collaborative(): SignalQuery | null;
  content(): SignalQuery | null;
}

const memos = attached<UserHistory, Memo>("user memo");
type Signal = "collab" | "content";
const SIGNALS: readonly Signal[] = ["collab", "content"];
const carried = attached<UserHistory, Partial<Record<Signal, Carried>>>("carried candidates");
/**
 * Distinct `k` values kept per query (requests differ only by page size and filter share). Each list is a
 * few hundred ints, and the query keeps the widest one's similarities (known-scores.ts, 11 to 21 bytes an item),
 * so a cached user costs a few KB on top of their history.
 */
const MAX_TOPS = 2;

export function userSignals(
  history: UserHistory,
  table: ItemTable,
  signals: ModelSignals | null,
): UserSignals {
  let memo = memos.get(history);
  if (memo === undefined || memo.table !== table || memo.signals !== signals) {
    memo = { table, signals, dense: denseHistory(table, history, signals?.weightConfig) };
    memos.set(history, memo);
  }
  const m = memo;
  return {
    dense: m.dense,
    historyItems: () => {
      if (m.historyItems === undefined) m.historyItems = historyItems(history, table, m.dense);
      return m.historyItems;
    },
    collaborative: () => query("collab", () => signals?.collaborative(m.dense) ?? null),
    content: () => query("content", () => signals?.content(m.dense) ?? null),
  };

  /**
   * The signal's query for this history, kept unless it is volatile: a volatile query (EASE's scores) reads a
   * buffer the model shares between users, which the next user's query overwrites, so it answers the ranking
   * that asked for it and the next ranking asks the model again (kept, a later answer for this history would
   * be ranked with whichever user's scores the buffer holds by then).
   */
  function query(signal: Signal, make: () => SignalQuery | null): Remembered | SignalQuery | null {
    const kept = m[signal];
    if (kept !== undefined) return kept;
    const made = make();
    if (made?.volatile === true) return made;
    m[signal] = made === null ? null : remembered(made, signal);
    return m[signal];
  }

  /** The query, kept, starting from the candidates this history carried for it when they may serve. */
  function remembered(query: SignalQuery, signal: Signal): Remembered {
    const from = carried.get(history)?.[signal];
    const usable =
      from !== undefined &&
      from.table === table &&
      from.signals === signals &&
      m.dense.items.length >= MIN_CARRIED_HISTORY
        ? from
        : undefined;
    return new Remembered(query, CARRY_SLACK, usable);
  }
}

function historyItems(history: UserHistory, table: ItemTable, dense: TypedHistory): ItemSet {
  const items: number[] = [];
  // Indexed loops over typed arrays: for-of goes through the iterator protocol, measurably slower here.
  for (let h = 0; h < dense.items.length; h++) items.push(dense.items[h]!);
  for (const pid of history.interacted) {
    const item = table.indexOf.get(pid);
    if (item !== undefined) items.push(item);
  }
  return SortedItems.of(items);
}

/**
 * The user's next history (`next`, which took in interactions recorded after `previous`) starts its
 * collaborative and content candidates from those of `previous`, unless they were already carried through
 * MAX_CARRIED_GENERATIONS histories. A previous history that was never ranked passes on what it was given.
 */
export function carryCandidates(previous: UserHistory, next: UserHistory): void {
  const memo = memos.get(previous);
  const before = carried.get(previous);
  const passed: Partial<Record<Signal, Carried>> = {};
  for (const signal of SIGNALS) {
    const query = memo?.[signal];
    let from: Carried | undefined;
    if (query instanceof Remembered && memo !== undefined && memo.signals !== null) {
      const items = query.widest();
      if (items !== undefined) {
        from = {
          table: memo.table,
          signals: memo.signals,
          items,
          complete: query.complete,
          generation: query.generation + 1,
        };
      }
    } else {
      const given = before?.[signal];
      if (given !== undefined) from = { ...given, generation: given.generation + 1 };
    }
    if (from !== undefined && from.generation <= MAX_CARRIED_GENERATIONS) passed[signal] = from;
  }
  if (passed.collab !== undefined || passed.content !== undefined) carried.set(next, passed);
}

/**
 * A per-user signal query whose top-k lists are kept (for the history's next requests and for the next
 * history to carry), and which answers from carried candidates while they hold enough items.
 */
class Remembered implements SignalQuery {
  private readonly tops = new Map<number, Int32Array>();
  /** Searches under way off the request thread, by the `k` asked of `search`. */
  private readonly searching = new Map<number, Promise<Int32Array>>();
  private longest: Int32Array | undefined;
  /** Whether `longest` holds every item the search can return (it answered fewer than asked). */
  complete = false;
  readonly score: (item: number) => number;
  readonly scoreInto?: (items: Int32Array, out: Float32Array) => void;
  /** 0 when this query searched the index; else how many histories its candidates were carried through. */
  readonly generation: number;

  /** `slack`: items a search fetches beyond what was asked, for the next history to carry (0: none). */
  constructor(
    private readonly query: SignalQuery,
    private readonly slack: number,
    private readonly from: Carried | undefined,
  ) {
    this.score = query.score;
    if (query.scoreInto !== undefined) this.scoreInto = query.scoreInto;
    this.generation = from?.generation ?? 0;
  }

  top(k: number): Int32Array {
    return this.tops.get(k) ?? this.keep(k, this.fresh(k));
  }

  /**
   * What `top(k)` will answer, searched off the request thread and kept for it; null when `top(k)` needs no
   * search (it holds the answer, or carried candidates serve it) or the query cannot search off the thread.
   */
  search(k: number): Promise<Int32Array> | null {
    if (this.tops.has(k) || this.carries(k)) return null;
    let pending = this.searching.get(k);
    if (pending === undefined) {
      const wanted = k + this.slack;
      const search = this.query.search?.(wanted) ?? null;
      if (search === null) return null;
      pending = search.then(
        (found) => {
          this.searching.delete(k);
          // A synchronous `top(k)` may have searched meanwhile: the same answer, kept once.
          return this.tops.get(k) ?? this.keep(k, this.took(found, wanted, k));
        },
        (error: unknown) => {
          this.searching.delete(k);
          throw error;
        },
      );
      this.searching.set(k, pending);
    }
    return pending;
  }

  /** The longest candidate list this query made, best first. */
  widest(): Int32Array | undefined {
    return this.longest;
  }

  private keep(k: number, items: Int32Array): Int32Array {
    if (this.tops.size >= MAX_TOPS) this.tops.delete(this.tops.keys().next().value!);
    this.tops.set(k, items);
    return items;
  }

  /** Whether the carried candidates answer `top(k)`. */
  private carries(k: number): boolean {
    const from = this.from;
    return from !== undefined && (from.items.length >= k || from.complete);
  }

  private fresh(k: number): Int32Array {
    const from = this.from;
    if (from !== undefined && this.carries(k)) {
      if (this.longest === undefined) {
        this.longest = this.rescored(from.items);
        this.complete = from.complete;
      }
      return this.longest.length > k ? this.longest.subarray(0, k) : this.longest;
    }
    // A search may fetch a little more than asked (see CARRY_SLACK); the caller is given what it asked for.
    const wanted = k + this.slack;
    return this.took(this.query.top(wanted), wanted, k);
  }

  /** A search's `found` items for `wanted`, kept as the longest list when they are; the first `k` of them. */
  private took(found: Int32Array, wanted: number, k: number): Int32Array {
    if (this.longest === undefined || found.length > this.longest.length) {
      this.longest = found;
      this.complete = found.length < wanted;
    }
    return found.length > k ? found.subarray(0, k) : found;
  }

  /** `items` ordered by this query's scores, best first. */
  private rescored(items: Int32Array): Int32Array {
    const scores = new Float32Array(items.length);
    if (this.scoreInto !== undefined) this.scoreInto(items, scores);
    else for (let p = 0; p < items.length; p++) scores[p] = this.score(items[p]!);
    const order = Array.from({ length: items.length }, (_, p) => p).sort((a, b) => scores[b]! - scores[a]!);
    const out = new Int32Array(items.length);
    for (let p = 0; p < order.length; p++) out[p] = items[order[p]!]!;
    return out;
  }
}
