/**
 * Row arithmetic over the model's item matrices (n rows of `dims` floats, row-major): dot products against a
 * row, and the rows of a mostly-zero matrix by their non-zeros.
 */
import { nonZeroPositions, releaseNonZeroPositions } from "../../../engine";

export const dot = (a: Float32Array, b: Float32Array, offset: number, dims: number): number =>
  rowDot(a, 0, b, offset, dims);

/** Four independent sums: candidate scoring is most of a ranking's arithmetic (up to 320 dims per item). */
export function rowDot(a: Float32Array, ao: number, b: Float32Array, bo: number, dims: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let d = 0;
  for (; d + 3 < dims; d += 4) {
    s0 += a[ao + d]! * b[bo + d]!;
    s1 += a[ao + d + 1]! * b[bo + d + 1]!;
    s2 += a[ao + d + 2]! * b[bo + d + 2]!;
    s3 += a[ao + d + 3]! * b[bo + d + 3]!;
  }
  for (; d < dims; d++) s0 += a[ao + d]! * b[bo + d]!;
  return s0 + s1 + s2 + s3;
}

export interface SparseRows {
  indptr: Int32Array;
  indices: Uint16Array;
  data: Float32Array;
}

/**
 * The rows of an n × dims matrix by their non-zeros; null when over a quarter of it is non-zero (the plain
 * dot product is then as fast). A matrix loaded from an artifact's sparse form is read through its recorded
 * non-zero positions, one pass over the non-zeros instead of two over every value.
 */
export function sparseRows(vectors: Float32Array, n: number, dims: number): SparseRows | null {
  const positions = nonZeroPositions(vectors);
  const nnz = positions?.length ?? countNonZeros(vectors);
  if (nnz > (n * dims) / 4) return null;
  const indptr = new Int32Array(n + 1);
  const indices = new Uint16Array(nnz);
  const data = new Float32Array(nnz);
  if (positions !== undefined) {
    for (let p = 0; p < nnz; p++) {
      const at = positions[p]!;
      const row = Math.floor(at / dims);
      indptr[row + 1]!++;
      indices[p] = at - row * dims;
      data[p] = vectors[at]!;
    }
    for (let i = 0; i < n; i++) indptr[i + 1]! += indptr[i]!;
    // Built once per snapshot: the positions need not outlive it.
    releaseNonZeroPositions(vectors);
    return { indptr, indices, data };
  }
  let p = 0;
  for (let i = 0; i < n; i++) {
    const o = i * dims;
    for (let d = 0; d < dims; d++) {
      const v = vectors[o + d]!;
      if (v !== 0) {
        indices[p] = d;
        data[p++] = v;
      }
    }
    indptr[i + 1] = p;
  }
  return { indptr, indices, data };
}

export function vectorLength(v: Float32Array): number {
  let s = 0;
  for (let d = 0; d < v.length; d++) s += v[d]! * v[d]!;
  return Math.sqrt(s);
}

function countNonZeros(vectors: Float32Array): number {
  let nnz = 0;
  for (let i = 0; i < vectors.length; i++) if (vectors[i] !== 0) nnz++;
  return nnz;
}
