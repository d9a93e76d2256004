import { describe, expect, test } from "bun:test";
import { alsLoss, alsSweep, DEFAULT_ALS, fitAls } from "../../src/engine/als";
import { easeScores, fitEase } from "../../src/engine/ease";
import { evaluateRanking, heldOutSets, holdoutSplit } from "../../src/engine/evaluate";
import { foldInUser, scoreFactors } from "../../src/engine/fold-in";
import { gramMatrix } from "../../src/engine/linalg";
import { buildCsr } from "../../src/engine/sparse";
import { buildWeightedMatrix, selectEvents } from "../../src/engine/weighting";
import { smallSynthetic } from "./helpers";

const data = smallSynthetic();
const matrix = buildWeightedMatrix(data.events);

describe("implicit ALS", () => {
  test("each iteration lowers the training objective", () => {
    const opts = { factors: 16, regularization: 0.1, alpha: 10 };
    const losses = [1, 2, 4].map((iterations) => {
      const f = fitAls(matrix, { ...opts, iterations });
      return alsLoss(matrix, f, opts.alpha, opts.regularization);
    });
    expect(losses[1]!).toBeLessThan(losses[0]!);
    expect(losses[2]!).toBeLessThan(losses[1]!);
  });

  test("ranks held-out items far above random", () => {
    const split = holdoutSplit(data.events, { seed: 42 });
    const train = buildWeightedMatrix(selectEvents(data.events, split.trainIdx));
    const held = heldOutSets(data.events, split, train);
    const f = fitAls(train, { factors: 16, iterations: 8 });
    const x = new Float32Array(f.k);
    const r = evaluateRanking(train, held, (u, out) => {
      x.set(f.userFactors.subarray(u * f.k, (u + 1) * f.k));
      scoreFactors(x, f.itemFactors, f.k, out);
    });
    // A random ranking hits about 20/300 of the relevant items in the top 20.
    expect(r.recallAt20!).toBeGreaterThan(3 * (20 / 300));
  });

  test("fold-in of a training user reproduces their trained vector", () => {
    const o = { ...DEFAULT_ALS, factors: 16, iterations: 6 };
    const f = fitAls(matrix, o);
    // One exact user sweep makes X the least-squares optimum for the final item factors.
    alsSweep(matrix, f.userFactors, f.itemFactors, f.k, { ...o, cgSteps: 64 });
    const basis = {
      k: f.k,
      itemFactors: f.itemFactors,
      itemGram: gramMatrix(f.itemFactors, matrix.nCols, f.k),
      alpha: o.alpha,
      regularization: o.regularization,
    };
    for (const u of [0, 7, 123]) {
      const a = matrix.indptr[u]!;
      const b = matrix.indptr[u + 1]!;
      const x = foldInUser(basis, {
        items: matrix.indices.subarray(a, b),
        weights: matrix.data.subarray(a, b),
      });
      const trained = f.userFactors.subarray(u * f.k, (u + 1) * f.k);
      let diff = 0;
      let norm = 0;
      for (let t = 0; t < f.k; t++) {
        diff += (x[t]! - trained[t]!) ** 2;
        norm += trained[t]! ** 2;
      }
      expect(Math.sqrt(diff / norm)).toBeLessThan(1e-3);
    }
  });

  test("fold-in takes well under a millisecond at k=64", () => {
    const f = fitAls(matrix, { factors: 64, iterations: 2 });
    const basis = {
      k: 64,
      itemFactors: f.itemFactors,
      itemGram: gramMatrix(f.itemFactors, matrix.nCols, 64),
      alpha: 10,
      regularization: 0.1,
    };
    const history = {
      items: Int32Array.from({ length: 30 }, (_, i) => i * 7),
      weights: new Float32Array(30).fill(1),
    };
    const out = new Float32Array(64);
    for (let i = 0; i < 50; i++) foldInUser(basis, history, out);
    // Median of several batches, so a busy CI machine does not fail the test on one slow batch.
    const perCall: number[] = [];
    for (let batch = 0; batch < 7; batch++) {
      const t = performance.now();
      for (let i = 0; i < 100; i++) foldInUser(basis, history, out);
      perCall.push((performance.now() - t) / 100);
    }
    perCall.sort((a, b) => a - b);
    expect(perCall[3]!).toBeLessThan(1);
    const ts = foldInUser(basis, history, undefined, { native: false });
    for (let t = 0; t < 64; t++)
      expect(Math.abs(ts[t]! - out[t]!)).toBeLessThan(1e-4 * (1 + Math.abs(ts[t]!)));
  });
});

describe("EASE", () => {
  test("matches the closed form on a hand-checkable 3-item case", () => {
    // X = [[1,1,0],[0,1,1]], λ = 1: G + λI = [[2,1,0],[1,3,1],[0,1,2]], whose inverse is
    // (1/8)·[[5,-2,1],[-2,4,-2],[1,-2,5]], so B[i][j] = -P[i][j]/P[j][j].
    const x = buildCsr(
      Int32Array.from([0, 0, 1, 1]),
      Int32Array.from([0, 1, 1, 2]),
      new Float32Array(4).fill(1),
      2,
      3,
    );
    const m = fitEase(x, { lambda: 1 });
    const dense = Array.from({ length: 3 }, () => [0, 0, 0]);
    for (let r = 0; r < 3; r++)
      for (let p = m.b.indptr[r]!; p < m.b.indptr[r + 1]!; p++) dense[r]![m.b.indices[p]!] = m.b.data[p]!;
    const want = [
      [0, 2 / 4, -1 / 5],
      [2 / 5, 0, 2 / 5],
      [-1 / 5, 2 / 4, 0],
    ];
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++) expect(dense[i]![j]!).toBeCloseTo(want[i]![j]!, 6);
    const scores = easeScores(m, [0], [1], new Float32Array(3));
    expect(scores[1]!).toBeCloseTo(0.5, 6);
  });

  test("a pruned B keeps each row's largest entries and ranks like the dense one", () => {
    const dense = fitEase(matrix, { lambda: 50 });
    const pruned = fitEase(matrix, { lambda: 50, keepPerRow: 100 });
    expect(pruned.b.indices.length).toBe(pruned.b.nRows * 100);
    const a = easeScores(dense, [1, 2, 3], [1, 1, 1], new Float32Array(matrix.nCols));
    const b = easeScores(pruned, [1, 2, 3], [1, 1, 1], new Float32Array(matrix.nCols));
    const top = (s: Float32Array) => [...s.keys()].sort((x, y) => s[y]! - s[x]!).slice(0, 5);
    expect(top(b)).toEqual(top(a));
  });
});
