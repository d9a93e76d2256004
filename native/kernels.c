/*
 * Dense kernels for the recommendation engine, loaded through bun:ffi.
 * Every function has a TypeScript twin in src/engine/linalg.ts; tests check they agree.
 * Matrices are row-major doubles. The only heavy path is the SPD inverse used by EASE:
 * blocked Cholesky, blocked triangular inverse and X^T X, all driven by one register-blocked
 * GEMM update that is split across threads by row blocks.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef double v4d __attribute__((vector_size(32), aligned(8)));

#define NB 96   /* panel width: a panel row of B stays in L1 while a row block of A sits in L2 */
#define RB 128  /* rows of A per cache block */

static int g_threads = 1;

int kernels_version(void) { return 3; }
void kernels_set_threads(int n) { g_threads = n < 1 ? 1 : (n > 16 ? 16 : n); }

/* C[M x N] += alpha * A[M x K] * B[K x N]; ldx are row strides. */
static void gemm_block(int M, int N, int K, double alpha, const double *A, int lda, const double *B, int ldb,
                       double *C, int ldc) {
  int j = 0;
  for (; j + 8 <= N; j += 8) {
    int i = 0;
    for (; i + 4 <= M; i += 4) {
      v4d c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0}, c30 = {0}, c31 = {0};
      const double *a0 = A + (size_t)i * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
      for (int t = 0; t < K; t++) {
        const v4d b0 = *(const v4d *)(B + (size_t)t * ldb + j);
        const v4d b1 = *(const v4d *)(B + (size_t)t * ldb + j + 4);
        const double x0 = a0[t], x1 = a1[t], x2 = a2[t], x3 = a3[t];
        c00 += x0 * b0; c01 += x0 * b1;
        c10 += x1 * b0; c11 += x1 * b1;
        c20 += x2 * b0; c21 += x2 * b1;
        c30 += x3 * b0; c31 += x3 * b1;
      }
      v4d *r;
      r = (v4d *)(C + (size_t)(i + 0) * ldc + j); r[0] += alpha * c00; r[1] += alpha * c01;
      r = (v4d *)(C + (size_t)(i + 1) * ldc + j); r[0] += alpha * c10; r[1] += alpha * c11;
      r = (v4d *)(C + (size_t)(i + 2) * ldc + j); r[0] += alpha * c20; r[1] += alpha * c21;
      r = (v4d *)(C + (size_t)(i + 3) * ldc + j); r[0] += alpha * c30; r[1] += alpha * c31;
    }
    for (; i < M; i++) {
      v4d c0 = {0}, c1 = {0};
      const double *a = A + (size_t)i * lda;
      for (int t = 0; t < K; t++) {
        c0 += a[t] * *(const v4d *)(B + (size_t)t * ldb + j);
        c1 += a[t] * *(const v4d *)(B + (size_t)t * ldb + j + 4);
      }
      v4d *r = (v4d *)(C + (size_t)i * ldc + j);
      r[0] += alpha * c0; r[1] += alpha * c1;
    }
  }
  for (; j < N; j++) {
    for (int i = 0; i < M; i++) {
      double s = 0;
      const double *a = A + (size_t)i * lda;
      for (int t = 0; t < K; t++) s += a[t] * B[(size_t)t * ldb + j];
      C[(size_t)i * ldc + j] += alpha * s;
    }
  }
}

/* A job covers row blocks of C; with lower != 0 only columns up to the end of each row block are
 * updated (plus `colOffset`), which is what the triangular callers need. */
typedef struct {
  int M, N, K, lower, colOffset;
  double alpha;
  const double *A; int lda;
  const double *B; int ldb;
  double *C; int ldc;
  int first, step;
} GemmJob;

static void *gemm_worker(void *p) {
  const GemmJob *g = (const GemmJob *)p;
  for (int i0 = g->first * RB; i0 < g->M; i0 += g->step * RB) {
    const int m = g->M - i0 < RB ? g->M - i0 : RB;
    int n = g->N;
    if (g->lower) {
      const int lim = g->colOffset + i0 + m;
      if (lim < n) n = lim;
    }
    if (n > 0) gemm_block(m, n, g->K, g->alpha, g->A + (size_t)i0 * g->lda, g->lda, g->B, g->ldb,
                          g->C + (size_t)i0 * g->ldc, g->ldc);
  }
  return NULL;
}

