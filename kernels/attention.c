#include "kernels/attention.h"

#include "kernels/det_expf32.h"
#include "kernels/det_math.h"
#include "kernels/gemm.h"
#include "kernels/scratch.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The attention's exponential: det_expf in float32, det_expf32 (float32
 * arithmetic alone, within a unit of det_expf: kernels/det_expf32.h)
 * under KERNEL_BF16, as the GPU's kernels take it. */
static float attention_exp(float x, int flags) {
  return (flags & KERNEL_BF16) ? det_expf32_hd(x) : det_expf(x);
}

/* y[i] = attention_exp(x[i] - sub) for i < n (y may be x), vectorised
 * (kernels/det_math.h). */
static void attention_exp_shift(float *y, const float *x, float sub, size_t n, int flags) {
  if (flags & KERNEL_BF16)
    det_expf32_shift_array(y, x, sub, n);
  else
    det_expf_shift_array(y, x, sub, n);
}

/* d ascending, one fused multiply-add per term (kernels/gemm.h's sum). */
static float dot(const float *a, const float *b, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; i++) s = fmaf(a[i], b[i], s);
  return s;
}

/* Query rows per block of the blocked kernels: each block packs the keys
 * and values it reads again, so fewer blocks pack less; the block's
 * scores (QB x T floats, twice in the backward) still fit in L2 at
 * T = 1024. */
enum { QB = 256 };

/* C[m][n] = sum_k A[m*sam + k*sak] B[n*sbn + k*sbk] by the calling thread
 * (kernels/gemm.h: k ascending, one FMA per term). */
static void product(float *C, size_t ldc, const float *A, size_t sam, size_t sak, const float *B,
                    size_t sbn, size_t sbk, int M, int N, int K, int tri, int diag, int cont) {
  gemm g = {A, B, sam, sak, sbn, sbk, M, N, K, C, ldc, 0, tri, diag, cont, NULL, 0};
  gemm_serial(&g);
}

/* The same with B packed once per head by pack() (kp terms deep). */
static void product_packed(float *C, size_t ldc, const float *A, size_t sam, size_t sak,
                           const float *Bp, int kp, int M, int N, int K, int tri, int diag) {
  gemm g = {A, NULL, sam, sak, 0, 0, M, N, K, C, ldc, 0, tri, diag, 0, Bp, kp};
  gemm_serial(&g);
}

/* P = B(n, k) = X[n*sbn + k*sbk] for n < N, k < K, packed for
 * product_packed: the keys and values every query block reads. */
static void pack(float *P, const float *X, size_t sbn, size_t sbk, int N, int K) {
  gemm g = {NULL, X, 0, 0, sbn, sbk, 0, N, K, NULL, 0, 0, 0, 0, 0, NULL, 0};
  gemm_pack_b(P, &g);
}

