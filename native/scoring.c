/*
 * Candidate scoring at request time: dot products of one vector with rows scattered over an item matrix,
 * dense (factors) or sparse (content). Built and loaded with kernels.c (see README.md).
 */
#include <math.h>
#include <string.h>

#define SCORE_KMAX 512
typedef double v4d_score __attribute__((vector_size(32), aligned(8)));

/*
 * Candidate scoring: out[p] = Y[items[p]] · x over rows of k floats, for every p whose out[p] is NaN (the
 * others are known already); a row out of range scores NaN. Each product of two floats is exact in double,
 * and the sums run in double in four lanes (d mod 4), tail into the first, added as ((s0 + s1) + s2) + s3:
 * the same floats as the TypeScript twin (rowDot), whichever path a process takes. The rows are scattered
 * over the matrix, so the loads of a few rows ahead are started before each row's sum.
 */
int rows_dot_f32(const float *Y, int nRows, int k, const int *items, int n, const float *x, float *out) {
  if (k <= 0 || k > SCORE_KMAX) return 1;
  double xd[SCORE_KMAX];
  for (int d = 0; d < k; d++) xd[d] = x[d];
  const int ahead = 6;
  for (int p = 0; p < n && p < ahead; p++) {
    const int it = items[p];
    if (it >= 0 && it < nRows)
      for (int d = 0; d < k; d += 16) __builtin_prefetch(Y + (size_t)it * k + d);
  }
  for (int p = 0; p < n; p++) {
    if (p + ahead < n) {
      const int nx = items[p + ahead];
      if (nx >= 0 && nx < nRows)
        for (int d = 0; d < k; d += 16) __builtin_prefetch(Y + (size_t)nx * k + d);
    }
    if (!isnan(out[p])) continue;
    const int it = items[p];
    if (it < 0 || it >= nRows) {
      out[p] = NAN;
      continue;
    }
    const float *y = Y + (size_t)it * k;
    v4d_score acc = {0, 0, 0, 0};
    int d = 0;
    for (; d + 3 < k; d += 4) {
      const v4d_score yv = {y[d], y[d + 1], y[d + 2], y[d + 3]};
      v4d_score xv;
      memcpy(&xv, xd + d, sizeof xv);
      acc += yv * xv;
    }
    double s0 = acc[0];
    for (; d < k; d++) s0 += (double)y[d] * xd[d];
    out[p] = (float)(((s0 + acc[1]) + acc[2]) + acc[3]);
  }
  return 0;
}

/*
 * The same for sparse rows (CSR: indptr, 16-bit indices, data) against a dense vector: one sum per row in
 * double, in the rows' own order, as the TypeScript twin adds them; a row out of range scores 0, as there.
 */
int csr_rows_dot_f32(const int *indptr, const unsigned short *indices, const float *data, int nRows,
                     const int *items, int n, const float *x, float *out) {
  for (int p = 0; p < n; p++) {
    if (!isnan(out[p])) continue;
    const int it = items[p];
    if (it < 0 || it >= nRows) {
      out[p] = 0;
      continue;
    }
    double sum = 0;
    for (int q = indptr[it]; q < indptr[it + 1]; q++) sum += (double)x[indices[q]] * data[q];
    out[p] = (float)sum;
  }
  return 0;
}