static void gemm_par(int M, int N, int K, double alpha, const double *A, int lda, const double *B, int ldb,
                     double *C, int ldc, int lower, int colOffset) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  const int blocks = (M + RB - 1) / RB;
  int nt = g_threads < blocks ? g_threads : blocks;
  if ((double)M * N * K < 4e6) nt = 1;
  GemmJob jobs[16];
  pthread_t th[16];
  for (int t = 0; t < nt; t++) {
    jobs[t] = (GemmJob){M, N, K, lower, colOffset, alpha, A, lda, B, ldb, C, ldc, t, nt};
  }
  for (int t = 1; t < nt; t++) pthread_create(&th[t], NULL, gemm_worker, &jobs[t]);
  gemm_worker(&jobs[0]);
  for (int t = 1; t < nt; t++) pthread_join(th[t], NULL);
}

/* In-place lower Cholesky of the SPD matrix a (n x n); the upper triangle is left unspecified.
 * Returns 0, or 1 + the index of the first non-positive pivot. */
int cholesky_f64(double *a, int n) {
  double *pt = (double *)malloc(sizeof(double) * (size_t)NB * (size_t)(n > 0 ? n : 1));
  if (!pt) return -1;
  for (int k0 = 0; k0 < n; k0 += NB) {
    const int kb = n - k0 < NB ? n - k0 : NB;
    for (int j = k0; j < k0 + kb; j++) {
      double *rj = a + (size_t)j * n;
      double d = rj[j];
      for (int t = k0; t < j; t++) d -= rj[t] * rj[t];
      if (!(d > 0)) { free(pt); return j + 1; }
      d = sqrt(d);
      rj[j] = d;
      const double inv = 1.0 / d;
      for (int i = j + 1; i < n; i++) {
        double *ri = a + (size_t)i * n;
        double s = ri[j];
        for (int t = k0; t < j; t++) s -= ri[t] * rj[t];
        ri[j] = s * inv;
      }
    }
    const int r0 = k0 + kb, m = n - r0;
    if (m <= 0) break;
    for (int i = 0; i < m; i++)
      for (int t = 0; t < kb; t++) pt[(size_t)t * m + i] = a[(size_t)(r0 + i) * n + k0 + t];
    gemm_par(m, m, kb, -1.0, a + (size_t)r0 * n + k0, n, pt, m, a + (size_t)r0 * n + r0, n, 1, 0);
  }
  free(pt);
  return 0;
}

/* Inverse of an SPD matrix in place (full symmetric result). Returns as cholesky_f64. */
int spd_inverse_f64(double *a, int n) {
  int rc = cholesky_f64(a, n);
  if (rc != 0) return rc;
  double *x = (double *)calloc((size_t)n * n, sizeof(double));
  double *xt = (double *)malloc(sizeof(double) * (size_t)NB * (size_t)(n > 0 ? n : 1));
  if (!x || !xt) { free(x); free(xt); return -1; }
  for (int i = 0; i < n; i++) x[(size_t)i * n + i] = 1.0;
  /* X = L^-1 by blocked forward substitution on the identity. */
  for (int k0 = 0; k0 < n; k0 += NB) {
    const int kb = n - k0 < NB ? n - k0 : NB, cols = k0 + kb;
    for (int i = k0; i < cols; i++) {
      double *xi = x + (size_t)i * n;
      const double *li = a + (size_t)i * n;
      for (int t = k0; t < i; t++) {
        const double l = li[t];
        const double *xr = x + (size_t)t * n;
        for (int j = 0; j <= t; j++) xi[j] -= l * xr[j];
      }
      const double inv = 1.0 / li[i];
      for (int j = 0; j <= i; j++) xi[j] *= inv;
    }
    const int r0 = cols, m = n - r0;
    if (m > 0) gemm_par(m, cols, kb, -1.0, a + (size_t)r0 * n + k0, n, x + (size_t)k0 * n, n, x + (size_t)r0 * n, n, 0, 0);
  }
  /* P = X^T X, lower triangle, accumulated over row panels of X. */
  for (size_t p = 0; p < (size_t)n * n; p++) a[p] = 0;
  for (int t0 = 0; t0 < n; t0 += NB) {
    const int tb = n - t0 < NB ? n - t0 : NB, e = t0 + tb;
    for (int i = 0; i < e; i++)
      for (int t = 0; t < tb; t++) xt[(size_t)i * tb + t] = x[(size_t)(t0 + t) * n + i];
    gemm_par(e, e, tb, 1.0, xt, tb, x + (size_t)t0 * n, n, a, n, 1, 0);
  }
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) a[(size_t)i * n + j] = a[(size_t)j * n + i];
  free(x);
  free(xt);
  return 0;
}