void attention_forward_simple(float *y, float *lse, const float *q, const float *k, const float *v,
                              int B, int T, int heads, int kv_heads, int head_dim, int flags) {
  const int qw = heads * head_dim, kw = kv_heads * head_dim, group = heads / kv_heads;
  const int bf = flags & KERNEL_BF16;
  const float scale = attention_scale(head_dim);
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
        s[j] = attention_exp(s[j] - m, flags);
        l += s[j];
      }
      for (int d = 0; d < head_dim; d++) acc[d] = 0.0f;
      for (int j = 0; j <= t; j++) {
        const float *vj = vb + (size_t)j * kw;
        float p = bf ? bf16_round(s[j]) : s[j] / l;
        for (int d = 0; d < head_dim; d++) acc[d] = fmaf(p, vj[d], acc[d]);
      }
      float *yt = y + ((size_t)b * T + t) * qw + (size_t)h * head_dim;
      for (int d = 0; d < head_dim; d++) yt[d] = kernel_round(bf ? acc[d] / l : acc[d], flags);
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
                               const float *lse, const float *q, const float *k, const float *v,
                               int B, int T, int heads, int kv_heads, int head_dim, int flags) {
  const int qw = heads * head_dim, kw = kv_heads * head_dim, group = heads / kv_heads;
  const float scale = attention_scale(head_dim);
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
        float p = attention_exp(dot(q + qoff, kj, head_dim) * scale - lse[row], flags);
        float ds =
            kernel_round(p * (dot(dy + qoff, vb + (size_t)j * kw, head_dim) - D[row]), flags);
        for (int d = 0; d < head_dim; d++) acc[d] = fmaf(ds, kj[d], acc[d]);
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
          float p = attention_exp(dot(q + qoff, k + koff, head_dim) * scale - lse[qrow], flags);
          float ds = kernel_round(p * (dot(dy + qoff, v + koff, head_dim) - D[qrow]), flags);
          p = kernel_round(p, flags);
          for (int d = 0; d < head_dim; d++) {
            ak[d] = fmaf(ds, q[qoff + d], ak[d]);
            av[d] = fmaf(p, dy[qoff + d], av[d]);
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

/* Vectors of 8 floats (GCC vector extension; SSE2 pairs in the baseline
 * clone): each lane does the scalar code's IEEE operation, so any width
 * gives the scalar bits. */
typedef float v8sf __attribute__((vector_size(32)));
typedef int v8si __attribute__((vector_size(32)));
#define VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

/* s[j] *= scale for j < n; returns the max of the scaled s (-inf if
 * n = 0). A max is exact in any order, so lanes may take it apart. */
VECTOR_CLONES static float scale_max(float *s, int n, float scale) {
  v8sf mv = (v8sf){0} - INFINITY, sc = (v8sf){0} + scale;
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    v8sf x;
    memcpy(&x, s + j, sizeof x);
    x = x * sc;
    memcpy(s + j, &x, sizeof x);
    v8si gt = x > mv; /* lanes where x is larger take x */
    mv = (v8sf)(((v8si)x & gt) | ((v8si)mv & ~gt));
  }
  float m = -INFINITY;
  for (int i = 0; i < 8; i++)
    if (mv[i] > m) m = mv[i];
  for (; j < n; j++) {
    s[j] = s[j] * scale;
    if (s[j] > m) m = s[j];
  }
  return m;
}

/* s[j] *= c for j < n. */
VECTOR_CLONES static void scale_row(float *s, int n, float c) {
  v8sf cv = (v8sf){0} + c;
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    v8sf x;
    memcpy(&x, s + j, sizeof x);
    x = x * cv;
    memcpy(s + j, &x, sizeof x);
  }
  for (; j < n; j++) s[j] = s[j] * c;
}

/* g[j] = p[j] * (g[j] - D) for j < n: the score gradients. */
VECTOR_CLONES static void score_grads(float *g, const float *p, int n, float D) {
  v8sf dv = (v8sf){0} + D;
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    v8sf x, y;
    memcpy(&x, g + j, sizeof x);
    memcpy(&y, p + j, sizeof y);
    x = y * (x - dv);
    memcpy(g + j, &x, sizeof x);
  }
  for (; j < n; j++) g[j] = p[j] * (g[j] - D);
}

/* The probabilities and score gradients of query rows [t0, t1) of one
 * head, in place: row r of S holds the raw scores q_t . k_j and of G the
 * products dy_t . v_j for j <= t (t = t0 + r); afterwards S holds p_tj and
 * G holds ds_tj = p_tj (dy_t . v_j - D_t) (both rounded to bf16 under
 * KERNEL_BF16), as attention_backward_simple computes them. */
static void backward_probs(float *S, float *G, size_t ld, const float *lse, const float *D, int t0,
                           int t1, float scale, int flags) {
  for (int t = t0; t < t1; t++) {
    float *s = S + (size_t)(t - t0) * ld, *g = G + (size_t)(t - t0) * ld;
    scale_row(s, t + 1, scale);
    attention_exp_shift(s, s, lse[t], (size_t)t + 1, flags); /* p */
    score_grads(g, s, t + 1, D[t]);
    if (flags & KERNEL_BF16)
      for (int j = 0; j <= t; j++) {
        s[j] = bf16_round(s[j]);
        g[j] = bf16_round(g[j]);
      }
  }
}

/* The same sums as attention_backward_simple, in the same order, each a
 * kernels/gemm.h product: one thread owns a (sequence, KV head) pair and
 * walks its group's query heads h and blocks of query rows in ascending
 * order. Per block it recomputes the scores S = Q K^T and G = dY V^T
 * (the causal triangle's tiles), turns them into p and ds, writes
 * dq = scale (ds K) (k <= t terms), and continues the running sums
 * dk_j += sum_t ds_tj q_t and dv_j += sum_t p_tj dy_t (t >= j terms) from
 * the previous block and head, so each dk_j / dv_j still receives its
 * terms in (h, t) order. */
