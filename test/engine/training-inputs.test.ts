import { describe, expect, test } from "bun:test";
import { withoutConstantPrice } from "../../src/engine/train";
import { EventType } from "../../src/engine/types";
import { AUTO_MIN_HALF_LIFE_DAYS, eventWeights } from "../../src/engine/weighting";
import { interactionsFrom } from "./helpers";

describe("catalogue metadata before training", () => {
  test("a price every product shares is dropped; the other fields stay", () => {
    const out = withoutConstantPrice([
      { name: "a", price: 1, categoryPath: "x" },
      { name: "b", price: 1 },
      undefined,
      { name: "c" },
    ]);
    expect(out).toEqual([{ name: "a", categoryPath: "x" }, { name: "b" }, undefined, { name: "c" }]);
  });

  test("prices that differ, or a single priced product, are kept as given", () => {
    const varied = [{ price: 1 }, { price: 2 }];
    expect(withoutConstantPrice(varied)).toBe(varied);
    const single = [{ price: 3 }, { name: "n" }];
    expect(withoutConstantPrice(single)).toBe(single);
    expect(withoutConstantPrice(undefined)).toBeUndefined();
  });
});

describe("default recency decay", () => {
  const DAY = 86_400_000;
  const views = (ages: number[]) =>
    interactionsFrom(
      ages.map((days) => [0, 0, EventType.VIEW, (4000 - days) * DAY] as [number, number, number, number]),
      1,
      1,
    );

  test("over a long history the half-life is half the span: the oldest event keeps a quarter", () => {
    const w = eventWeights(views([0, 1000, 2000]));
    expect(w[0]!).toBeCloseTo(1, 5);
    expect(w[1]!).toBeCloseTo(0.5, 4);
    expect(w[2]!).toBeCloseTo(0.25, 4);
  });

  test("a short history decays with the floor half-life; 0 turns decay off", () => {
    const w = eventWeights(views([0, AUTO_MIN_HALF_LIFE_DAYS]));
    expect(w[1]!).toBeCloseTo(w[0]! / 2, 5);
    const off = eventWeights(views([0, 1000]), { halfLifeDays: 0 });
    expect(off[1]!).toBe(off[0]!);
  });
});
