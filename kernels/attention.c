#include "kernels/attention.h"

#include "kernels/det_math.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static float dot(const float *a, const float *b, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* Vectors of 8 floats (GCC vector extension; SSE2 pairs without -mavx).
 * Each lane does the scalar code's operations in the scalar order. */
typedef float v8sf __attribute__((vector_size(32)));
typedef float v16sf __attribute__((vector_size(64)));

#define SPLAT(a) ((v8sf){(a), (a), (a), (a), (a), (a), (a), (a)})

/* The vector loops below are compiled three times (AVX-512, AVX2, baseline x86-64)
 * and chosen at load time; both do the same IEEE operations per lane. */
#define VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

/* s[r][j] = dot(q[r], column j of xt) for four query rows r and j < n, xt
 * laid out [hd][ld]: each the same d-ascending sum as dot(). The key
 * columns are loaded once for the four rows (for long sequences they come
 * from L2); 32 keys at a time in 16-lane vectors (one AVX-512 register,
 * two AVX2 ones), then 8, then 1. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void dots_t4(
    float *const s[4], const float *const q[4], const float *xt, int ld, int n, int hd) {
  int j = 0;
  for (; j + 32 <= n; j += 32) {
    v16sf a[4][2];
    for (int r = 0; r < 4; r++) a[r][0] = a[r][1] = (v16sf){0};
    for (int d = 0; d < hd; d++) {
      const float *row = xt + (size_t)d * ld + j;
      v16sf x0, x1;
      memcpy(&x0, row, sizeof x0);
      memcpy(&x1, row + 16, sizeof x1);
      for (int r = 0; r < 4; r++) {
        v16sf qd = q[r][d] - (v16sf){0}; /* broadcast, exact (-0 too) */
        a[r][0] += qd * x0;
        a[r][1] += qd * x1;
      }
    }
    for (int r = 0; r < 4; r++) {
      memcpy(s[r] + j, &a[r][0], sizeof a[r][0]);
      memcpy(s[r] + j + 16, &a[r][1], sizeof a[r][1]);
    }
  }
  for (; j + 8 <= n; j += 8) {
    v8sf a[4];
    for (int r = 0; r < 4; r++) a[r] = SPLAT(0.0f);
    for (int d = 0; d < hd; d++) {
      v8sf x;
      memcpy(&x, xt + (size_t)d * ld + j, sizeof x);
      for (int r = 0; r < 4; r++) a[r] += SPLAT(q[r][d]) * x;
    }
    for (int r = 0; r < 4; r++) memcpy(s[r] + j, &a[r], sizeof a[r]);
  }
  for (; j < n; j++)
    for (int r = 0; r < 4; r++) {
      float acc = 0.0f;
      for (int d = 0; d < hd; d++) acc += q[r][d] * xt[(size_t)d * ld + j];
      s[r][j] = acc;
    }
}

/* y[d] += a * x[d]. */
static inline void axpy(float *y, float a, const float *x, int n) {
  int d = 0;
  v16sf aw = a - (v16sf){0}; /* broadcast, exact (-0 too) */
  for (; d + 16 <= n; d += 16) { /* one AVX-512 register, two AVX2 ones */
    v16sf xv, yv;
    memcpy(&xv, x + d, sizeof xv);
    memcpy(&yv, y + d, sizeof yv);
    yv += aw * xv;
    memcpy(y + d, &yv, sizeof yv);
  }
  v8sf av = SPLAT(a);
  for (; d + 8 <= n; d += 8) {
    v8sf xv, yv;
    memcpy(&xv, x + d, sizeof xv);
    memcpy(&yv, y + d, sizeof yv);
    yv += av * xv;
    memcpy(y + d, &yv, sizeof yv);
  }
  for (; d < n; d++) y[d] += a * x[d];
}

/* acc += sum_j c[j] * row j of x (j ascending), rows `stride` apart. */
VECTOR_CLONES static void rows_combine(float *acc, const float *c, const float *x, size_t stride,
                                       int n, int hd) {
  for (int j = 0; j < n; j++) axpy(acc, c[j], x + (size_t)j * stride, hd);
}

/* For keys j < n: acc += ds_j k_j; ak_j += ds_j qt; av_j += p_j gt. */
VECTOR_CLONES static void backward_row(float *acc, float *ak, float *av, const float *ds,
                                       const float *p, const float *kb, size_t kw,
                                       const float *qt, const float *gt, int n, int hd) {
  for (int j = 0; j < n; j++) {
    axpy(acc, ds[j], kb + (size_t)j * kw, hd);
    axpy(ak + (size_t)j * hd, ds[j], qt, hd);
    axpy(av + (size_t)j * hd, p[j], gt, hd);
  }
}