void attention_backward(float *dq, float *dk, float *dv, const float *dy, const float *y,
                        const float *lse, const float *q, const float *k, const float *v, int B,
                        int T, int heads, int kv_heads, int head_dim, int flags) {
  const int qw = heads * head_dim, kw = kv_heads * head_dim, group = heads / kv_heads,
            hd = head_dim;
  const float scale = attention_scale(head_dim);
  flags &= ~KERNEL_ACCUMULATE;
  float *D = malloc((size_t)B * heads * T * sizeof *D);
  if (!D) abort();
  attention_row_dots(D, dy, y, B, T, heads, head_dim);
#pragma omp parallel
  {
    /* The products' panels copy whole rows of S and G, entries past the
     * diagonal included: never used, but defined (kernels/scratch.h). */
    float *S = scratch_floats(SCRATCH_ATT_S, (size_t)QB * T);
    float *G = scratch_floats(SCRATCH_ATT_G, (size_t)QB * T);
    float *ak = scratch_floats(SCRATCH_ATT_DK, (size_t)T * hd);
    float *av = scratch_floats(SCRATCH_ATT_DV, (size_t)T * hd);
    float *kn = scratch_floats(SCRATCH_ATT_K, gemm_packed_b_floats(T, hd));
    float *vn = scratch_floats(SCRATCH_ATT_V, gemm_packed_b_floats(T, hd));
    float *kd = scratch_floats(SCRATCH_ATT_KT, gemm_packed_b_floats(hd, T));
#pragma omp for schedule(static)
    for (int item = 0; item < B * kv_heads; item++) {
      int b = item / kv_heads, kvh = item % kv_heads;
      const float *kb = k + (size_t)b * T * kw + (size_t)kvh * hd;
      const float *vb = v + (size_t)b * T * kw + (size_t)kvh * hd;
      for (size_t i = 0; i < (size_t)T * hd; i++) ak[i] = av[i] = 0.0f;
      pack(kn, kb, kw, 1, T, hd); /* B(n = j, k = d) */
      pack(vn, vb, kw, 1, T, hd);
      pack(kd, kb, 1, kw, hd, T); /* B(n = d, k = j) */
      for (int h = kvh * group; h < (kvh + 1) * group; h++) {
        const size_t hoff = (size_t)b * T * qw + (size_t)h * hd;
        const long row0 = ((long)b * heads + h) * T;
        for (int t0 = 0; t0 < T; t0 += QB) {
          const int t1 = t0 + QB < T ? t0 + QB : T, nb = t1 - t0;
          const float *qt = q + hoff + (size_t)t0 * qw, *gt = dy + hoff + (size_t)t0 * qw;
          product_packed(S, T, qt, qw, 1, kn, hd, nb, t1, hd, GEMM_N_LE_M, t0);
          product_packed(G, T, gt, qw, 1, vn, hd, nb, t1, hd, GEMM_N_LE_M, t0);
          backward_probs(S, G, T, lse + row0, D + row0, t0, t1, scale, flags);
          float *dqt = dq + hoff + (size_t)t0 * qw;
          product_packed(dqt, qw, G, T, 1, kd, T, nb, hd, t1, GEMM_K_LE_M, t0);
          for (int r = 0; r < nb; r++)
            for (int d = 0; d < hd; d++)
              dqt[(size_t)r * qw + d] = kernel_round(dqt[(size_t)r * qw + d] * scale, flags);
          product(ak, hd, G, 1, T, qt, 1, qw, t1, hd, nb, GEMM_K_GE_M, -t0, 1);
          product(av, hd, S, 1, T, gt, 1, qw, t1, hd, nb, GEMM_K_GE_M, -t0, 1);
        }
      }
      for (int j = 0; j < T; j++) {
        size_t koff = ((size_t)b * T + j) * kw + (size_t)kvh * hd;
        for (int d = 0; d < hd; d++) {
          dk[koff + d] = kernel_round(ak[(size_t)j * hd + d] * scale, flags);
          dv[koff + d] = kernel_round(av[(size_t)j * hd + d], flags);
        }
      }
    }
  }
  free(D);
}

/* s[j] /= l for j < n (IEEE division per lane). */
VECTOR_CLONES static void divide(float *s, int n, float l) {
  v8sf lv = (v8sf){0} + l;
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    v8sf x;
    memcpy(&x, s + j, sizeof x);
    x = x / lv;
    memcpy(s + j, &x, sizeof x);
  }
  for (; j < n; j++) s[j] = s[j] / l;
}

/* l[i] = sum_{j < n[i]} s[i][j], j ascending, for four rows with n
 * ascending: four independent chains of additions interleaved (one
 * chain's latency would bound the loop), each in its own row's order. */
