/**
 * The score components of one ranking, computed over the candidates only, each scaled to [0, 1]; blend.ts
 * weighs them together. Pure: plain columns in (RankCatalogue, RankHistory, the model's SignalQuery), typed
 * arrays out.
 */

import { DEFAULT_WEIGHTS, type WeightConfig } from "../weighting";
import { interactionWeight, type RankComponent, type RankWeights, scaleToUnit, trendValue } from "./blend";
import { categoryMatcher, type RankCatalogue, type RankHistory } from "./catalogue";
import type { DenseHistory, SignalQuery } from "./signals";
import type { SparseScores } from "./sparse-scores";

export interface ComponentScores {
  values: Partial<Record<RankComponent, Float32Array>>;
  /** For `similar` and `complementary`: the anchor item that produced each item's score (-1 = none). */
  anchors: Partial<Record<"similar" | "complementary", Int32Array>>;
}

const DAY_MS = 86_400_000;

export interface TypedHistory extends DenseHistory {
  /** The interaction type that weighs most per entry, aligned with `items`. */
  types: string[];
}

/**
 * Which items the history being made has met, and at which entry: a scratch mark per item of the table,
 * stamped afresh for each history instead of cleared, so a history costs a read and a write per event (with a
 * Map per history, a 30-event history took 5.1–7.0 µs instead of 3.5–3.8 µs in a scratch loop).
 */
const seen = { stamp: 0, marks: new Int32Array(0), entry: new Int32Array(0) };

/** A fresh stamp for a history over items below `items`. */
function newStamp(items: number): number {
  if (seen.marks.length < items) holdItems(items);
  if (seen.stamp === 0x7fffffff) {
    seen.marks.fill(0);
    seen.stamp = 0;
  }
  return ++seen.stamp;
}

/** Room for marks of items below `items` (at least twice the room there was), keeping those made. */
function holdItems(items: number): void {
  const room = Math.max(items, 2 * seen.marks.length);
  const marks = new Int32Array(room);
  const entry = new Int32Array(room);
  marks.set(seen.marks);
  entry.set(seen.entry);
  seen.marks = marks;
  seen.entry = entry;
}

/**
 * The history as the model reads it: one entry per distinct product (newest first), its weight the sum of
 * its interactions' weights by the table training weighs its matrix with, as a training row is; products
 * of older interactions follow.
 */
export function denseHistory(
  table: Pick<RankCatalogue, "indexOf">,
  history: Pick<RankHistory, "events" | "interacted">,
  config: Readonly<WeightConfig> = DEFAULT_WEIGHTS,
): TypedHistory {
  const { events, interacted } = history;
  const stamp = newStamp(table.indexOf.size);
  const capacity = events.length + interacted.length;
  const items = new Int32Array(capacity);
  // Summed in doubles, as the weights always were, and rounded to floats once at the end.
  const sums = new Float64Array(capacity);
  const strongest = new Float64Array(events.length);
  const types: string[] = [];
  let count = 0;
  // Training decays each event by its age from the newest one; measured from the user's newest event
  // instead, every weight of the user differs by one common factor, which no ranking signal sees.
  const halfLife = config.halfLifeDays;
  const perMs =
    typeof halfLife === "number" && halfLife > 0 && Number.isFinite(halfLife) ? 1 / (halfLife * DAY_MS) : 0;
  const newest = events[0]?.occurredAt ?? 0;
  for (let e = 0; e < events.length; e++) {
    const event = events[e]!;
    const index = table.indexOf.get(event.externalProductId);
    if (index === undefined) continue;
    if (index >= seen.marks.length) holdItems(index + 1);
    const { marks, entry } = seen;
    let w = interactionWeight(event.type, event.value, config);
    if (perMs > 0) w *= 2 ** (-(newest - event.occurredAt) * perMs);
    if (marks[index] !== stamp) {
      marks[index] = stamp;
      entry[index] = count;
      items[count] = index;
      sums[count] = w;
      strongest[count] = Math.abs(w);
      types.push(event.type);
      count++;
    } else {
      const at = entry[index]!;
      sums[at]! += w;
      if (Math.abs(w) > strongest[at]!) {
        strongest[at] = Math.abs(w);
        types[at] = event.type;
      }
    }
  }
  // Products interacted with before the latest events still say what the user likes (a training row holds
  // them all): they join at the weight of the weakest positive entry, as the oldest evidence there is.
  if (interacted.length > count) {
    let floor = Number.POSITIVE_INFINITY;
    for (let i = 0; i < count; i++) {
      const w = sums[i]!;
      if (w > 0 && w < floor) floor = w;
    }
    if (!Number.isFinite(floor)) floor = interactionWeight("VIEW", 1, config);
    for (let p = 0; p < interacted.length; p++) {
      const index = table.indexOf.get(interacted[p]!);
      if (index === undefined) continue;
      if (index >= seen.marks.length) holdItems(index + 1);
      if (seen.marks[index] === stamp) continue;
      seen.marks[index] = stamp;
      items[count] = index;
      sums[count] = floor;
      types.push("VIEW");
      count++;
    }
  }
  const weights = new Float32Array(count);
  for (let i = 0; i < count; i++) weights[i] = sums[i]!;
  return { items: count === capacity ? items : items.slice(0, count), weights, types };
}

const logPopularities = new WeakMap<Float32Array, Float32Array>();

/** What the trend component ranks by (blend.ts), worked out once per array. */
function logPopularity(popularity: Float32Array): Float32Array {
  let out = logPopularities.get(popularity);
  if (out === undefined) {
    out = new Float32Array(popularity.length);
    for (let i = 0; i < popularity.length; i++) out[i] = trendValue(popularity[i]!);
    logPopularities.set(popularity, out);
  }
  return out;
}

