import { solveSpdInPlace } from "./linalg";
import { nativeKernels } from "./native";
import type { History } from "./types";

/** What fold-in needs from a trained ALS model. */
export interface FoldInBasis {
  k: number;
  itemFactors: Float32Array;
  /** YᵀY of the item factors (k×k, double), precomputed at training time. */
  itemGram: Float64Array;
  alpha: number;
  regularization: number;
}

interface Scratch {
  a: Float64Array;
  b: Float64Array;
  x: Float64Array;
}
const scratchByK = new Map<number, Scratch>();

function scratch(k: number): Scratch {
  let s = scratchByK.get(k);
  if (!s) {
    s = { a: new Float64Array(k * k), b: new Float64Array(k), x: new Float64Array(k) };
    scratchByK.set(k, s);
  }
  return s;
}

/**
 * Solves a user's factor vector from a short history with the same normal equations ALS uses for trained
 * users: (YᵀY + λI + Σ c_i y_i y_iᵀ) x = Σ (1 + c_i) y_i with c_i = alpha·w_i. One k×k Cholesky solve.
 * Non-positive weights (dislikes) carry no positive evidence, so they are left out of the solve.
 */
export function foldInUser(
  basis: FoldInBasis,
  history: History,
  out?: Float32Array,
  opts: { native?: boolean } = {},
): Float32Array {
  const { k, itemFactors: Y, itemGram, alpha, regularization } = basis;
  const x = out ?? new Float32Array(k);
  const native = opts.native === false || history.items.length === 0 ? null : nativeKernels();
  if (native) {
    const rc = native.fold_in_f32(
      Y,
      Y.length / k,
      history.items,
      history.weights,
      history.items.length,
      itemGram,
      k,
      alpha,
      regularization,
      x,
    );
    if (rc !== 0) x.fill(0);
    return x;
  }
  const s = scratch(k);
  const a = s.a;
  a.set(itemGram);
  for (let t = 0; t < k; t++) a[t * k + t]! += regularization;
  s.b.fill(0);
  const nItems = Y.length / k;
  for (let h = 0; h < history.items.length; h++) {
    const item = history.items[h]!;
    const w = history.weights[h]!;
    if (!(w > 0) || item < 0 || item >= nItems) continue;
    const c = alpha * w;
    const yo = item * k;
    for (let i = 0; i < k; i++) {
      const yi = Y[yo + i]!;
      s.b[i]! += (1 + c) * yi;
      const cyi = c * yi;
      const ro = i * k;
      // Lower triangle is all Cholesky reads.
      for (let j = 0; j <= i; j++) a[ro + j]! += cyi * Y[yo + j]!;
    }
  }
  if (!solveSpdInPlace(a, s.b, s.x, k)) {
    x.fill(0);
    return x;
  }
  for (let i = 0; i < k; i++) x[i] = s.x[i]!;
  return x;
}

/** scores[i] = x · y_i for every item. */
export function scoreFactors(
  x: Float32Array,
  itemFactors: Float32Array,
  k: number,
  out: Float32Array,
): Float32Array {
  const n = out.length;
  for (let i = 0; i < n; i++) {
    const o = i * k;
    let s = 0;
    for (let t = 0; t < k; t++) s += x[t]! * itemFactors[o + t]!;
    out[i] = s;
  }
  return out;
}
