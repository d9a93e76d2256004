import { generateSynthetic } from "../../bench/data/synthetic";
import type { Interactions } from "../../src/engine/types";

/** Small structured data: users prefer a few categories, so collaborative models have something to learn. */
export function smallSynthetic(interactions = 20_000, seed = 3) {
  return generateSynthetic({ interactions, nUsers: 400, nItems: 300, nCategories: 10, seed, withMeta: true });
}

export function interactionsFrom(
  rows: [number, number, number, number?][],
  nUsers: number,
  nItems: number,
): Interactions {
  return {
    user: Int32Array.from(rows, (r) => r[0]),
    item: Int32Array.from(rows, (r) => r[1]),
    type: Uint8Array.from(rows, (r) => r[2]),
    value: Float32Array.from(rows, () => 1),
    ts: Float64Array.from(rows, (r, i) => r[3] ?? 1_700_000_000_000 + i * 1000),
    nUsers,
    nItems,
  };
}
