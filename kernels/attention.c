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

#define SPLAT(a) ((v8sf){(a), (a), (a), (a), (a), (a), (a), (a)})

/* The vector loops below are compiled twice (AVX2 and baseline x86-64)
 * and chosen at load time; both do the same IEEE operations per lane. */
#define VECTOR_CLONES __attribute__((target_clones("avx2", "default")))

/* s[j] = dot(q, column j of xt) for j < n, xt laid out [hd][ld]: the same
 * d-ascending sum as dot(), 32 keys at a time (four independent chains). */
VECTOR_CLONES static void dots_t(float *s, const float *q, const float *xt, int ld, int n,
                                 int hd) {
  int j = 0;
  for (; j + 32 <= n; j += 32) {
    v8sf a0 = SPLAT(0.0f), a1 = a0, a2 = a0, a3 = a0;
    for (int d = 0; d < hd; d++) {
      const float *row = xt + (size_t)d * ld + j;
      v8sf x0, x1, x2, x3, qd = SPLAT(q[d]);
      memcpy(&x0, row, sizeof x0);
      memcpy(&x1, row + 8, sizeof x1);
      memcpy(&x2, row + 16, sizeof x2);
      memcpy(&x3, row + 24, sizeof x3);
      a0 += qd * x0;
      a1 += qd * x1;
      a2 += qd * x2;
      a3 += qd * x3;
    }
    memcpy(s + j, &a0, sizeof a0);
    memcpy(s + j + 8, &a1, sizeof a1);
    memcpy(s + j + 16, &a2, sizeof a2);
    memcpy(s + j + 24, &a3, sizeof a3);
  }
  for (; j + 8 <= n; j += 8) {
    v8sf acc = SPLAT(0.0f);
    for (int d = 0; d < hd; d++) {
      v8sf x;
      memcpy(&x, xt + (size_t)d * ld + j, sizeof x);
      acc += SPLAT(q[d]) * x;
    }
    memcpy(s + j, &acc, sizeof acc);
  }
  for (; j < n; j++) {
    float a = 0.0f;
    for (int d = 0; d < hd; d++) a += q[d] * xt[(size_t)d * ld + j];
    s[j] = a;
  }
}

/* y[d] += a * x[d]. */
static inline void axpy(float *y, float a, const float *x, int n) {
  int d = 0;
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
    float *sc = malloc((size_t)T * sizeof *sc), *dp = malloc((size_t)T * sizeof *dp);
    if (!ak || !av || !acc || !kt || !vt || !sc || !dp) abort();
#pragma omp for schedule(static)
    for (int item = 0; item < B * kv_heads; item++) {
      int b = item / kv_heads, kvh = item % kv_heads;
      const float *kb = k + (size_t)b * T * kw + (size_t)kvh * head_dim;
      const float *vb = v + (size_t)b * T * kw + (size_t)kvh * head_dim;
      for (size_t i = 0; i < (size_t)T * head_dim; i++) ak[i] = av[i] = 0.0f;
      transpose_rows(kt, kb, (size_t)kw, T, head_dim);
      transpose_rows(vt, vb, (size_t)kw, T, head_dim);
      for (int h = kvh * group; h < (kvh + 1) * group; h++)
        for (int t = 0; t < T; t++) {
          long row = ((long)b * heads + h) * T + t;
          size_t qoff = ((size_t)b * T + t) * qw + (size_t)h * head_dim;
          const float *qt = q + qoff, *gt = dy + qoff;
          for (int d = 0; d < head_dim; d++) acc[d] = 0.0f;
          dots_t(sc, qt, kt, T, t + 1, head_dim);
          dots_t(dp, gt, vt, T, t + 1, head_dim);
          for (int j = 0; j <= t; j++) sc[j] = sc[j] * scale;
          det_expf_shift_array(sc, sc, lse[row], (size_t)t + 1); /* p */
          for (int j = 0; j <= t; j++) dp[j] = sc[j] * (dp[j] - D[row]); /* ds */
          backward_row(acc, ak, av, dp, sc, kb, (size_t)kw, qt, gt, t + 1, head_dim);
          for (int d = 0; d < head_dim; d++) dq[qoff + d] = kernel_round(acc[d] * scale, flags);
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
    free(sc);
    free(dp);
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
    float *s = malloc((size_t)T * sizeof *s), *kt = malloc((size_t)T * head_dim * sizeof *kt);
    float *acc = malloc((size_t)head_dim * sizeof *acc);
    if (!s || !kt || !acc) abort();
#pragma omp for schedule(static)
    for (int item = 0; item < B * heads; item++) {
      int b = item / heads, h = item % heads, kvh = h / group;
      const float *kb = k + (size_t)b * T * kw + (size_t)kvh * head_dim;
      const float *vb = v + (size_t)b * T * kw + (size_t)kvh * head_dim;
      transpose_rows(kt, kb, (size_t)kw, T, head_dim);
      for (int t = 0; t < T; t++) {
        const float *qt = q + ((size_t)b * T + t) * qw + (size_t)h * head_dim;
        dots_t(s, qt, kt, T, t + 1, head_dim);
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
    free(s);
    free(kt);
    free(acc);
  }
}