/** Content-free stand-in for similarity when there is no model: same category counts most, brand next. */
export function catalogueSimilarity(table: RankCatalogue, source: number): Float32Array {
  const n = table.size;
  const out = new Float32Array(n);
  const category = table.categories[source]!;
  const parent = category.includes("/") ? category.slice(0, category.lastIndexOf("/")) : null;
  const inParent = parent === null ? null : categoryMatcher([parent]);
  const brand = table.brands[source];
  for (let i = 0; i < n; i++) {
    let s = 0;
    // Same category outranks same brand elsewhere in the parent category (0.6 > 0.2 + 0.3).
    if (table.categories[i] === category) s += 0.6;
    else if (inParent?.(table.categories[i]!)) s += 0.2;
    if (brand !== null && brand !== undefined && table.brands[i] === brand) s += 0.3;
    out[i] = s;
  }
  out[source] = 0;
  return out;
}

/** Without content vectors: closeness in category and brand to the user's latest positive interactions. */
function catalogueProfile(table: RankCatalogue, dense: DenseHistory): Float32Array {
  const out = new Float32Array(table.size);
  let used = 0;
  for (let h = 0; h < dense.items.length && used < 10; h++) {
    if (!(dense.weights[h]! > 0)) continue;
    used++;
    const sim = catalogueSimilarity(table, dense.items[h]!);
    const w = dense.weights[h]!;
    for (let i = 0; i < table.size; i++) out[i]! += w * sim[i]!;
  }
  return out;
}

/** Whether an item fits the user's stated preferences (categories and price range); null without any. */
export function preferenceMatcher(
  history: Pick<RankHistory, "preferredCategories" | "priceRangeMin" | "priceRangeMax">,
): ((table: RankCatalogue, item: number) => boolean) | null {
  const hasCategories = history.preferredCategories.length > 0;
  const min = history.priceRangeMin;
  const max = history.priceRangeMax;
  if (!hasCategories && min === null && max === null) return null;
  const inPreferred = categoryMatcher(history.preferredCategories);
  return (table, i) => {
    const price = table.prices[i]!;
    return (
      (!hasCategories || inPreferred(table.categories[i]!)) &&
      (min === null || price >= min) &&
      (max === null || price <= max)
    );
  };
}

export interface ComponentInputs {
  table: RankCatalogue;
  /** What the trend component ranks by: the table's popularity, or a time-of-day variant of it. */
  popularity: Float32Array;
  history: RankHistory;
  dense: DenseHistory;
  /** The items to score (eligible ones only); every output array is aligned with it. */
  candidates: Int32Array;
  weights: RankWeights;
  collab: SignalQuery | null;
  content: SignalQuery | null;
  /** Similar to the source items: sparse from the model, or whole-catalogue closeness without one. */
  similar: SparseScores | { dense: Float32Array; anchor: Int32Array } | null;
  complementary: SparseScores | null;
}

/** Computes, over the candidates only, the components the weights ask for. */
export function computeComponents(input: ComponentInputs): ComponentScores {
  const { table, weights, dense, candidates } = input;
  const m = candidates.length;
  const values: ComponentScores["values"] = {};
  const anchors: ComponentScores["anchors"] = {};
  const hasHistory = dense.items.length > 0;
  const each = (f: (item: number) => number) => {
    const out = new Float32Array(m);
    for (let p = 0; p < m; p++) out[p] = f(candidates[p]!);
    return out;
  };
  const scored = (query: SignalQuery) => {
    if (query.scoreInto === undefined) return each(query.score);
    const out = new Float32Array(m);
    query.scoreInto(candidates, out);
    return out;
  };
  if (weights.collab && input.collab) values.collab = scaleToUnit(scored(input.collab));
  if (weights.content && hasHistory) {
    if (input.content) values.content = scaleToUnit(scored(input.content));
    else {
      const profile = catalogueProfile(table, dense);
      values.content = scaleToUnit(each((i) => profile[i]!));
    }
  }
  if (weights.trend) {
    const trend = logPopularity(input.popularity);
    values.trend = scaleToUnit(each((i) => trend[i]!));
  }
  const sparse = (scores: SparseScores | { dense: Float32Array; anchor: Int32Array }) => {
    if ("dense" in scores) {
      return {
        value: each((i) => scores.dense[i]!),
        anchor: Int32Array.from(candidates, (i) => scores.anchor[i]!),
      };
    }
    const anchor = new Int32Array(m);
    for (let p = 0; p < m; p++) anchor[p] = scores.anchor(candidates[p]!);
    return { value: each((i) => scores.score(i)), anchor };
  };
  if (weights.similar && input.similar) {
    const s = sparse(input.similar);
    values.similar = scaleToUnit(s.value);
    anchors.similar = s.anchor;
  }
  if (weights.complementary && input.complementary) {
    const s = sparse(input.complementary);
    values.complementary = scaleToUnit(s.value);
    anchors.complementary = s.anchor;
  }
  if (weights.preference) {
    const match = preferenceMatcher(input.history);
    if (match) values.preference = each((i) => (match(table, i) ? 1 : 0));
  }
  return { values, anchors };
}

/** Whole-catalogue similarity to the source items without a model: best source per item. */
export function catalogueSimilar(
  table: RankCatalogue,
  sources: readonly number[],
): { dense: Float32Array; anchor: Int32Array } {
  const score = new Float32Array(table.size);
  const anchor = new Int32Array(table.size).fill(-1);
  for (const source of sources) {
    const sim = catalogueSimilarity(table, source);
    for (let i = 0; i < table.size; i++) {
      if (sim[i]! > score[i]!) {
        score[i] = sim[i]!;
        anchor[i] = source;
      }
    }
  }
  return { dense: score, anchor };
}