static void row_sums4(float l[4], float *const s[4], const int n[4]) {
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  const int c = n[0];
  for (int j = 0; j < c; j++) {
    a0 += s[0][j];
    a1 += s[1][j];
    a2 += s[2][j];
    a3 += s[3][j];
  }
  for (int j = c; j < n[1]; j++) a1 += s[1][j];
  for (int j = c; j < n[2]; j++) a2 += s[2][j];
  for (int j = c; j < n[3]; j++) a3 += s[3][j];
  l[0] = a0;
  l[1] = a1;
  l[2] = a2;
  l[3] = a3;
}

/* Softmax of query rows [t0, t1) of one head in place (row r of S holds
 * the raw scores of t = t0 + r for j <= t; afterwards p_tj, or under
 * KERNEL_BF16 the unnormalised bf16(e_tj), with l_t in lsum[r]), and
 * their lse, as attention_forward_simple computes them: the same
 * operations per element, the sums l_t in j order. */
static void forward_probs(float *S, size_t ld, float *lse, float *lsum, int t0, int t1, float scale,
                          int flags) {
  float mx[QB];
  for (int t = t0; t < t1; t++) {
    float *s = S + (size_t)(t - t0) * ld;
    mx[t - t0] = scale_max(s, t + 1, scale);
    attention_exp_shift(s, s, mx[t - t0], (size_t)t + 1, flags);
  }
  for (int r = 0; r < t1 - t0; r += 4) { /* rows past t1 repeat the last */
    float *s4[4], l4[4];
    int n4[4];
    for (int i = 0; i < 4; i++) {
      int rr = r + i < t1 - t0 ? r + i : t1 - t0 - 1;
      s4[i] = S + (size_t)rr * ld;
      n4[i] = t0 + rr + 1;
    }
    row_sums4(l4, s4, n4);
    for (int i = 0; i < 4 && r + i < t1 - t0; i++) lsum[r + i] = l4[i];
  }
  for (int t = t0; t < t1; t++) {
    float *s = S + (size_t)(t - t0) * ld, l = lsum[t - t0];
    if (flags & KERNEL_BF16)
      for (int j = 0; j <= t; j++) s[j] = bf16_round(s[j]);
    else
      divide(s, t + 1, l);
    lse[t] = mx[t - t0] + det_logf(l);
  }
}

/* The forward of attention_forward_simple with the same sums: one thread
 * per (sequence, head), blocks of query rows; per block the scores
 * S = Q K^T (the causal triangle's tiles) and y = P V (k <= t terms) are
 * kernels/gemm.h products, each sum in the simple loop's order. */
void attention_forward(float *y, float *lse, const float *q, const float *k, const float *v, int B,
                       int T, int heads, int kv_heads, int head_dim, int flags) {
  const int qw = heads * head_dim, kw = kv_heads * head_dim, group = heads / kv_heads,
            hd = head_dim;
  const float scale = attention_scale(head_dim);
#pragma omp parallel
  {
    float *S = scratch_floats(SCRATCH_ATT_S, (size_t)QB * T); /* see attention_backward */
    float *kn = scratch_floats(SCRATCH_ATT_K, gemm_packed_b_floats(T, hd));
    float *vd = scratch_floats(SCRATCH_ATT_V, gemm_packed_b_floats(hd, T));
    float lsum[QB];
#pragma omp for schedule(static)
    for (int item = 0; item < B * heads; item++) {
      int b = item / heads, h = item % heads, kvh = h / group;
      const float *kb = k + (size_t)b * T * kw + (size_t)kvh * hd;
      const float *vb = v + (size_t)b * T * kw + (size_t)kvh * hd;
      const size_t hoff = (size_t)b * T * qw + (size_t)h * hd;
      pack(kn, kb, kw, 1, T, hd); /* B(n = j, k = d) */
      pack(vd, vb, 1, kw, hd, T); /* B(n = d, k = j) */
      for (int t0 = 0; t0 < T; t0 += QB) {
        const int t1 = t0 + QB < T ? t0 + QB : T, nb = t1 - t0;
        product_packed(S, T, q + hoff + (size_t)t0 * qw, qw, 1, kn, hd, nb, t1, hd, GEMM_N_LE_M,
                       t0);
        forward_probs(S, T, lse + ((long)b * heads + h) * T, lsum, t0, t1, scale, flags);
        float *yt = y + hoff + (size_t)t0 * qw;
        product_packed(yt, qw, S, T, 1, vd, T, nb, hd, t1, GEMM_K_LE_M, t0);
        if (flags & KERNEL_BF16) /* flash attention's late division */
          for (int r = 0; r < nb; r++)
            for (int d = 0; d < hd; d++)
              yt[(size_t)r * qw + d] = bf16_round(yt[(size_t)r * qw + d] / lsum[r]);
      }
    }
  }
}