/* xt[d][j] = rows j of a [T, stride] matrix, columns [0, hd). */
static void transpose_rows(float *xt, const float *x, size_t stride, int T, int hd) {
  for (int j = 0; j < T; j++)
    for (int d = 0; d < hd; d++) xt[(size_t)d * T + j] = x[(size_t)j * stride + d];
}

void attention_forward_simple(float *y, float *lse, const float *q, const float *k, const float *v, int B,
                       int T, int heads, int kv_heads, int head_dim, int flags) {
  const int qw = heads * head_dim, kw = kv_heads * head_dim, group = heads / kv_heads;
  const float scale = 1.0f / sqrtf((float)head_dim);
#pragma omp parallel
  {
    float *s = malloc((size_t)T * sizeof *s);
    float *acc = malloc((size_t)head_dim * sizeof *acc);
    if (!s || !acc) abort();
#pragma omp for schedule(static)
    for (long row = 0; row < (long)B * heads * T; row++) {
      int t = (int)(row % T), h = (int)(row / T % heads), b = (int)(row / T / heads);
      int kvh = h / group;
      const float *qt = q + ((size_t)b * T + t) * qw + (size_t)h * head_dim;
      const float *kb = k + (size_t)b * T * kw + (size_t)kvh * head_dim;
      const float *vb = v + (size_t)b * T * kw + (size_t)kvh * head_dim;
      float m = -INFINITY;
      for (int j = 0; j <= t; j++) {
        s[j] = dot(qt, kb + (size_t)j * kw, head_dim) * scale;
        if (s[j] > m) m = s[j];
      }
      float l = 0.0f;
      for (int j = 0; j <= t; j++) {
        s[j] = det_expf(s[j] - m);
        l += s[j];
      }
      for (int d = 0; d < head_dim; d++) acc[d] = 0.0f;
      for (int j = 0; j <= t; j++) {
        const float *vj = vb + (size_t)j * kw;
        float p = s[j] / l;
        for (int d = 0; d < head_dim; d++) acc[d] += p * vj[d];
      }
      float *yt = y + ((size_t)b * T + t) * qw + (size_t)h * head_dim;
      for (int d = 0; d < head_dim; d++) yt[d] = kernel_round(acc[d], flags);
      lse[row] = m + det_logf(l);
    }
    free(s);
    free(acc);
  }
}

/* D[b, h, t] = dot(dy_t, y_t) for every query row. */
static void attention_row_dots(float *D, const float *dy, const float *y, int B, int T, int heads,
                               int head_dim) {
  const int qw = heads * head_dim;
#pragma omp parallel for schedule(static)
  for (long row = 0; row < (long)B * heads * T; row++) {
    int t = (int)(row % T), h = (int)(row / T % heads), b = (int)(row / T / heads);
    size_t off = ((size_t)b * T + t) * qw + (size_t)h * head_dim;
    D[row] = dot(dy + off, y + off, head_dim);
  }
}

