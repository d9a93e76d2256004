import { nativeKernels } from "./native";

/**
 * In-place lower Cholesky of a row-major SPD matrix (upper triangle left unspecified).
 * Returns 0 or 1 + index of the first non-positive pivot.
 */
export function choleskyTs(a: Float64Array, n: number): number {
  for (let j = 0; j < n; j++) {
    const rj = j * n;
    let d = a[rj + j]!;
    for (let t = 0; t < j; t++) d -= a[rj + t]! * a[rj + t]!;
    if (!(d > 0)) return j + 1;
    d = Math.sqrt(d);
    a[rj + j] = d;
    const inv = 1 / d;
    for (let i = j + 1; i < n; i++) {
      const ri = i * n;
      // Four accumulators break the serial add chain; this loop dominates small solves (fold-in).
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let t = 0;
      for (; t + 4 <= j; t += 4) {
        s0 += a[ri + t]! * a[rj + t]!;
        s1 += a[ri + t + 1]! * a[rj + t + 1]!;
        s2 += a[ri + t + 2]! * a[rj + t + 2]!;
        s3 += a[ri + t + 3]! * a[rj + t + 3]!;
      }
      for (; t < j; t++) s0 += a[ri + t]! * a[rj + t]!;
      a[ri + j] = (a[ri + j]! - (s0 + s1 + (s2 + s3))) * inv;
    }
  }
  return 0;
}

/** TypeScript SPD inverse (Cholesky, then X = L⁻¹ and P = XᵀX), in place, full symmetric result. */
export function spdInverseTs(a: Float64Array, n: number): number {
  const rc = choleskyTs(a, n);
  if (rc !== 0) return rc;
  // X = L⁻¹ row by row; row i of X has non-zeros in columns 0..i.
  const x = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    const ri = i * n;
    x[ri + i] = 1;
    for (let t = 0; t < i; t++) {
      const l = a[ri + t]!;
      if (l === 0) continue;
      const rt = t * n;
      for (let j = 0; j <= t; j++) x[ri + j]! -= l * x[rt + j]!;
    }
    const inv = 1 / a[ri + i]!;
    for (let j = 0; j <= i; j++) x[ri + j]! *= inv;
  }
  a.fill(0);
  // P = XᵀX accumulated row by row of X: row t contributes x_t x_tᵀ over columns 0..t (lower part only).
  for (let t = 0; t < n; t++) {
    const rt = t * n;
    for (let i = 0; i <= t; i++) {
      const xi = x[rt + i]!;
      if (xi === 0) continue;
      const ri = i * n;
      for (let j = 0; j <= i; j++) a[ri + j]! += xi * x[rt + j]!;
    }
  }
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) a[i * n + j] = a[j * n + i]!;
  return 0;
}

/** SPD inverse in place, using the C kernel when available. Throws if the matrix is not positive definite. */
export function spdInverse(a: Float64Array, n: number, opts: { native?: boolean } = {}): Float64Array {
  if (a.length !== n * n) throw new Error(`spdInverse: expected ${n * n} values, got ${a.length}`);
  const k = opts.native === false ? null : nativeKernels();
  const rc = k ? k.spd_inverse_f64(a, n) : spdInverseTs(a, n);
  if (rc !== 0) throw new Error(`spdInverse: matrix is not positive definite (pivot ${rc - 1})`);
  return a;
}

/**
 * Solves A x = b for a small SPD A (k×k, row-major) via Cholesky into caller-provided scratch, so the
 * request-time fold-in allocates nothing. `a` is overwritten by its factor; the result is written to `x`.
 */
export function solveSpdInPlace(a: Float64Array, b: Float64Array, x: Float64Array, k: number): boolean {
  if (choleskyTs(a, k) !== 0) return false;
  for (let i = 0; i < k; i++) {
    let s = b[i]!;
    const ri = i * k;
    for (let t = 0; t < i; t++) s -= a[ri + t]! * x[t]!;
    x[i] = s / a[ri + i]!;
  }
  for (let i = k - 1; i >= 0; i--) {
    let s = x[i]!;
    for (let t = i + 1; t < k; t++) s -= a[t * k + i]! * x[t]!;
    x[i] = s / a[i * k + i]!;
  }
  return true;
}

/** Gram matrix FᵀF (k×k, double) of an n×k float factor matrix. */
export function gramMatrix(f: Float32Array, n: number, k: number): Float64Array {
  const g = new Float64Array(k * k);
  for (let r = 0; r < n; r++) {
    const o = r * k;
    for (let s = 0; s < k; s++) {
      const v = f[o + s]!;
      if (v === 0) continue;
      const gs = s * k;
      for (let t = s; t < k; t++) g[gs + t]! += v * f[o + t]!;
    }
  }
  for (let s = 0; s < k; s++) for (let t = 0; t < s; t++) g[s * k + t] = g[t * k + s]!;
  return g;
}