/*
 * One implicit-ALS half sweep (Hu/Koren/Volinsky loss, conjugate-gradient row updates after Takacs et al.):
 * for every row u, a few CG steps on (Y^T Y + reg I + sum_i c_ui y_i y_i^T) x_u = sum_i (1 + c_ui) y_i,
 * warm-started from the current x_u, where c_ui = alpha * w_ui. Rows are split across threads.
 */
typedef struct {
  const int *indptr, *indices;
  const float *w;
  float *X;
  const float *Y;
  const double *gram;
  int k, steps, first, last;
  double alpha, reg;
} AlsJob;

#define KMAX 512

__attribute__((optimize("fast-math"))) static float dotf(const float *a, const float *b, int k) {
  float s = 0;
  for (int t = 0; t < k; t++) s += a[t] * b[t];
  return s;
}

__attribute__((optimize("fast-math"))) static void als_rows(const AlsJob *j) {
  const int k = j->k;
  float r[KMAX], p[KMAX], ap[KMAX];
  for (int u = j->first; u < j->last; u++) {
    const int a = j->indptr[u], b = j->indptr[u + 1];
    float *x = j->X + (size_t)u * k;
    for (int s = 0; s < k; s++) {
      const double *g = j->gram + (size_t)s * k;
      double acc = j->reg * x[s];
      for (int t = 0; t < k; t++) acc += g[t] * x[t];
      r[s] = (float)-acc;
    }
    for (int q = a; q < b; q++) {
      const float *y = j->Y + (size_t)j->indices[q] * k;
      const float c = (float)(j->alpha * j->w[q]);
      const float coef = (1.0f + c) - c * dotf(y, x, k);
      for (int t = 0; t < k; t++) r[t] += coef * y[t];
    }
    memcpy(p, r, sizeof(float) * k);
    double rs = dotf(r, r, k);
    for (int it = 0; it < j->steps && rs > 1e-12; it++) {
      for (int s = 0; s < k; s++) {
        const double *g = j->gram + (size_t)s * k;
        double acc = j->reg * p[s];
        for (int t = 0; t < k; t++) acc += g[t] * p[t];
        ap[s] = (float)acc;
      }
      for (int q = a; q < b; q++) {
        const float *y = j->Y + (size_t)j->indices[q] * k;
        const float coef = (float)(j->alpha * j->w[q]) * dotf(y, p, k);
        for (int t = 0; t < k; t++) ap[t] += coef * y[t];
      }
      const double pap = dotf(p, ap, k);
      if (!(pap > 0)) break;
      const float step = (float)(rs / pap);
      for (int t = 0; t < k; t++) {
        x[t] += step * p[t];
        r[t] -= step * ap[t];
      }
      const double rsn = dotf(r, r, k);
      const float beta = (float)(rsn / rs);
      for (int t = 0; t < k; t++) p[t] = r[t] + beta * p[t];
      rs = rsn;
    }
  }
}

static void *als_worker(void *p) {
  als_rows((const AlsJob *)p);
  return NULL;
}

void als_cg_sweep(const int *indptr, const int *indices, const float *w, int nRows, float *X, const float *Y,
                  const double *gram, int k, double alpha, double reg, int steps) {
  if (k > KMAX || nRows <= 0) return;
  int nt = g_threads;
  if (nt > 16) nt = 16;
  if (nRows < 256) nt = 1;
  AlsJob jobs[16];
  pthread_t th[16];
  /* Split by interaction count, not row count, so a thread with heavy users does not lag. */
  const long long total = (long long)indptr[nRows] - indptr[0] + nRows;
  int start = 0;
  for (int t = 0; t < nt; t++) {
    int end = nRows;
    if (t < nt - 1) {
      const long long target = total * (t + 1) / nt;
      end = start;
      while (end < nRows && (long long)indptr[end] - indptr[0] + end < target) end++;
    }
    jobs[t] = (AlsJob){indptr, indices, w, X, Y, gram, k, steps, start, end, alpha, reg};
    start = end;
  }
  for (int t = 1; t < nt; t++) pthread_create(&th[t], NULL, als_worker, &jobs[t]);
  als_rows(&jobs[0]);
  for (int t = 1; t < nt; t++) pthread_join(th[t], NULL);
}

/* Four independent accumulators: without them the dot product is one serial FMA chain (latency-bound). */
static double dot4(const double *x, const double *y, int n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int t = 0;
  for (; t + 4 <= n; t += 4) {
    s0 += x[t] * y[t];
    s1 += x[t + 1] * y[t + 1];
    s2 += x[t + 2] * y[t + 2];
    s3 += x[t + 3] * y[t + 3];
  }
  for (; t < n; t++) s0 += x[t] * y[t];
  return (s0 + s1) + (s2 + s3);
}

