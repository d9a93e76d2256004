import { createRng } from "./rng";
import type { Csr } from "./sparse";
import { topK } from "./topk";
import type { Interactions } from "./types";

export interface HoldoutSplit {
  /** Event indices kept for training. */
  trainIdx: Int32Array;
  /** Event indices held out. */
  testIdx: Int32Array;
}

export interface SplitOptions {
  fraction?: number;
  minInteractions?: number;
  seed?: number;
  /**
   * "pair" (default) holds out distinct user-item pairs with all their events, so an item is never both
   * trained on and held out for the same user (repeat views would otherwise leak); "event" splits raw events.
   */
  unit?: "pair" | "event";
}

/**
 * Per-user random hold-out: for every user with at least `minInteractions` events, `round(fraction·n)`
 * (at least one) of their events are held out; other users' events all stay in training.
 */
export function holdoutSplit(events: Interactions, opts: SplitOptions = {}): HoldoutSplit {
  const fraction = opts.fraction ?? 0.2;
  const minInteractions = opts.minInteractions ?? 5;
  const rng = createRng(opts.seed ?? 42);
  const n = events.user.length;
  // rep[e] is the event standing for e's unit: itself, or the first event of its user-item pair.
  const rep = opts.unit === "event" ? null : pairRepresentatives(events);
  const start = new Int32Array(events.nUsers + 1);
  for (let i = 0; i < n; i++) if (!rep || rep[i] === i) start[events.user[i]! + 1]!++;
  for (let u = 0; u < events.nUsers; u++) start[u + 1]! += start[u]!;
  const byUser = new Int32Array(start[events.nUsers]!);
  const next = start.slice(0, events.nUsers);
  for (let i = 0; i < n; i++) if (!rep || rep[i] === i) byUser[next[events.user[i]!]!++] = i;
  const isTest = new Uint8Array(n);
  for (let u = 0; u < events.nUsers; u++) {
    const a = start[u]!;
    const len = start[u + 1]! - a;
    if (len < minInteractions) continue;
    const take = Math.max(1, Math.round(fraction * len));
    // Partial Fisher-Yates over the user's slice: the first `take` positions become the hold-out.
    for (let j = 0; j < take; j++) {
      const r = j + Math.floor(rng() * (len - j));
      const t = byUser[a + j]!;
      byUser[a + j] = byUser[a + r]!;
      byUser[a + r] = t;
      isTest[byUser[a + j]!] = 1;
    }
  }
  let nTest = 0;
  for (let i = 0; i < n; i++) {
    if (rep) isTest[i] = isTest[rep[i]!]!;
    nTest += isTest[i]!;
  }
  return splitByFlag(isTest, nTest);
}

/**
 * Order-independent hold-out: a user-item pair is held out when a hash of (user key, item key, seed) falls
 * below `fraction`, for users with at least `minInteractions` distinct items. The same pair lands on the
 * same side whatever order the events arrived in, so concurrent ingestion cannot move the split (the
 * random split above draws per user in event order). Keys default to the dense indices; pass stable ids
 * (external ids) to make the split independent of how indices were assigned too.
 */
export function hashHoldoutSplit(
  events: Interactions,
  opts: {
    fraction?: number;
    minInteractions?: number;
    seed?: number;
    userKey?: (user: number) => string;
    itemKey?: (item: number) => string;
  } = {},
): HoldoutSplit {
  const fraction = opts.fraction ?? 0.2;
  const minInteractions = opts.minInteractions ?? 5;
  const seed = opts.seed ?? 42;
  const n = events.user.length;
  const rep = pairRepresentatives(events);
  const distinct = new Int32Array(events.nUsers);
  for (let i = 0; i < n; i++) if (rep[i] === i) distinct[events.user[i]!]!++;
  const userKey = opts.userKey ?? String;
  const itemKey = opts.itemKey ?? String;
  const isTest = new Uint8Array(n);
  let nTest = 0;
  for (let i = 0; i < n; i++) {
    const u = events.user[i]!;
    if (distinct[u]! < minInteractions) continue;
    if (rep[i] === i) {
      const h = fnv1a(`${seed}\u0000${userKey(u)}\u0000${itemKey(events.item[i]!)}`);
      isTest[i] = h / 4294967296 < fraction ? 1 : 0;
    } else isTest[i] = isTest[rep[i]!]!;
    nTest += isTest[i]!;
  }
  return splitByFlag(isTest, nTest);
}

/** Event indices split by a per-event hold-out flag, each side in event order. */
function splitByFlag(isTest: Uint8Array, nTest: number): HoldoutSplit {
  const n = isTest.length;
  const trainIdx = new Int32Array(n - nTest);
  const testIdx = new Int32Array(nTest);
  let tr = 0;
  let te = 0;
  for (let i = 0; i < n; i++) {
    if (isTest[i]) testIdx[te++] = i;
    else trainIdx[tr++] = i;
  }
  return { trainIdx, testIdx };
}

