#include "kernels/attention.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

static float dot(const float *a, const float *b, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

void attention_forward(float *y, float *lse, const float *q, const float *k, const float *v, int B,
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
        s[j] = expf(s[j] - m);
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
      lse[row] = m + logf(l);
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
        float p = expf(dot(q + qoff, kj, head_dim) * scale - lse[row]);
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
          float p = expf(dot(q + qoff, k + koff, head_dim) * scale - lse[qrow]);
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
