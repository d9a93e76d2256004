/**
 * Row arithmetic over the model's item matrices (dense: n rows of `dims` floats, row-major; sparse: the
 * content rows by their non-zeros): dot products against a row, candidate scoring over scattered rows, and a
 * vector's length. Candidate scoring runs in the native kernels when they load (`native/scoring.c`, four
 * times faster on 200 rows of 64 factors) and here otherwise; both give the same floats.
 */
import type { ContentVectors } from "../../../engine";
import { nativeKernels } from "../../../engine/native";

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

/** Floats in a 64-byte cache line. */
const FLOATS_PER_LINE = 16;
/** Where the loops below leave what they read while touching rows ahead of use, so the reads stay. */
const touch = { sink: 0 };

/**
 * `out[p] = rows[items[p]] · x` (rows of `dims` floats) for every p whose `out[p]` is NaN; the others are
 * scores known already.
 */
export function rowsDot(
  rows: Float32Array,
  dims: number,
  items: Int32Array,
  x: Float32Array,
  out: Float32Array,
  opts: { native?: boolean } = {},
): void {
  const native = opts.native === false ? null : nativeKernels();
  if (
    native !== null &&
    native.rows_dot_f32(rows, Math.floor(rows.length / dims), dims, items, items.length, x, out) === 0
  )
    return;
  // The rows are scattered over the whole matrix: touching each one's cache lines first lets their loads
  // overlap instead of stalling one dot product after another.
  let touched = 0;
  for (let p = 0; p < items.length; p++) {
    if (!Number.isNaN(out[p]!)) continue;
    const o = items[p]! * dims;
    for (let d = 0; d < dims; d += FLOATS_PER_LINE) touched += rows[o + d]!;
  }
  touch.sink = touched;
  for (let p = 0; p < items.length; p++) {
    if (Number.isNaN(out[p]!)) out[p] = rowDot(x, 0, rows, items[p]! * dims, dims);
  }
}

/** The same over the content rows (by their non-zeros) against a dense profile. */
export function sparseRowsDot(
  c: ContentVectors,
  items: Int32Array,
  profile: Float32Array,
  out: Float32Array,
  opts: { native?: boolean } = {},
): void {
  const { indptr, indices, data } = c;
  const native = opts.native === false ? null : nativeKernels();
  if (
    native !== null &&
    native.csr_rows_dot_f32(indptr, indices, data, indptr.length - 1, items, items.length, profile, out) === 0
  )
    return;
  // As for the dense rows: the scattered row starts, then the rows, are touched before the sums.
  let touched = 0;
  for (let q = 0; q < items.length; q++) if (Number.isNaN(out[q]!)) touched += indptr[items[q]!]!;
  for (let q = 0; q < items.length; q++) {
    if (Number.isNaN(out[q]!)) touched += indices[indptr[items[q]!]!]! + data[indptr[items[q]!]!]!;
  }
  touch.sink = touched;
  for (let q = 0; q < items.length; q++) {
    if (!Number.isNaN(out[q]!)) continue;
    const i = items[q]!;
    let sum = 0;
    for (let p = indptr[i]!; p < indptr[i + 1]!; p++) sum += profile[indices[p]!]! * data[p]!;
    out[q] = sum;
  }
}

export function vectorLength(v: Float32Array): number {
  let s = 0;
  for (let d = 0; d < v.length; d++) s += v[d]! * v[d]!;
  return Math.sqrt(s);
}
