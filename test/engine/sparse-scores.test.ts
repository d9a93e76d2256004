import { describe, expect, test } from "bun:test";
import { fromNeighbours } from "../../src/engine/ranking/sparse-scores";
import { createRng } from "../../src/engine/rng";

/** The sums as plain Maps build them: each item's scores added in list order, the first best anchor kept. */
function reference(anchors: number[], lists: Map<number, { items: Int32Array; scores: Float32Array }>) {
  const score = new Map<number, number>();
  const best = new Map<number, number>();
  const anchor = new Map<number, number>();
  for (const a of anchors) {
    const list = lists.get(a)!;
    for (let j = 0; j < list.items.length; j++) {
      const item = list.items[j]!;
      const s = list.scores[j]!;
      if (!(s > 0)) continue;
      score.set(item, (score.get(item) ?? 0) + s);
      if (s > (best.get(item) ?? 0)) {
        best.set(item, s);
        anchor.set(item, a);
      }
    }
  }
  return { score, anchor };
}

describe("sparse neighbour lists summed per item", () => {
  test("sum each item's positive scores, keep its best anchor, and list the items as first met", () => {
    const rng = createRng(3);
    for (let round = 0; round < 200; round++) {
      const catalogue = 1 + Math.floor(rng() * (round % 2 ? 50 : 20_000));
      const anchors = Array.from({ length: 1 + Math.floor(rng() * 6) }, () => Math.floor(rng() * catalogue));
      const lists = new Map<number, { items: Int32Array; scores: Float32Array }>();
      for (const a of anchors) {
        const length = Math.floor(rng() * 250);
        lists.set(a, {
          items: Int32Array.from({ length }, () => Math.floor(rng() * catalogue)),
          // Ties, zeros and negatives among them: only positive scores count.
          scores: Float32Array.from({ length }, () => (rng() < 0.1 ? -rng() : rng() < 0.1 ? 0.5 : rng())),
        });
      }
      const expected = reference(anchors, lists);
      const sparse = fromNeighbours(anchors, (a) => lists.get(a)!);
      if (expected.score.size === 0) {
        expect(sparse).toBeNull();
        continue;
      }
      expect(sparse).not.toBeNull();
      expect([...sparse!.items()]).toEqual([...expected.score.keys()]);
      expect(sparse!.size).toBe(expected.score.size);
      for (let item = 0; item < Math.min(catalogue, 500); item++) {
        expect(sparse!.score(item)).toBe(expected.score.get(item) ?? 0);
        expect(sparse!.anchor(item)).toBe(expected.anchor.get(item) ?? -1);
      }
      for (const [item, value] of expected.score) expect(sparse!.score(item)).toBe(value);
    }
  });

  test("anchors without lists, or with nothing positive, give nothing", () => {
    expect(fromNeighbours([], () => ({ items: new Int32Array(0), scores: new Float32Array(0) }))).toBeNull();
    expect(
      fromNeighbours([1, 2], () => ({ items: Int32Array.of(3, 4), scores: Float32Array.of(0, -1) })),
    ).toBeNull();
  });
});
