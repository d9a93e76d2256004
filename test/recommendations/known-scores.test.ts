import { describe, expect, test } from "bun:test";
import { KnownScores } from "../../src/modules/recommendations/serving/known-scores";

const found = (items: number[], scores: number[]) => ({
  items: Int32Array.from(items),
  scores: Float32Array.from(scores),
});

describe("scores remembered from an HNSW search", () => {
  test("an item the search returned answers its score (scaled); any other item answers NaN", () => {
    const known = new KnownScores();
    expect(known.get(3)).toBeNaN();
    known.remember(found([42, 7, 19, 3], [0.9, 0.8, 0.5, 0.25]), 2);
    expect(known.get(42)).toBeCloseTo(1.8, 6);
    expect(known.get(7)).toBeCloseTo(1.6, 6);
    expect(known.get(19)).toBeCloseTo(1, 6);
    expect(known.get(3)).toBeCloseTo(0.5, 6);
    for (const other of [0, 4, 20, 43, -1]) expect(known.get(other)).toBeNaN();
  });

  test("the widest search of the query is kept; a narrower one later changes nothing", () => {
    const known = new KnownScores();
    known.remember(found([5, 1], [0.7, 0.6]));
    known.remember(found([5, 1, 9, 2], [0.7, 0.6, 0.4, 0.1]));
    known.remember(found([5], [0.7]));
    expect(known.get(9)).toBeCloseTo(0.4, 6);
    expect(known.get(2)).toBeCloseTo(0.1, 6);
    expect(known.get(1)).toBeCloseTo(0.6, 6);
  });

  test("a wide search answers every one of its items and nothing else", () => {
    const known = new KnownScores();
    const items = Array.from({ length: 700 }, (_, j) => (j * 7919) % 100_003);
    known.remember(
      found(
        items,
        items.map((_, j) => 1 - j / 1000),
      ),
    );
    for (const [j, item] of items.entries()) expect(known.get(item)).toBeCloseTo(1 - j / 1000, 5);
    const kept = new Set(items);
    for (let other = 0; other < 5000; other++) if (!kept.has(other)) expect(known.get(other)).toBeNaN();
  });
});