/** 32-bit FNV-1a with a final avalanche, so close keys ("u1|i1", "u1|i2") spread over the whole range. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function pairRepresentatives(events: Interactions): Int32Array {
  const first = new Map<number, number>();
  const rep = new Int32Array(events.user.length);
  for (let i = 0; i < rep.length; i++) {
    const key = events.user[i]! * events.nItems + events.item[i]!;
    const f = first.get(key);
    if (f === undefined) {
      first.set(key, i);
      rep[i] = i;
    } else rep[i] = f;
  }
  return rep;
}

/** Held-out relevant items per user: distinct, and not already among the user's training items. */
export function heldOutSets(events: Interactions, split: HoldoutSplit, train: Csr): Map<number, Int32Array> {
  const perUser = new Map<number, Set<number>>();
  for (let j = 0; j < split.testIdx.length; j++) {
    const e = split.testIdx[j]!;
    const u = events.user[e]!;
    let s = perUser.get(u);
    if (!s) {
      s = new Set();
      perUser.set(u, s);
    }
    s.add(events.item[e]!);
  }
  const out = new Map<number, Int32Array>();
  for (const [u, s] of perUser) {
    for (let p = train.indptr[u]!; p < train.indptr[u + 1]!; p++) s.delete(train.indices[p]!);
    if (s.size > 0) out.set(u, Int32Array.from([...s].sort((a, b) => a - b)));
  }
  return out;
}

export interface RankingMetrics {
  ndcgAt10: number | null;
  recallAt20: number | null;
  coverageAt10: number | null;
  evaluatedUsers: number;
  note?: string;
}

/** Fills `out` (length nItems) with the scores for user `u`. */
export type UserScorer = (u: number, out: Float32Array) => void;

export const MIN_EVALUABLE_USERS = 10;

/**
 * Full ranking over all items with the user's training items excluded. NDCG@10 uses binary relevance and a
 * log2 discount; Recall@20 divides hits by min(20, |relevant|) (the EASE/VAE-CF convention) so users with
 * long hold-outs are not capped below 1; coverage@10 is distinct recommended items / catalogue size.
 */
export function evaluateRanking(
  train: Csr,
  heldOut: Map<number, Int32Array>,
  scorer: UserScorer,
  opts: {
    minUsers?: number;
    users?: number[];
    /** Ranks a user's top k directly (the served ranking); `scorer` is then unused. */
    ranker?: (u: number, k: number) => Int32Array;
  } = {},
): RankingMetrics {
  const users = opts.users ?? [...heldOut.keys()];
  const minUsers = opts.minUsers ?? MIN_EVALUABLE_USERS;
  if (users.length < minUsers) {
    return {
      ndcgAt10: null,
      recallAt20: null,
      coverageAt10: null,
      evaluatedUsers: users.length,
      note: "insufficient data",
    };
  }
  const nItems = train.nCols;
  const scores = new Float32Array(nItems);
  const covered = new Uint8Array(nItems);
  const isRelevant = new Uint8Array(nItems);
  let ndcgSum = 0;
  let recallSum = 0;
  for (const u of users) {
    const rel = heldOut.get(u)!;
    let top: Int32Array;
    if (opts.ranker) top = opts.ranker(u, 20);
    else {
      scorer(u, scores);
      top = topK(scores, 20, null, train.indices.subarray(train.indptr[u]!, train.indptr[u + 1]!));
    }
    for (let j = 0; j < rel.length; j++) isRelevant[rel[j]!] = 1;
    let dcg = 0;
    let hits20 = 0;
    for (let r = 0; r < top.length; r++) {
      const it = top[r]!;
      if (r < 10) covered[it] = 1;
      if (!isRelevant[it]) continue;
      hits20++;
      if (r < 10) dcg += 1 / Math.log2(r + 2);
    }
    let idcg = 0;
    for (let r = 0; r < Math.min(10, rel.length); r++) idcg += 1 / Math.log2(r + 2);
    ndcgSum += dcg / idcg;
    recallSum += hits20 / Math.min(20, rel.length);
    for (let j = 0; j < rel.length; j++) isRelevant[rel[j]!] = 0;
  }
  let nCovered = 0;
  for (let i = 0; i < nItems; i++) nCovered += covered[i]!;
  return {
    ndcgAt10: ndcgSum / users.length,
    recallAt20: recallSum / users.length,
    coverageAt10: nCovered / nItems,
    evaluatedUsers: users.length,
  };
}