/* Sum of a v4d's lanes, in a fixed order. */
static inline double hsum4(v4d v) { return (v[0] + v[1]) + (v[2] + v[3]); }

/*
 * Dot products of four rows with one row over their first n entries, together: four vector accumulators in
 * flight at once, where one row at a time is a short serial chain (the fold-in's Cholesky spent half its
 * time waiting on them: 12.5 -> 6.6 us at k = 64).
 */
static void dot_rows4(const double *r0, const double *r1, const double *r2, const double *r3, const double *y, int n,
                      double *out) {
  v4d s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
  int t = 0;
  for (; t + 4 <= n; t += 4) {
    const v4d yv = *(const v4d *)(y + t);
    s0 += *(const v4d *)(r0 + t) * yv;
    s1 += *(const v4d *)(r1 + t) * yv;
    s2 += *(const v4d *)(r2 + t) * yv;
    s3 += *(const v4d *)(r3 + t) * yv;
  }
  double d0 = hsum4(s0), d1 = hsum4(s1), d2 = hsum4(s2), d3 = hsum4(s3);
  for (; t < n; t++) {
    d0 += r0[t] * y[t];
    d1 += r1[t] * y[t];
    d2 += r2[t] * y[t];
    d3 += r3[t] * y[t];
  }
  out[0] = d0;
  out[1] = d1;
  out[2] = d2;
  out[3] = d3;
}

/*
 * Request-time fold-in: x = (G + reg I + sum c_i y_i y_i^T)^-1 sum (1 + c_i) y_i with c_i = alpha w_i,
 * the normal equations of one ALS user row, solved exactly by Cholesky. Items with w <= 0 are skipped.
 * Returns 0, or 1 if the system was not positive definite.
 */
int fold_in_f32(const float *Y, int nItems, const int *items, const float *weights, int h, const double *gram, int k,
                double alpha, double reg, float *out) {
  if (k <= 0 || k > KMAX) return 1;
  double *a = (double *)malloc(sizeof(double) * ((size_t)k * k + k));
  if (!a) return 1;
  double *b = a + (size_t)k * k;
  memcpy(a, gram, sizeof(double) * (size_t)k * k);
  for (int i = 0; i < k; i++) { a[(size_t)i * k + i] += reg; b[i] = 0; }
  double yd[KMAX];
  for (int q = 0; q < h; q++) {
    const int it = items[q];
    const double w = weights[q];
    if (!(w > 0) || it < 0 || it >= nItems) continue;
    const double c = alpha * w;
    const float *y = Y + (size_t)it * k;
    for (int i = 0; i < k; i++) yd[i] = y[i];
    for (int i = 0; i < k; i++) {
      const double cyi = c * yd[i];
      double *ai = a + (size_t)i * k;
      b[i] += (1 + c) * yd[i];
      for (int j = 0; j <= i; j++) ai[j] += cyi * yd[j];
    }
  }
  for (int j = 0; j < k; j++) {
    double *aj = a + (size_t)j * k;
    const double d2 = aj[j] - dot4(aj, aj, j);
    if (!(d2 > 0)) { free(a); return 1; }
    const double d = sqrt(d2);
    aj[j] = d;
    int i = j + 1;
    double s[4];
    for (; i + 4 <= k; i += 4) {
      double *r0 = a + (size_t)i * k;
      dot_rows4(r0, r0 + k, r0 + 2 * k, r0 + 3 * k, aj, j, s);
      for (int r = 0; r < 4; r++) r0[(size_t)r * k + j] = (r0[(size_t)r * k + j] - s[r]) / d;
    }
    for (; i < k; i++) {
      double *ai = a + (size_t)i * k;
      ai[j] = (ai[j] - dot4(ai, aj, j)) / d;
    }
  }
  for (int i = 0; i < k; i++) {
    double s = b[i];
    const double *ai = a + (size_t)i * k;
    for (int t = 0; t < i; t++) s -= ai[t] * b[t];
    b[i] = s / ai[i];
  }
  /* Lᵀx = b by columns of Lᵀ, that is rows of L: each step reads one row in order. */
  for (int i = k - 1; i >= 0; i--) {
    const double *ai = a + (size_t)i * k;
    const double x = b[i] / ai[i];
    b[i] = x;
    for (int t = 0; t < i; t++) b[t] -= ai[t] * x;
  }
  for (int i = 0; i < k; i++) out[i] = (float)b[i];
  free(a);
  return 0;
}
