import { describe, expect, test } from "bun:test";
import { alsSweepTs, DEFAULT_ALS } from "../../src/engine/als";
import { gramMatrix, spdInverse, spdInverseTs } from "../../src/engine/linalg";
import { nativeKernels } from "../../src/engine/native";
import { createRng, gaussian } from "../../src/engine/rng";
import { buildCsr } from "../../src/engine/sparse";

function randomSpd(n: number, seed: number): Float64Array {
  const rng = createRng(seed);
  const r = Float64Array.from({ length: n * 8 }, () => rng());
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      let s = i === j ? 3 : 0;
      for (let t = 0; t < 8; t++) s += r[i * 8 + t]! * r[j * 8 + t]!;
      a[i * n + j] = s;
    }
  return a;
}

describe("SPD inverse", () => {
  test("TypeScript inverse times the matrix is the identity", () => {
    const n = 37;
    const a = randomSpd(n, 1);
    const inv = a.slice();
    expect(spdInverseTs(inv, n)).toBe(0);
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let t = 0; t < n; t++) s += a[i * n + t]! * inv[t * n + j]!;
        expect(Math.abs(s - (i === j ? 1 : 0))).toBeLessThan(1e-9);
      }
  });

  test("C kernel and TypeScript agree (sizes spanning several blocks)", () => {
    if (!nativeKernels()) {
      console.warn("no C compiler: native kernel comparison skipped");
      return;
    }
    for (const n of [5, 96, 250]) {
      const a = randomSpd(n, n);
      const c = spdInverse(a.slice(), n);
      const t = spdInverse(a.slice(), n, { native: false });
      let maxErr = 0;
      for (let i = 0; i < n * n; i++) maxErr = Math.max(maxErr, Math.abs(c[i]! - t[i]!));
      expect(maxErr).toBeLessThan(1e-9);
    }
  });

  test("rejects a matrix that is not positive definite", () => {
    expect(() => spdInverse(Float64Array.from([1, 2, 2, 1]), 2)).toThrow(/positive definite/);
  });
});

describe("ALS conjugate-gradient sweep", () => {
  test("C kernel and TypeScript give the same factors", () => {
    const native = nativeKernels();
    if (!native) return;
    const rng = createRng(5);
    const nRows = 300;
    const nCols = 120;
    const k = 16;
    const rows: number[] = [];
    const cols: number[] = [];
    for (let i = 0; i < 3000; i++) {
      rows.push(Math.floor(rng() * nRows));
      cols.push(Math.floor(rng() * nCols));
    }
    const m = buildCsr(
      Int32Array.from(rows),
      Int32Array.from(cols),
      new Float32Array(rows.length).fill(1),
      nRows,
      nCols,
    );
    const Y = Float32Array.from({ length: nCols * k }, () => gaussian(rng) * 0.1);
    const X0 = Float32Array.from({ length: nRows * k }, () => gaussian(rng) * 0.1);
    const gram = gramMatrix(Y, nCols, k);
    const xc = X0.slice();
    const xt = X0.slice();
    native.als_cg_sweep(m.indptr, m.indices, m.data, nRows, xc, Y, gram, k, DEFAULT_ALS.alpha, 0.1, 3);
    alsSweepTs(m, xt, Y, gram, k, DEFAULT_ALS.alpha, 0.1, 3);
    let maxErr = 0;
    let maxAbs = 0;
    for (let i = 0; i < xc.length; i++) {
      maxErr = Math.max(maxErr, Math.abs(xc[i]! - xt[i]!));
      maxAbs = Math.max(maxAbs, Math.abs(xt[i]!));
    }
    expect(maxErr / maxAbs).toBeLessThan(1e-3);
  });
});
