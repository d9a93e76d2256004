import { describe, expect, test } from "bun:test";
import { easeGram } from "../../src/engine/ease";
import { EventType } from "../../src/engine/types";
import { buildWeightedMatrix } from "../../src/engine/weighting";
import { interactionsFrom } from "./helpers";

describe("EASE user weighting", () => {
  // User 0 has 4 items, users 1 and 2 one pair each: items 0 and 1 co-occur for users 0 and 1.
  const V = EventType.VIEW;
  const rows: [number, number, number][] = [
    [0, 0, V],
    [0, 1, V],
    [0, 2, V],
    [0, 3, V],
    [1, 0, V],
    [1, 1, V],
    [2, 2, V],
    [2, 3, V],
  ];
  const matrix = buildWeightedMatrix(interactionsFrom(rows, 3, 4));
  const items = Int32Array.from([0, 1, 2, 3]);

  test("exponent 0 counts every user alike: the plain co-occurrence counts", () => {
    const g = easeGram(matrix, items, "binary", 0);
    expect(g[0 * 4 + 1]).toBe(2);
    expect(g[2 * 4 + 3]).toBe(2);
    expect(g[0 * 4 + 0]).toBe(2);
  });

  test("above 0 a long history counts less than a short one, the mean user weight staying 1", () => {
    const g = easeGram(matrix, items, "binary", 0.5);
    // Weights 4^-0.5 = 0.5, 2^-0.5, 2^-0.5, scaled so their mean is 1.
    const raw = [0.5, Math.SQRT1_2, Math.SQRT1_2];
    const scale = 3 / (raw[0]! + raw[1]! + raw[2]!);
    expect(g[0 * 4 + 1]!).toBeCloseTo((raw[0]! + raw[1]!) * scale, 12);
    expect(g[2 * 4 + 3]!).toBeCloseTo((raw[0]! + raw[2]!) * scale, 12);
    expect(g[0 * 4 + 2]!).toBeCloseTo(raw[0]! * scale, 12);
    expect(g[0 * 4 + 2]!).toBeLessThan(easeGram(matrix, items, "binary", 0)[0 * 4 + 2]!);
  });
});
