/**
 * Per-user work that only changes when the user's history does: the dense history, the items never to
 * recommend back, the folded-in user vector and content profile, and the HNSW neighbours fetched for them.
 * Memoised on the cached history object itself, so it lives exactly as long as that cache entry: a recorded
 * interaction or an erasure drops the entry (and with it this memo), and a newly published model is a new
 * table and signals.
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
  collab?: SignalQuery | null;
  content?: SignalQuery | null;
}

export interface UserSignals {
  dense: TypedHistory;
  /** Every item the user ever interacted with, beyond the latest events too: never recommended back. */
  historyItems(): ItemSet;
  collaborative(): SignalQuery | null;
  content(): SignalQuery | null;
}

const memos = attached<UserHistory, Memo>("user memo");
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
    collaborative: () => {
      if (m.collab === undefined) m.collab = remember(signals?.collaborative(m.dense) ?? null);
      return m.collab;
    },
    content: () => {
      if (m.content === undefined) m.content = remember(signals?.content(m.dense) ?? null);
      return m.content;
    },
  };
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

function remember(query: SignalQuery | null): SignalQuery | null {
  if (query === null || query.volatile === true) return query;
  const tops = new Map<number, Int32Array>();
  return {
    score: query.score,
    ...(query.scoreInto ? { scoreInto: query.scoreInto } : {}),
    top: (k) => {
      let hit = tops.get(k);
      if (hit === undefined) {
        hit = query.top(k);
        if (tops.size >= MAX_TOPS) tops.delete(tops.keys().next().value!);
        tops.set(k, hit);
      }
      return hit;
    },
  };
}
