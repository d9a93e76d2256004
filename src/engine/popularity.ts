import { type CategoryIndex, categoryAncestors } from "./categories";
import type { Csr } from "./sparse";
import { topK } from "./topk";
import type { Interactions } from "./types";

export interface PopularityOptions {
  /** Half-life of the popularity decay in days, back from the newest event; 0 = no decay. */
  halfLifeDays: number;
  /** "Trending" compares the last `trendingRecentDays` against the rate over `trendingBaseDays`. */
  trendingRecentDays: number;
  trendingBaseDays: number;
  /** Items kept per category list. */
  perCategory: number;
}

export const DEFAULT_POPULARITY: Readonly<PopularityOptions> = Object.freeze({
  halfLifeDays: 30,
  trendingRecentDays: 1,
  trendingBaseDays: 14,
  perCategory: 100,
});

export interface PopularityModel {
  /** Time-decayed weighted event mass per item. */
  score: Float32Array;
  /** Recent rate over base rate, smoothed so items with a handful of events do not dominate. */
  trending: Float32Array;
  /** Top items per category (including descendants): CSR with one row per category id, plus row "all" last. */
  byCategory: Csr;
  /**
   * `score` split by the UTC hour of the events: item i's mass in daypart d at [i * 4 + d] (see DAYPARTS);
   * the four parts of an item sum to its score. Absent in models trained before it existed.
   */
  byDaypart?: Float32Array;
}

/** Parts of the day by UTC hour: night 0–6, morning 6–12, afternoon 12–18, evening 18–24. */
export const DAYPARTS = ["night", "morning", "afternoon", "evening"] as const;
export type Daypart = (typeof DAYPARTS)[number];
export const daypartOfHour = (hour: number): number => Math.min(3, Math.max(0, Math.floor(hour / 6)));

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

export function computePopularity(
  events: Interactions,
  weights: Float32Array,
  categories: CategoryIndex,
  options: Partial<PopularityOptions> = {},
): PopularityModel {
  const o = { ...DEFAULT_POPULARITY, ...options };
  const n = events.user.length;
  const nItems = events.nItems;
  let newest = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) if (events.ts[i]! > newest) newest = events.ts[i]!;
  const decayPerMs = o.halfLifeDays > 0 ? Math.LN2 / (o.halfLifeDays * DAY_MS) : 0;
  const score = new Float32Array(nItems);
  const byDaypart = new Float32Array(nItems * DAYPARTS.length);
  const recent = new Float64Array(nItems);
  const base = new Float64Array(nItems);
  const recentFrom = newest - o.trendingRecentDays * DAY_MS;
  const baseFrom = newest - o.trendingBaseDays * DAY_MS;
  for (let i = 0; i < n; i++) {
    const w = weights[i]!;
    if (!(w > 0)) continue;
    const it = events.item[i]!;
    const age = newest - events.ts[i]!;
    const mass = w * Math.exp(-age * decayPerMs);
    score[it]! += mass;
    const t = events.ts[i]!;
    const hour = Math.floor((((t % DAY_MS) + DAY_MS) % DAY_MS) / HOUR_MS);
    byDaypart[it * DAYPARTS.length + daypartOfHour(hour)]! += mass;
    if (t >= recentFrom) recent[it]! += w;
    else if (t >= baseFrom) base[it]! += w;
  }
  const trending = new Float32Array(nItems);
  const ratio = o.trendingRecentDays / Math.max(1e-9, o.trendingBaseDays - o.trendingRecentDays);
  for (let i = 0; i < nItems; i++) trending[i] = (recent[i]! + 1) / (base[i]! * ratio + 5);
  return { score, trending, byCategory: topPerCategory(score, categories, o.perCategory), byDaypart };
}

function topPerCategory(score: Float32Array, categories: CategoryIndex, keep: number): Csr {
  const nCat = categories.paths.length;
  const members: number[][] = Array.from({ length: nCat + 1 }, () => []);
  const anc: number[] = [];
  for (let i = 0; i < score.length; i++) {
    members[nCat]!.push(i);
    const c = categories.itemCategory[i]!;
    if (c < 0) continue;
    for (const a of categoryAncestors(categories, c, anc)) members[a]!.push(i);
  }
  const indptr = new Int32Array(nCat + 2);
  const rows: Int32Array[] = [];
  for (let c = 0; c <= nCat; c++) {
    const m = members[c]!;
    const local = new Float32Array(m.length);
    for (let j = 0; j < m.length; j++) local[j] = score[m[j]!]!;
    const top = topK(local, keep);
    const row = new Int32Array(top.length);
    for (let j = 0; j < top.length; j++) row[j] = m[top[j]!]!;
    rows.push(row);
    indptr[c + 1] = indptr[c]! + row.length;
  }
  const indices = new Int32Array(indptr[nCat + 1]!);
  const data = new Float32Array(indices.length);
  for (let c = 0; c <= nCat; c++) {
    indices.set(rows[c]!, indptr[c]!);
    for (let p = indptr[c]!; p < indptr[c + 1]!; p++) data[p] = score[indices[p]!]!;
  }
  return { nRows: nCat + 1, nCols: score.length, indptr, indices, data };
}
