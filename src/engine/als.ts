import { gramMatrix } from "./linalg";
import { nativeKernels } from "./native";
import { createRng, gaussian } from "./rng";
import { type Csr, transposeCsr } from "./sparse";

export interface AlsOptions {
  factors: number;
  iterations: number;
  /** L2 penalty λ on every factor vector. */
  regularization: number;
  /** Confidence c_ui = 1 + alpha · w_ui (Hu, Koren, Volinsky 2008). */
  alpha: number;
  /** Conjugate-gradient steps per row and sweep; 3 is enough when warm-started (Takács et al. 2011). */
  cgSteps: number;
  seed: number;
  native: boolean;
}

export const DEFAULT_ALS: Readonly<AlsOptions> = Object.freeze({
  factors: 64,
  iterations: 15,
  regularization: 0.1,
  alpha: 10,
  cgSteps: 3,
  seed: 42,
  native: true,
});

export interface AlsFactors {
  k: number;
  userFactors: Float32Array;
  itemFactors: Float32Array;
}

/** Fits implicit ALS on a user×item weight matrix; time is linear in the number of non-zeros per sweep. */
export function fitAls(
  ui: Csr,
  options: Partial<AlsOptions> = {},
  onIteration?: (iteration: number, total: number) => void,
): AlsFactors {
  const o = { ...DEFAULT_ALS, ...options };
  const k = o.factors;
  const iu = transposeCsr(ui);
  const rng = createRng(o.seed);
  const scale = 0.01;
  const userFactors = new Float32Array(ui.nRows * k);
  const itemFactors = new Float32Array(ui.nCols * k);
  for (let i = 0; i < userFactors.length; i++) userFactors[i] = gaussian(rng) * scale;
  for (let i = 0; i < itemFactors.length; i++) itemFactors[i] = gaussian(rng) * scale;
  for (let it = 0; it < o.iterations; it++) {
    alsSweep(ui, userFactors, itemFactors, k, o);
    alsSweep(iu, itemFactors, userFactors, k, o);
    onIteration?.(it + 1, o.iterations);
  }
  return { k, userFactors, itemFactors };
}

/** Updates every row of X given the fixed other side Y (one half of an ALS iteration). */
export function alsSweep(m: Csr, X: Float32Array, Y: Float32Array, k: number, o: AlsOptions): void {
  const gram = gramMatrix(Y, m.nCols, k);
  const native = o.native ? nativeKernels() : null;
  if (native) {
    native.als_cg_sweep(
      m.indptr,
      m.indices,
      m.data,
      m.nRows,
      X,
      Y,
      gram,
      k,
      o.alpha,
      o.regularization,
      o.cgSteps,
    );
    return;
  }
  alsSweepTs(m, X, Y, gram, k, o.alpha, o.regularization, o.cgSteps);
}

/** TypeScript twin of the C `als_cg_sweep`. */
export function alsSweepTs(
  m: Csr,
  X: Float32Array,
  Y: Float32Array,
  gram: Float64Array,
  k: number,
  alpha: number,
  reg: number,
  steps: number,
): void {
  const r = new Float64Array(k);
  const p = new Float64Array(k);
  const ap = new Float64Array(k);
  for (let u = 0; u < m.nRows; u++) {
    const a = m.indptr[u]!;
    const b = m.indptr[u + 1]!;
    const xo = u * k;
    for (let s = 0; s < k; s++) {
      let acc = reg * X[xo + s]!;
      for (let t = 0; t < k; t++) acc += gram[s * k + t]! * X[xo + t]!;
      r[s] = -acc;
    }
    for (let q = a; q < b; q++) {
      const yo = m.indices[q]! * k;
      const c = alpha * m.data[q]!;
      let d = 0;
      for (let t = 0; t < k; t++) d += Y[yo + t]! * X[xo + t]!;
      const coef = 1 + c - c * d;
      for (let t = 0; t < k; t++) r[t]! += coef * Y[yo + t]!;
    }
    p.set(r);
    let rs = 0;
    for (let t = 0; t < k; t++) rs += r[t]! * r[t]!;
    for (let it = 0; it < steps && rs > 1e-12; it++) {
      for (let s = 0; s < k; s++) {
        let acc = reg * p[s]!;
        for (let t = 0; t < k; t++) acc += gram[s * k + t]! * p[t]!;
        ap[s] = acc;
      }
      for (let q = a; q < b; q++) {
        const yo = m.indices[q]! * k;
        let d = 0;
        for (let t = 0; t < k; t++) d += Y[yo + t]! * p[t]!;
        const coef = alpha * m.data[q]! * d;
        for (let t = 0; t < k; t++) ap[t]! += coef * Y[yo + t]!;
      }
      let pap = 0;
      for (let t = 0; t < k; t++) pap += p[t]! * ap[t]!;
      if (!(pap > 0)) break;
      const step = rs / pap;
      let rsn = 0;
      for (let t = 0; t < k; t++) {
        X[xo + t]! += step * p[t]!;
        r[t]! -= step * ap[t]!;
        rsn += r[t]! * r[t]!;
      }
      const beta = rsn / rs;
      for (let t = 0; t < k; t++) p[t] = r[t]! + beta * p[t]!;
      rs = rsn;
    }
  }
}

/**
 * Implicit-ALS objective Σ_ui c_ui (p_ui − x_u·y_i)² + λ(‖X‖² + ‖Y‖²) without touching unobserved pairs
 * one by one: the all-zero part is Σ_u x_uᵀ(YᵀY)x_u, then observed pairs are corrected.
 */
export function alsLoss(ui: Csr, f: AlsFactors, alpha: number, reg: number): number {
  const { k, userFactors: X, itemFactors: Y } = f;
  const gram = gramMatrix(Y, ui.nCols, k);
  let loss = 0;
  for (let u = 0; u < ui.nRows; u++) {
    const xo = u * k;
    for (let s = 0; s < k; s++) {
      let acc = 0;
      for (let t = 0; t < k; t++) acc += gram[s * k + t]! * X[xo + t]!;
      loss += acc * X[xo + s]!;
    }
    for (let q = ui.indptr[u]!; q < ui.indptr[u + 1]!; q++) {
      const yo = ui.indices[q]! * k;
      let d = 0;
      for (let t = 0; t < k; t++) d += X[xo + t]! * Y[yo + t]!;
      const c = 1 + alpha * ui.data[q]!;
      loss += c * (1 - d) * (1 - d) - d * d;
    }
  }
  let norm = 0;
  for (let i = 0; i < X.length; i++) norm += X[i]! * X[i]!;
  for (let i = 0; i < Y.length; i++) norm += Y[i]! * Y[i]!;
  return loss + reg * norm;
}