void attention_backward_simple(float *dq, float *dk, float *dv, const float *dy, const float *y,
                        const float *lse, const float *q, const float *k, const float *v, int B,
                        int T, int heads, int kv_heads, int head_dim, int flags) {
  const int qw = heads * head_dim, kw = kv_heads * head_dim, group = heads / kv_heads;
  const float scale = 1.0f / sqrtf((float)head_dim);
  flags &= ~KERNEL_ACCUMULATE;
  float *D = malloc((size_t)B * heads * T * sizeof *D);
  if (!D) abort();
  attention_row_dots(D, dy, y, B, T, heads, head_dim);
#pragma omp parallel
  {
    float *acc = malloc((size_t)2 * head_dim * sizeof *acc);
    if (!acc) abort();
    /* dq: one query row per iteration. */
#pragma omp for schedule(static)
    for (long row = 0; row < (long)B * heads * T; row++) {
      int t = (int)(row % T), h = (int)(row / T % heads), b = (int)(row / T / heads);
      int kvh = h / group;
      size_t qoff = ((size_t)b * T + t) * qw + (size_t)h * head_dim;
      const float *kb = k + (size_t)b * T * kw + (size_t)kvh * head_dim;
      const float *vb = v + (size_t)b * T * kw + (size_t)kvh * head_dim;
      for (int d = 0; d < head_dim; d++) acc[d] = 0.0f;
      for (int j = 0; j <= t; j++) {
        const float *kj = kb + (size_t)j * kw;
        float p = det_expf(dot(q + qoff, kj, head_dim) * scale - lse[row]);
        float ds = p * (dot(dy + qoff, vb + (size_t)j * kw, head_dim) - D[row]);
        for (int d = 0; d < head_dim; d++) acc[d] += ds * kj[d];
      }
      for (int d = 0; d < head_dim; d++) dq[qoff + d] = kernel_round(acc[d] * scale, flags);
    }
    /* dk, dv: one key row per iteration, over its group's query heads. */
#pragma omp for schedule(static)
    for (long row = 0; row < (long)B * kv_heads * T; row++) {
      int j = (int)(row % T), kvh = (int)(row / T % kv_heads), b = (int)(row / T / kv_heads);
      size_t koff = ((size_t)b * T + j) * kw + (size_t)kvh * head_dim;
      float *ak = acc, *av = acc + head_dim;
      for (int d = 0; d < head_dim; d++) ak[d] = av[d] = 0.0f;
      for (int h = kvh * group; h < (kvh + 1) * group; h++)
        for (int t = j; t < T; t++) {
          size_t qoff = ((size_t)b * T + t) * qw + (size_t)h * head_dim;
          long qrow = ((long)b * heads + h) * T + t;
          float p = det_expf(dot(q + qoff, k + koff, head_dim) * scale - lse[qrow]);
          float ds = p * (dot(dy + qoff, v + koff, head_dim) - D[qrow]);
          for (int d = 0; d < head_dim; d++) {
            ak[d] += ds * q[qoff + d];
            av[d] += p * dy[qoff + d];
          }
        }
      for (int d = 0; d < head_dim; d++) {
        dk[koff + d] = kernel_round(ak[d] * scale, flags);
        dv[koff + d] = kernel_round(av[d], flags);
      }
    }
    free(acc);
  }
  free(D);
}

/* The same sums as attention_backward_simple, in the same order, computed
 * once per (query, key) pair: one thread owns a (sequence, KV head) pair,
 * walks its group's query heads h and rows t in ascending order, writes
 * dq_t, and adds ds_tj q_t and p_tj dy_t into row accumulators for every
 * key j <= t, so each dk_j / dv_j still receives its terms in (h, t)
 * order. */
void attention_backward(float *dq, float *dk, float *dv, const float *dy, const float *y,
                        const float *lse, const float *q, const float *k, const float *v, int B,
                        int T, int heads, int kv_heads, int head_dim, int flags) {
  const int qw = heads * head_dim, kw = kv_heads * head_dim, group = heads / kv_heads;
  const float scale = 1.0f / sqrtf((float)head_dim);
  flags &= ~KERNEL_ACCUMULATE;
  float *D = malloc((size_t)B * heads * T * sizeof *D);
  if (!D) abort();
  attention_row_dots(D, dy, y, B, T, heads, head_dim);
#pragma omp parallel
  {
    float *ak = malloc((size_t)T * head_dim * sizeof *ak);
    float *av = malloc((size_t)T * head_dim * sizeof *av);
    float *acc = malloc((size_t)head_dim * sizeof *acc);
    float *kt = malloc((size_t)T * head_dim * sizeof *kt), *vt = malloc((size_t)T * head_dim * sizeof *vt);
    float *sc4 = malloc((size_t)8 * T * sizeof *sc4); /* scores, dy.v of 4 rows */
    if (!ak || !av || !acc || !kt || !vt || !sc4) abort();
#pragma omp for schedule(static)
    for (int item = 0; item < B * kv_heads; item++) {
      int b = item / kv_heads, kvh = item % kv_heads;
      const float *kb = k + (size_t)b * T * kw + (size_t)kvh * head_dim;
      const float *vb = v + (size_t)b * T * kw + (size_t)kvh * head_dim;
      for (size_t i = 0; i < (size_t)T * head_dim; i++) ak[i] = av[i] = 0.0f;
      transpose_rows(kt, kb, (size_t)kw, T, head_dim);
      transpose_rows(vt, vb, (size_t)kw, T, head_dim);
      for (int h = kvh * group; h < (kvh + 1) * group; h++)
        for (int t0 = 0; t0 < T; t0 += 4) {
          /* The dot products of four rows first (they only read); then
           * each row's updates in t order, as before. Rows past T repeat
           * the last row; their results are unused. */
          const float *q4[4], *g4[4];
          float *sc[4], *dp[4];
          for (int r = 0; r < 4; r++) {
            int t = t0 + r < T ? t0 + r : T - 1;
            size_t qoff = ((size_t)b * T + t) * qw + (size_t)h * head_dim;
            q4[r] = q + qoff;
            g4[r] = dy + qoff;
            sc[r] = sc4 + (size_t)r * T;
            dp[r] = sc4 + (size_t)(4 + r) * T;
          }
          int n = t0 + 4 < T ? t0 + 4 : T;
          dots_t4(sc, q4, kt, T, n, head_dim);
          dots_t4(dp, g4, vt, T, n, head_dim);
          for (int r = 0; r < 4 && t0 + r < T; r++) {
            int t = t0 + r;
            long row = ((long)b * heads + h) * T + t;
            size_t qoff = ((size_t)b * T + t) * qw + (size_t)h * head_dim;
            for (int d = 0; d < head_dim; d++) acc[d] = 0.0f;
            for (int j = 0; j <= t; j++) sc[r][j] = sc[r][j] * scale;
            det_expf_shift_array(sc[r], sc[r], lse[row], (size_t)t + 1); /* p */
            for (int j = 0; j <= t; j++) dp[r][j] = sc[r][j] * (dp[r][j] - D[row]); /* ds */
            backward_row(acc, ak, av, dp[r], sc[r], kb, (size_t)kw, q4[r], g4[r], t + 1,
                         head_dim);
            for (int d = 0; d < head_dim; d++) dq[qoff + d] = kernel_round(acc[d] * scale, flags);
          }
        }
      for (int j = 0; j < T; j++) {
        size_t koff = ((size_t)b * T + j) * kw + (size_t)kvh * head_dim;
        for (int d = 0; d < head_dim; d++) {
          dk[koff + d] = kernel_round(ak[(size_t)j * head_dim + d] * scale, flags);
          dv[koff + d] = kernel_round(av[(size_t)j * head_dim + d], flags);
        }
      }
    }
    free(ak);
    free(av);
    free(acc);
    free(kt);
    free(vt);
    free(sc4);
  }
  free(D);
}

