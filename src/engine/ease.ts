import { spdInverse } from "./linalg";
import type { Csr } from "./sparse";
import { topK } from "./topk";

export interface EaseOptions {
  lambda: number;
  /** Items need at least this many distinct training users to get an EASE row/column. */
  minSupport: number;
  /** Entries kept per row of B (largest |b|); 0 keeps the dense row. */
  keepPerRow: number;
  /** How X is formed from summed weights: 1/0 ("binary"), the weight itself, or log1p(weight). */
  values: "binary" | "weight" | "log";
  /**
   * Each user's row of X weighs |row|^−userExponent in the Gram (scaled so the mean user weight is 1, so λ
   * keeps its meaning): with 0 every user counts alike, and a user with thousands of items adds millions of
   * co-occurrences, most of them between items that merely share a very broad taste; above 0 such users
   * count less than their size. Chosen on the validation split.
   */
  userExponent?: number;
  native: boolean;
}

export const DEFAULT_EASE: Readonly<EaseOptions> = Object.freeze({
  lambda: 200,
  minSupport: 1,
  keepPerRow: 0,
  values: "binary",
  native: true,
});

/**
 * EASE (Steck 2019): B = I − P·diag(1/diag P), P = (XᵀX + λI)⁻¹, restricted to supported items. Stored
 * as a sparse matrix whose rows are "source" items (compact) and columns global item indices, so a score is
 * Σ_h w_h · B[row(h), :] over the history.
 */
export interface EaseModel {
  /** Row of B for a global item, or -1 when the item has no EASE row. */
  rowOf: Int32Array;
  b: Csr;
}

export function easeInputValue(w: number, values: EaseOptions["values"]): number {
  if (values === "binary") return 1;
  if (values === "log") return Math.log1p(w);
  return w;
}

/** Distinct-user support per item. */
export function itemSupport(ui: Csr): Int32Array {
  const s = new Int32Array(ui.nCols);
  for (let p = 0; p < ui.indices.length; p++) s[ui.indices[p]!]!++;
  return s;
}

export function easeEligibleItems(ui: Csr, minSupport: number): Int32Array {
  const support = itemSupport(ui);
  const out: number[] = [];
  for (let i = 0; i < ui.nCols; i++) if (support[i]! >= Math.max(1, minSupport)) out.push(i);
  return Int32Array.from(out);
}

/** Gram XᵀX over the eligible items only (dense m×m, double), in O(Σ_u nnz_u²). */
export function easeGram(
  ui: Csr,
  items: Int32Array,
  values: EaseOptions["values"],
  userExponent = 0,
): Float64Array {
  const m = items.length;
  const compact = new Int32Array(ui.nCols).fill(-1);
  for (let j = 0; j < m; j++) compact[items[j]!] = j;
  const g = new Float64Array(m * m);
  const rowIdx = new Int32Array(ui.nCols);
  const rowVal = new Float64Array(ui.nCols);
  let weightSum = 0;
  let weighted = 0;
  for (let u = 0; u < ui.nRows; u++) {
    let len = 0;
    for (let p = ui.indptr[u]!; p < ui.indptr[u + 1]!; p++) {
      const c = compact[ui.indices[p]!]!;
      if (c < 0) continue;
      rowIdx[len] = c;
      rowVal[len++] = easeInputValue(ui.data[p]!, values);
    }
    if (len === 0) continue;
    const userWeight = userExponent === 0 ? 1 : (ui.indptr[u + 1]! - ui.indptr[u]!) ** -userExponent;
    weightSum += userWeight;
    weighted++;
    for (let x = 0; x < len; x++) {
      const ro = rowIdx[x]! * m;
      const vx = userWeight * rowVal[x]!;
      for (let y = 0; y < len; y++) g[ro + rowIdx[y]!]! += vx * rowVal[y]!;
    }
  }
  if (userExponent !== 0 && weightSum > 0) {
    const scale = weighted / weightSum;
    for (let i = 0; i < g.length; i++) g[i]! *= scale;
  }
  return g;
}

export function fitEase(ui: Csr, options: Partial<EaseOptions> = {}): EaseModel {
  const o = { ...DEFAULT_EASE, ...options };
  const items = easeEligibleItems(ui, o.minSupport);
  const gram = easeGram(ui, items, o.values, o.userExponent ?? 0);
  return easeFromGram(gram, items, ui.nCols, o);
}

/** Inverts (G + λI) and turns P into B; the Gram is consumed (overwritten). */
export function easeFromGram(
  gram: Float64Array,
  items: Int32Array,
  nItems: number,
  o: Pick<EaseOptions, "lambda" | "keepPerRow" | "native">,
): EaseModel {
  const m = items.length;
  for (let j = 0; j < m; j++) gram[j * m + j]! += o.lambda;
  const p = spdInverse(gram, m, { native: o.native });
  const keep = o.keepPerRow > 0 && o.keepPerRow < m ? o.keepPerRow : m;
  const indptr = new Int32Array(m + 1);
  const indices = new Int32Array(m * keep);
  const data = new Float32Array(m * keep);
  const invDiag = new Float64Array(m);
  for (let j = 0; j < m; j++) invDiag[j] = 1 / p[j * m + j]!;
  const row = new Float32Array(m);
  const absRow = new Float32Array(m);
  let nnz = 0;
  for (let i = 0; i < m; i++) {
    // P is symmetric, so B[i, j] = −P[i, j] / P[j, j] reads row i of P contiguously.
    const ro = i * m;
    for (let j = 0; j < m; j++) row[j] = j === i ? 0 : -p[ro + j]! * invDiag[j]!;
    if (keep === m) {
      for (let j = 0; j < m; j++) {
        if (j === i) continue;
        indices[nnz] = items[j]!;
        data[nnz++] = row[j]!;
      }
    } else {
      for (let j = 0; j < m; j++) absRow[j] = Math.abs(row[j]!);
      absRow[i] = Number.NEGATIVE_INFINITY;
      const top = topK(absRow, keep).sort();
      for (let t = 0; t < top.length; t++) {
        indices[nnz] = items[top[t]!]!;
        data[nnz++] = row[top[t]!]!;
      }
    }
    indptr[i + 1] = nnz;
  }
  const rowOf = new Int32Array(nItems).fill(-1);
  for (let j = 0; j < m; j++) rowOf[items[j]!] = j;
  return {
    rowOf,
    b: { nRows: m, nCols: nItems, indptr, indices: indices.slice(0, nnz), data: data.slice(0, nnz) },
  };
}

/** scores = Σ_h w_h · B[row(h), :]; `out` is zeroed first. */
export function easeScores(
  model: EaseModel,
  items: ArrayLike<number>,
  weights: ArrayLike<number>,
  out: Float32Array,
): Float32Array {
  out.fill(0);
  const { b, rowOf } = model;
  for (let h = 0; h < items.length; h++) {
    const it = items[h]!;
    const r = it >= 0 && it < rowOf.length ? rowOf[it]! : -1;
    if (r < 0) continue;
    const w = weights[h]!;
    for (let p = b.indptr[r]!; p < b.indptr[r + 1]!; p++) out[b.indices[p]!]! += w * b.data[p]!;
  }
  return out;
}
