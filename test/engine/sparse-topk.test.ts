import { describe, expect, test } from "bun:test";
import { createRng } from "../../src/engine/rng";
import { buildCsr, transposeCsr } from "../../src/engine/sparse";
import { topK } from "../../src/engine/topk";

describe("CSR", () => {
  test("sums duplicate coordinates, sorts columns and drops non-positive entries", () => {
    const m = buildCsr(
      Int32Array.from([1, 0, 1, 1, 0]),
      Int32Array.from([2, 1, 0, 2, 1]),
      Float32Array.from([1, 2, 3, -5, 1]),
      2,
      3,
      0,
    );
    expect([...m.indptr]).toEqual([0, 1, 2]);
    expect([...m.indices]).toEqual([1, 0]);
    expect([...m.data]).toEqual([3, 3]);
  });

  test("transpose of transpose is the original", () => {
    const rng = createRng(1);
    const n = 500;
    const m = buildCsr(
      Int32Array.from({ length: n }, () => Math.floor(rng() * 40)),
      Int32Array.from({ length: n }, () => Math.floor(rng() * 30)),
      Float32Array.from({ length: n }, () => rng()),
      40,
      30,
    );
    const tt = transposeCsr(transposeCsr(m));
    expect([...tt.indptr]).toEqual([...m.indptr]);
    expect([...tt.indices]).toEqual([...m.indices]);
    expect([...tt.data]).toEqual([...m.data]);
  });
});

describe("topK", () => {
  test("matches a full sort, honours predicate and exclusions, and leaves scores untouched", () => {
    const rng = createRng(2);
    const scores = Float32Array.from({ length: 1000 }, () => rng());
    const copy = scores.slice();
    const exclude = Int32Array.from([5, 17, 900]);
    const pred = (i: number) => i % 3 !== 0;
    const got = topK(scores, 25, pred, exclude);
    const want = [...scores.keys()]
      .filter((i) => pred(i) && !exclude.includes(i))
      .sort((a, b) => scores[b]! - scores[a]!)
      .slice(0, 25);
    expect([...got]).toEqual(want);
    expect([...scores]).toEqual([...copy]);
  });

  test("returns fewer than k when fewer items qualify and skips -Infinity", () => {
    const s = Float32Array.from([1, Number.NEGATIVE_INFINITY, 3]);
    expect([...topK(s, 5)]).toEqual([2, 0]);
  });
});