/* The forward of attention_forward_simple with the same sums: one thread
 * per (sequence, head); keys transposed so eight scores are summed at once
 * (each in d order), y accumulated eight channels at once (j order). */
void attention_forward(float *y, float *lse, const float *q, const float *k, const float *v, int B,
                       int T, int heads, int kv_heads, int head_dim, int flags) {
  const int qw = heads * head_dim, kw = kv_heads * head_dim, group = heads / kv_heads;
  const float scale = 1.0f / sqrtf((float)head_dim);
#pragma omp parallel
  {
    float *s4 = malloc((size_t)4 * T * sizeof *s4), *kt = malloc((size_t)T * head_dim * sizeof *kt);
    float *acc = malloc((size_t)head_dim * sizeof *acc);
    if (!s4 || !kt || !acc) abort();
#pragma omp for schedule(static)
    for (int item = 0; item < B * heads; item++) {
      int b = item / heads, h = item % heads, kvh = h / group;
      const float *kb = k + (size_t)b * T * kw + (size_t)kvh * head_dim;
      const float *vb = v + (size_t)b * T * kw + (size_t)kvh * head_dim;
      transpose_rows(kt, kb, (size_t)kw, T, head_dim);
      for (int t0 = 0; t0 < T; t0 += 4) {
        /* Scores of four rows at once; rows past T repeat the last one. */
        const float *q4[4];
        float *s4r[4];
        for (int r = 0; r < 4; r++) {
          int t = t0 + r < T ? t0 + r : T - 1;
          q4[r] = q + ((size_t)b * T + t) * qw + (size_t)h * head_dim;
          s4r[r] = s4 + (size_t)r * T;
        }
        dots_t4(s4r, q4, kt, T, t0 + 4 < T ? t0 + 4 : T, head_dim);
        for (int r = 0; r < 4 && t0 + r < T; r++) {
          const int t = t0 + r;
          float *s = s4r[r];
          float m = -INFINITY;
          for (int j = 0; j <= t; j++) {
            s[j] = s[j] * scale;
            if (s[j] > m) m = s[j];
          }
          float l = 0.0f;
          det_expf_shift_array(s, s, m, (size_t)t + 1);
          for (int j = 0; j <= t; j++) l += s[j];
          for (int d = 0; d < head_dim; d++) acc[d] = 0.0f;
          for (int j = 0; j <= t; j++) s[j] = s[j] / l;
          rows_combine(acc, s, vb, (size_t)kw, t + 1, head_dim);
          float *yt = y + ((size_t)b * T + t) * qw + (size_t)h * head_dim;
          for (int d = 0; d < head_dim; d++) yt[d] = kernel_round(acc[d], flags);
          lse[((long)b * heads + h) * T + t] = m + det_logf(l);
        }
      }
    }
    free(s4);
    free(kt);
    free(acc);
  }
}
