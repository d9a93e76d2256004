/**
 * Row arithmetic over the model's dense item matrices (n rows of `dims` floats, row-major): dot products
 * against a row, and a vector's length.
 */
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

export function vectorLength(v: Float32Array): number {
  let s = 0;
  for (let d = 0; d < v.length; d++) s += v[d]! * v[d]!;
  return Math.sqrt(s);
}
