/**
 * Score components over the whole catalogue, each scaled to [0, 1] over the eligible items, and the weights
 * that blend them per strategy, goal and preset.
 */

import type { UserHistory } from "./history-cache";
import type { ItemTable } from "./item-table";
import { categoryMatcher } from "./item-table";
import type { DenseHistory, ModelSignals } from "./signals";

export type Component = "collab" | "content" | "trend" | "similar" | "complementary" | "preference";
export const COMPONENTS: readonly Component[] = [
  "collab",
  "content",
  "trend",
  "similar",
  "complementary",
  "preference",
];
export type Weights = Partial<Record<Component, number>>;

export interface ComponentScores {
  values: Partial<Record<Component, Float32Array>>;
  /** For `similar` and `complementary`: the anchor item that produced each item's score (-1 = none). */
  anchors: Partial<Record<"similar" | "complementary", Int32Array>>;
}

/** Interaction weight by type for the user's vector: a purchase says more than a view; a dislike counts against. */
const TYPE_WEIGHT: Record<string, number> = {
  PURCHASE: 5,
  CART: 3,
  LIKE: 3,
  CLICK: 1.5,
  VIEW: 1,
  SEARCH: 0.5,
  DISLIKE: -5,
};

export interface TypedHistory extends DenseHistory {
  /** Interaction type per entry, aligned with `items`. */
  types: string[];
}

export function denseHistory(table: ItemTable, history: UserHistory): TypedHistory {
  const items: number[] = [];
  const weights: number[] = [];
  const types: string[] = [];
  for (const event of history.events) {
    const index = table.indexOf.get(event.externalProductId);
    if (index === undefined) continue;
    items.push(index);
    types.push(event.type);
    weights.push(event.type === "RATING" ? Math.min(event.value, 5) / 5 : (TYPE_WEIGHT[event.type] ?? 1));
  }
  return { items: Int32Array.from(items), weights: Float32Array.from(weights), types };
}

/** Scales `raw` over eligible items to [0, 1] into a new array (0 for ineligible or non-finite entries). */
export function scaled(
  raw: ArrayLike<number>,
  eligible: Uint8Array,
  transform?: (v: number) => number,
): Float32Array {
  const n = eligible.length;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    if (eligible[i] !== 1) continue;
    const v = transform ? transform(raw[i]!) : raw[i]!;
    if (!Number.isFinite(v)) continue;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const out = new Float32Array(n);
  if (!(max > 0)) return out;
  // Non-negative signals scale by their maximum, so near-equal values stay near-equal; signed ones
  // (dot products) need the shift.
  const floor = Math.min(min, 0);
  const span = max - floor;
  for (let i = 0; i < n; i++) {
    if (eligible[i] !== 1) continue;
    const v = transform ? transform(raw[i]!) : raw[i]!;
    out[i] = Number.isFinite(v) ? Math.max(0, (v - floor) / span) : 0;
  }
  return out;
}

/** Sparse neighbour lists (per anchor) folded into a dense score, remembering the best anchor per item. */
export function fromNeighbours(
  n: number,
  anchors: readonly number[],
  neighbours: (anchor: number) => { items: Int32Array; scores: Float32Array },
): { score: Float32Array; anchor: Int32Array } | null {
  const score = new Float32Array(n);
  const anchor = new Int32Array(n).fill(-1);
  let any = false;
  for (const a of anchors) {
    const list = neighbours(a);
    for (let j = 0; j < list.items.length; j++) {
      const item = list.items[j]!;
      const s = list.scores[j]!;
      if (!(s > 0)) continue;
      any = true;
      // Several anchors pointing at one item add up: "bought with two things in your cart" beats one.
      if (anchor[item] === -1 || s > score[item]! - s) anchor[item] = a;
      score[item]! += s;
    }
  }
  return any ? { score, anchor } : null;
}

/** Content-free stand-in for similarity when there is no model: same category counts most, brand next. */
export function catalogueSimilarity(table: ItemTable, source: number): Float32Array {
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
function catalogueProfile(table: ItemTable, dense: DenseHistory): Float32Array {
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

/** 1 where the item fits the user's stated preferences (categories and price range), else 0. */
export function preferenceMatch(table: ItemTable, history: UserHistory): Float32Array | null {
  const hasCategories = history.preferredCategories.length > 0;
  const min = history.priceRangeMin;
  const max = history.priceRangeMax;
  if (!hasCategories && min === null && max === null) return null;
  const inPreferred = categoryMatcher(history.preferredCategories);
  const out = new Float32Array(table.size);
  for (let i = 0; i < table.size; i++) {
    const price = table.prices[i]!;
    const fits =
      (!hasCategories || inPreferred(table.categories[i]!)) &&
      (min === null || price >= min) &&
      (max === null || price <= max);
    out[i] = fits ? 1 : 0;
  }
  return out;
}

export interface ComponentInputs {
  table: ItemTable;
  signals: ModelSignals | null;
  history: UserHistory;
  dense: DenseHistory;
  eligible: Uint8Array;
  weights: Weights;
  sourceItems: readonly number[];
  complementAnchors: readonly number[];
}

/** Computes only the components the weights ask for. */
export function computeComponents(input: ComponentInputs): ComponentScores {
  const { table, signals, eligible, weights, dense } = input;
  const values: ComponentScores["values"] = {};
  const anchors: ComponentScores["anchors"] = {};
  const hasHistory = dense.items.length > 0;
  if (weights.collab && signals && hasHistory) {
    const raw = signals.collaborative(dense);
    if (raw) values.collab = scaled(raw, eligible);
  }
  if (weights.content && hasHistory) {
    const raw = signals?.content(dense) ?? catalogueProfile(table, dense);
    values.content = scaled(raw, eligible);
  }
  if (weights.trend) values.trend = scaled(table.popularity, eligible, (v) => Math.log1p(Math.max(0, v)));
  if (weights.similar && input.sourceItems.length > 0) {
    const neighbours = signals
      ? fromNeighbours(table.size, input.sourceItems, (a) => signals.similar(a, 200))
      : null;
    if (neighbours) {
      values.similar = scaled(neighbours.score, eligible);
      anchors.similar = neighbours.anchor;
    } else {
      const score = new Float32Array(table.size);
      const anchor = new Int32Array(table.size).fill(-1);
      for (const source of input.sourceItems) {
        const sim = catalogueSimilarity(table, source);
        for (let i = 0; i < table.size; i++) {
          if (sim[i]! > score[i]!) {
            score[i] = sim[i]!;
            anchor[i] = source;
          }
        }
      }
      values.similar = scaled(score, eligible);
      anchors.similar = anchor;
    }
  }
  if (weights.complementary && signals && input.complementAnchors.length > 0) {
    const neighbours = fromNeighbours(table.size, input.complementAnchors, (a) =>
      signals.complementary(a, 100),
    );
    if (neighbours) {
      values.complementary = scaled(neighbours.score, eligible);
      anchors.complementary = neighbours.anchor;
    }
  }
  if (weights.preference) {
    const match = preferenceMatch(table, input.history);
    if (match) values.preference = match;
  }
  return { values, anchors };
}
