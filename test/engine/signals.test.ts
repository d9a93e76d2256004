import { describe, expect, test } from "bun:test";
import { buildCategoryIndex, findCategory } from "../../src/engine/categories";
import {
  buildContentVectors,
  type ContentVectors,
  contentDot,
  contentRow,
  contentRowsDot,
} from "../../src/engine/content";
import { buildCooccurrence } from "../../src/engine/cooccurrence";
import { computePopularity } from "../../src/engine/popularity";
import { EventType } from "../../src/engine/types";
import { eventWeights } from "../../src/engine/weighting";
import { interactionsFrom } from "./helpers";

/** Two items' cosine from their rows written whole, checked against the sparse product. */
const cos = (v: ContentVectors, a: number, b: number) => {
  const x = contentRow(v, a, new Float32Array(v.dims));
  const y = contentRow(v, b, new Float32Array(v.dims));
  let s = 0;
  for (let t = 0; t < v.dims; t++) s += x[t]! * y[t]!;
  expect(contentRowsDot(v, a, b)).toBeCloseTo(s, 6);
  expect(contentDot(v, b, x)).toBeCloseTo(s, 6);
  return s;
};

describe("event weighting", () => {
  test("purchase > cart > like > click > view, dislikes negative, low ratings small, recency decays", () => {
    const T = EventType;
    const ev = interactionsFrom(
      [
        [0, 0, T.PURCHASE],
        [0, 0, T.CART],
        [0, 0, T.LIKE],
        [0, 0, T.CLICK],
        [0, 0, T.VIEW],
        [0, 0, T.DISLIKE],
      ],
      1,
      1,
    );
    const w = eventWeights(ev);
    for (let i = 1; i < 5; i++) expect(w[i - 1]!).toBeGreaterThan(w[i]!);
    expect(w[5]!).toBeLessThan(0);
    const ratings = interactionsFrom(
      [
        [0, 0, T.RATING],
        [0, 0, T.RATING],
      ],
      1,
      1,
    );
    ratings.value.set([5, 1]);
    const rw = eventWeights(ratings);
    expect(rw[0]!).toBeGreaterThan(3 * rw[1]!);
    const old = interactionsFrom(
      [
        [0, 0, T.VIEW, 0],
        [0, 0, T.VIEW, 30 * 86_400_000],
      ],
      1,
      1,
    );
    const dw = eventWeights(old, { halfLifeDays: 30 });
    expect(dw[0]!).toBeCloseTo(dw[1]! / 2, 5);
  });
});

describe("content vectors", () => {
  test("items sharing category and brand are closer than unrelated items; vectors are unit length", () => {
    const items = [
      { name: "Galaxy phone 128GB", categoryPath: "electronics/phones", brand: "samsung", price: 700 },
      { name: "Galaxy phone 256GB", categoryPath: "electronics/phones", brand: "samsung", price: 800 },
      { name: "Cotton shirt", categoryPath: "apparel/shirts", brand: "levis", price: 30 },
      {
        name: "USB cable",
        categoryPath: "electronics/accessories",
        brand: "anker",
        attributes: { length: 1, braided: true },
      },
      {},
    ];
    const v = buildContentVectors(items, items.length, { dims: 256 });
    expect(cos(v, 0, 0)).toBeCloseTo(1, 5);
    expect(cos(v, 0, 1)).toBeGreaterThan(cos(v, 0, 2));
    expect(cos(v, 0, 3)).toBeGreaterThan(cos(v, 0, 2));
    expect(cos(v, 4, 4)).toBe(0);
    // Rows hold their non-zeros only, in ascending dimension order.
    expect(v.indptr[5]! - v.indptr[4]!).toBe(0);
    for (let i = 0; i < 4; i++) {
      for (let p = v.indptr[i]! + 1; p < v.indptr[i + 1]!; p++)
        expect(v.indices[p]!).toBeGreaterThan(v.indices[p - 1]!);
      for (let p = v.indptr[i]!; p < v.indptr[i + 1]!; p++) expect(v.data[p]).not.toBe(0);
    }
  });
});

describe("co-occurrence", () => {
  test("finds items carted and bought together, not items only seen apart", () => {
    const T = EventType;
    const rows: [number, number, number, number][] = [];
    for (let u = 0; u < 20; u++) {
      rows.push(
        [u, 1, T.CART, u * 1e9],
        [u, 2, T.PURCHASE, u * 1e9 + 60_000],
        [u, 3 + (u % 5), T.CART, u * 1e9 + 10 * 86_400_000],
      );
    }
    const co = buildCooccurrence(interactionsFrom(rows, 20, 10));
    expect(co.indices[co.indptr[1]!]).toBe(2);
    expect(co.indices[co.indptr[2]!]).toBe(1);
    expect(co.indptr[4]! - co.indptr[3]!).toBe(0);
  });
});

describe("popularity", () => {
  test("per-category lists include descendants and trending favours recent growth", () => {
    const items = [{ categoryPath: "a/x" }, { categoryPath: "a/y" }, { categoryPath: "b" }];
    const cats = buildCategoryIndex(items, 3);
    const day = 86_400_000;
    const rows: [number, number, number, number][] = [];
    for (let i = 0; i < 20; i++) rows.push([i, 0, 0, 10 * day - i * 3600_000]);
    for (let i = 0; i < 10; i++) rows.push([i, 1, 0, 20 * day]);
    for (let i = 0; i < 5; i++) rows.push([i, 2, 0, 20 * day]);
    const ev = interactionsFrom(rows, 20, 3);
    const pop = computePopularity(ev, eventWeights(ev), cats, { halfLifeDays: 0 });
    const a = findCategory(cats, "a");
    const row = [
      ...pop.byCategory.indices.subarray(pop.byCategory.indptr[a]!, pop.byCategory.indptr[a + 1]!),
    ];
    expect(row).toEqual([0, 1]);
    expect(pop.trending[1]!).toBeGreaterThan(pop.trending[0]!);
  });
});
