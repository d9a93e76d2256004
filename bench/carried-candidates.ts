/**
 * `bun run bench/carried-candidates.ts [--content] [--uniform] [users]`: how closely the collaborative (or,
 * with --content, the content) candidates a user's next history carries over (src/modules/recommendations/serving/user-memo.ts) match a new search, on the
 * serving bench's synthetic shop (20k products in 100 categories, 5,000 users, 150k interactions) trained by
 * the engine's own pipeline.
 *
 * For each user: the exact top 100 + slack items of their folded-in vector or content profile (what the first
 * search returns),
 * then one viewed product after another (drawn by popularity, or uniformly with --uniform). After each view
 * the carried items are scored with the new vector and their best 20 and 40 compared with an exact scan of
 * every item for the new vector; the next view starts from the carried list, as serving does. The HNSW search
 * is left out on both sides: this measures what carrying adds to the index's own approximation. Figures are
 * given per history length: serving carries only for histories of MIN_CARRIED_HISTORY products or more, and
 * for MAX_CARRIED_GENERATIONS views in a row (the views past those are shown for comparison).
 */
import { addContentRow, contentDot } from "../src/engine/content";
import { foldInUser } from "../src/engine/fold-in";
import { createRng } from "../src/engine/rng";
import { trainModel } from "../src/engine/train";
import { buildWeightedMatrix } from "../src/engine/weighting";
import {
  CARRY_SLACK,
  MAX_CARRIED_GENERATIONS,
  MIN_CARRIED_HISTORY,
} from "../src/modules/recommendations/serving/user-memo";
import { generateSynthetic } from "./data/synthetic";

const args = process.argv.slice(2);
const uniform = args.includes("--uniform");
const content = args.includes("--content");
const maxUsers = Number(args.find((a) => /^\d+$/.test(a)) ?? 600);
const WIDTH = 100 + CARRY_SLACK;
const VIEWS = 4;

const data = generateSynthetic({
  interactions: 150_000,
  nUsers: 5_000,
  nItems: 20_000,
  nCategories: 100,
  seed: 7,
  withMeta: true,
});
const { events } = data;
const started = performance.now();
const { model } = trainModel({ events, ...(data.items ? { items: data.items } : {}) });
const als = model.als;
const vectors = model.content;
if (content ? vectors === null : als === null) {
  throw new Error(content ? "the model has no content vectors" : "the pipeline chose EASE, never carried");
}
console.log(`trained in ${((performance.now() - started) / 1000).toFixed(1)} s`);

const n = events.nItems;
/** The user's query vector: the folded-in factors, or the content profile (as serving builds them). */
const queryOf = (items: number[], weights: number[]): Float32Array => {
  if (!content)
    return foldInUser(als!, { items: Int32Array.from(items), weights: Float32Array.from(weights) });
  const profile = new Float32Array(vectors!.dims);
  for (let h = 0; h < items.length; h++) addContentRow(vectors!, items[h]!, weights[h]!, profile);
  return profile;
};
const scores = (x: Float32Array): Float32Array => {
  const out = new Float32Array(n);
  if (content) {
    for (let i = 0; i < n; i++) out[i] = contentDot(vectors!, i, x);
    return out;
  }
  const { k, itemFactors: Y } = als!;
  for (let i = 0; i < n; i++) {
    let d = 0;
    for (let a = 0; a < k; a++) d += x[a]! * Y[i * k + a]!;
    out[i] = d;
  }
  return out;
};
const best = (s: Float32Array, from: Iterable<number>, excluded: Set<number>, count: number): number[] =>
  [...from]
    .filter((i) => !excluded.has(i))
    .sort((a, b) => s[b]! - s[a]!)
    .slice(0, count);
const everyItem = Array.from({ length: n }, (_, i) => i);

const matrix = buildWeightedMatrix(events, model.weights);
const rng = createRng(11);
const BUCKETS = ["under 10", `10 to ${MIN_CARRIED_HISTORY - 1}`, `${MIN_CARRIED_HISTORY} or more`];
const bucketOf = (length: number) => (length < 10 ? 0 : length < MIN_CARRIED_HISTORY ? 1 : 2);
/** Overlap at 20 and at 40, per history bucket and view. */
const top20 = BUCKETS.map(() => Array.from({ length: VIEWS }, () => [] as number[]));
const top40 = BUCKETS.map(() => Array.from({ length: VIEWS }, () => [] as number[]));
let users = 0;
for (let u = 0; u < events.nUsers && users < maxUsers; u++) {
  const a = matrix.indptr[u]!;
  const b = matrix.indptr[u + 1]!;
  if (b - a < 3) continue;
  users++;
  const items = Array.from(matrix.indices.subarray(a, b));
  const weights = Array.from(matrix.data.subarray(a, b));
  const excluded = new Set(items);
  // Serving checks the history it ranks: this one with its first view.
  const bucket = bucketOf(items.length + 1);
  const fold = () => queryOf(items, weights);
  let carried = best(scores(fold()), everyItem, excluded, WIDTH);
  const viewWeight = model.weights.view;
  for (let view = 0; view < VIEWS; view++) {
    let item: number;
    do {
      item = uniform ? Math.floor(rng() * n) : events.item[Math.floor(rng() * events.item.length)]!;
    } while (excluded.has(item));
    items.push(item);
    weights.push(viewWeight);
    excluded.add(item);
    const s = scores(fold());
    const exact = best(s, everyItem, excluded, 40);
    const rescored = best(s, carried, excluded, 40);
    const within = (count: number) => {
      const truth = new Set(exact.slice(0, count));
      return rescored.slice(0, count).filter((i) => truth.has(i)).length / count;
    };
    top20[bucket]![view]!.push(within(20));
    top40[bucket]![view]!.push(within(40));
    // The next history carries this one's candidates, rescored (the viewed product stays among them).
    carried = [...carried].sort((x, y) => s[y]! - s[x]!);
  }
}
const mean = (v: number[]) => (100 * v.reduce((p, c) => p + c, 0)) / v.length;
console.log(
  `${content ? "content" : "collaborative"} candidates, ${users} users, views drawn ${uniform ? "uniformly" : "by popularity"}, ${WIDTH} items carried`,
);
BUCKETS.forEach((name, bucket) => {
  const rows = top20[bucket]!;
  if (rows[0]!.length === 0) return;
  console.log(`  histories of ${name} products with the first view (${rows[0]!.length} users):`);
  for (let view = 0; view < VIEWS; view++) {
    const worst = Math.min(...rows[view]!);
    const served = bucket === 2 && view < MAX_CARRIED_GENERATIONS ? "" : " (served by a new search)";
    console.log(
      `    after ${view + 1} view${view === 0 ? "" : "s"}: top 20 ${mean(rows[view]!).toFixed(2)}% of an exact ` +
        `scan's, top 40 ${mean(top40[bucket]![view]!).toFixed(2)}%, worst user ${(100 * worst).toFixed(0)}%${served}`,
    );
  }
});
