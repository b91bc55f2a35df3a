/* The CPU twins of the CUDA reductions (the *_tree_ref functions), for
 * every op but rmsnorm (tests/test_reduce_tree.c):
 *   - shape: each tree ref equals the bare tree of kernels/reduce_tree.h
 *     (tree_sum_ref, tree_sum_f64_ref) applied to the op's terms, bit for
 *     bit, so it reduces in the order the GPU does;
 *   - accuracy: against float64 sums, within the documented tolerances;
 *   - the elementwise parts (dy, dx, dx0, dq, th) equal the sequential CPU
 *     kernels bit for bit, and the sums agree with theirs to rounding.
 * Sizes leave lanes empty (rows < 256), fill them and wrap them (rows >
 * 256, not a multiple), and channel counts that do not fill the GPU's
 * 8-channel tiles. On a GPU the CUDA kernels must equal these refs bit for
 * bit (tests/test_cuda_ops.c). */
#include "tests/test_util.h"

#include <float.h>
#include <math.h>

#include "kernels/bf16.h"
#include "kernels/col_dot.h"
#include "kernels/det_math.h"
#include "kernels/embedding.h"
#include "kernels/l2norm.h"
#include "kernels/q_gain.h"
#include "kernels/reduce_tree.h"
#include "kernels/residual_mix.h"
#include "kernels/scale_add.h"
#include "kernels/softcap_cross_entropy.h"
#include "tests/kernel_check.h"

static float *alloc_fill(kc_rng *rng, size_t n, double scale) {
  float *x = malloc(n * sizeof *x);
  assert_non_null(x);
  kc_fill(rng, x, n, scale);
  return x;
}

/* |a - b| <= ulps float32 ulps of the larger magnitude. */
static int within_ulps(float a, float b, int ulps) {
  float m = fabsf(a) > fabsf(b) ? fabsf(a) : fabsf(b);
  int e;
  frexpf(m, &e);
  double ulp = ldexp(1.0, (e - 24) < -149 ? -149 : e - 24);
  return fabs((double)a - (double)b) <= ulps * ulp;
}

/* col_dot_tree_ref(out = 0) is (float)tree_sum_f64_ref of the channel's
 * terms, rounded under bf16; it is within the float64 sum's accuracy
 * (each term is a float32 product: |err| <= 2^-24 (sum |t| + |S|)), and
 * within one float32 ulp of the sequential CPU sum (scale_add_backward's
 * ds); added onto a non-zero gradient. */
static void test_col_dot(void **state) {
  (void)state;
  const int shapes[][2] = {{37, 13}, {256, 8}, {600, 100}, {1000, 3}};
  kc_rng rng = {101};
  for (int k = 0; k < 4; k++) {
    int rows = shapes[k][0], d = shapes[k][1];
    size_t n = (size_t)rows * d;
    float *a = alloc_fill(&rng, n, 1.0), *b = alloc_fill(&rng, n, 2.0);
    float *out = calloc((size_t)d, sizeof *out), *seq = calloc((size_t)d, sizeof *seq);
    float *dy = malloc(n * sizeof *dy), *s = alloc_fill(&rng, (size_t)d, 1.0);
    double *terms = malloc((size_t)rows * sizeof *terms);
    for (int f = 0; f < 2; f++) {
      int flags = f ? KERNEL_BF16 : 0;
      memset(out, 0, (size_t)d * sizeof *out);
      memset(seq, 0, (size_t)d * sizeof *seq);
      col_dot_tree_ref(out, a, b, rows, d, flags);
      scale_add_backward(dy, seq, a, s, b, rows, d, flags);
      for (int c = 0; c < d; c++) {
        double exact = 0.0, mag = 0.0;
        for (int r = 0; r < rows; r++) {
          float t = col_dot_term(a[(size_t)r * d + c], b[(size_t)r * d + c], flags);
          terms[r] = t;
          exact += (double)a[(size_t)r * d + c] * b[(size_t)r * d + c];
          mag += fabs(terms[r]);
        }
        float want = kernel_round((float)tree_sum_f64_ref(terms, (size_t)rows), flags);
        assert_true(hd_float_bits(out[c]) == hd_float_bits(want));
        if (f) {
          assert_true(bf16_is_exact(out[c]));
          assert_true(fabs(out[c] - exact) <= 0x1p-8 * (mag + fabs(exact)));
        } else {
          assert_true(fabs(out[c] - exact) <= 0x1p-24 * (mag + fabs(exact)) + rows * 0x1p-52 * mag);
          assert_true(within_ulps(out[c], seq[c], 1));
        }
      }
    }
    /* Accumulates onto the gradient: out + round(sum). */
    for (int c = 0; c < d; c++) out[c] = 0.5f;
    col_dot_tree_ref(out, a, b, rows, d, 0);
    memset(seq, 0, (size_t)d * sizeof *seq);
    col_dot_tree_ref(seq, a, b, rows, d, 0);
    for (int c = 0; c < d; c++) assert_true(out[c] == 0.5f + seq[c]);
    free(a), free(b), free(out), free(seq), free(dy), free(s), free(terms);
  }
}

/* The order, by hand: rows 0 and 256 are lane 0's (+2^60 then -2^60),
 * row 128 is lane 128's (1), so the tree gives 1 where an ascending
 * float64 sum gives 0 ((2^60 + 1) rounds to 2^60). The same for q_gain's
 * terms (head_dim 1). l2norm: 2^54 then 255 ones, one per lane: a
 * running sum loses every 1 (half an ulp of 2^54 is 2), the halving adds
 * them to 2^54 in chunks of 1, 2 (both lost: the tie goes to even), 4, 8,
 * ..., 128, so 2^54 + 252. */
static void test_tree_order_by_hand(void **state) {
  (void)state;
  enum { ROWS = 257 };
  float a[ROWS] = {0}, b[ROWS] = {0}, s = 1.0f, dy[ROWS], seq = 0.0f, out = 0.0f;
  a[0] = 0x1p30f, b[0] = 0x1p30f;
  a[128] = 1.0f, b[128] = 1.0f;
  a[256] = -0x1p30f, b[256] = 0x1p30f;
  col_dot_tree_ref(&out, a, b, ROWS, 1, 0);
  scale_add_backward(dy, &seq, a, &s, b, ROWS, 1, 0);
  assert_true(out == 1.0f && seq == 0.0f);
  float dg = 0.0f, dgs = 0.0f, g = 1.0f;
  q_gain_backward_tree_ref(dy, &dg, a, b, &g, ROWS, 1, 1, 0);
  q_gain_backward(dy, &dgs, a, b, &g, ROWS, 1, 1, 0);
  assert_true(dg == 1.0f && dgs == 0.0f);
  float x[ROWS];
  for (int i = 0; i < ROWS; i++) x[i] = 1.0f;
  x[0] = 0x1p27f;
  assert_true(l2norm_sumsq_tree_ref(x, 256) == 0x1p54 + 252.0);
  assert_true(l2norm_sumsq(x, 256) == 0x1p54);
}

/* The backward tree refs: the elementwise gradients equal the sequential
 * kernels' bit for bit (also when dx aliases dout / dq aliases dy), the
 * parameter sums are col_dot_tree_ref's (or, for q_gain, the tree over
 * each head's terms in n-then-j order) and within one ulp of the
 * sequential sums. */
static void test_scale_add_residual_mix(void **state) {
  (void)state;
  const int rows = 300, d = 20;
  const size_t n = (size_t)rows * d;
  kc_rng rng = {102};
  float *g = alloc_fill(&rng, n, 1.0), *x = alloc_fill(&rng, n, 1.0),
        *x0 = alloc_fill(&rng, n, 1.0);
  float *mix = alloc_fill(&rng, 2 * (size_t)d, 1.0), *s = alloc_fill(&rng, (size_t)d, 1.0);
  float *dy1 = malloc(n * sizeof *dy1), *dy2 = malloc(n * sizeof *dy2);
  float *dx01 = malloc(n * sizeof *dx01), *dx02 = malloc(n * sizeof *dx02);
  float ds1[20], ds2[20], dm1[40], dm2[40], dmw[40];
  const int flagset[] = {0, KERNEL_BF16, KERNEL_BF16 | KERNEL_ACCUMULATE};
  for (int f = 0; f < 3; f++) {
    for (size_t i = 0; i < n; i++) dy1[i] = dy2[i] = 0.125f;
    for (int c = 0; c < d; c++) ds1[c] = ds2[c] = 0.0f;
    scale_add_backward(dy1, ds1, g, s, x, rows, d, flagset[f]);
    scale_add_backward_tree_ref(dy2, ds2, g, s, x, rows, d, flagset[f]);
    assert_memory_equal(dy1, dy2, n * sizeof *dy1);
    for (int c = 0; c < d; c++) assert_true(within_ulps(ds1[c], ds2[c], f ? 0x10000 : 1));
  }
  for (int f = 0; f < 2; f++) {
    int flags = f ? KERNEL_BF16 : 0;
    for (size_t i = 0; i < n; i++) dx01[i] = dx02[i] = 0.5f;
    for (int c = 0; c < 2 * d; c++) dm1[c] = dm2[c] = dmw[c] = 0.0f;
    residual_mix_backward(dy1, dx01, dm1, g, x, x0, mix, rows, d, flags);
    memcpy(dy2, g, n * sizeof *dy2); /* dx aliases dout, as the trainer calls it */
    residual_mix_backward_tree_ref(dy2, dx02, dm2, dy2, x, x0, mix, rows, d, flags);
    assert_memory_equal(dy1, dy2, n * sizeof *dy1);
    assert_memory_equal(dx01, dx02, n * sizeof *dx01);
    col_dot_tree_ref(dmw, g, x, rows, d, flags);
    col_dot_tree_ref(dmw + d, g, x0, rows, d, flags);
    assert_memory_equal(dm2, dmw, sizeof dmw);
    for (int c = 0; c < 2 * d; c++) assert_true(within_ulps(dm1[c], dm2[c], f ? 0x10000 : 1));
  }
  free(g), free(x), free(x0), free(mix), free(s), free(dy1), free(dy2), free(dx01), free(dx02);
}

static void test_q_gain(void **state) {
  (void)state;
  const int rows = 70, heads = 3, hd = 8; /* 560 terms per head: lanes wrap twice */
  const size_t w = (size_t)heads * hd, n = (size_t)rows * w, terms = (size_t)rows * hd;
  kc_rng rng = {103};
  float *dy = alloc_fill(&rng, n, 1.0), *q = alloc_fill(&rng, n, 1.0),
        *g = alloc_fill(&rng, 3, 1.0);
  float *dq1 = malloc(n * sizeof *dq1), *dq2 = malloc(n * sizeof *dq2);
  double *t = malloc(terms * sizeof *t);
  for (int f = 0; f < 2; f++) {
    int flags = f ? KERNEL_BF16 : 0;
    float dg1[3] = {0}, dg2[3] = {0};
    q_gain_backward(dq1, dg1, dy, q, g, rows, heads, hd, flags);
    memcpy(dq2, dy, n * sizeof *dq2); /* dq aliases dy, as the trainer calls it */
    q_gain_backward_tree_ref(dq2, dg2, dq2, q, g, rows, heads, hd, flags);
    assert_memory_equal(dq1, dq2, n * sizeof *dq1);
    for (int h = 0; h < heads; h++) {
      double exact = 0.0, mag = 0.0;
      for (int r = 0; r < rows; r++)
        for (int j = 0; j < hd; j++) {
          size_t i = (size_t)r * w + (size_t)h * hd + j;
          t[(size_t)r * hd + j] = col_dot_term(dy[i], q[i], flags);
          exact += (double)dy[i] * q[i];
          mag += fabs((double)dy[i] * q[i]);
        }
      float want = kernel_round((float)tree_sum_f64_ref(t, terms), flags);
      assert_true(hd_float_bits(dg2[h]) == hd_float_bits(want));
      assert_true(fabs(dg2[h] - exact) <=
                  (f ? 0x1p-8 : 0x1p-24) * (mag + fabs(exact)) + terms * 0x1p-52 * mag);
      if (!f) assert_true(within_ulps(dg1[h], dg2[h], 1));
    }
  }
  free(dy), free(q), free(g), free(dq1), free(dq2), free(t);
}

/* l2norm_tree_ref: (float)sqrt of tree_sum_f64_ref of the exact squares;
 * within one float32 ulp of l2norm (the same terms in another float64
 * order) and of the float64 norm. */
static void test_l2norm(void **state) {
  (void)state;
  const size_t sizes[] = {1, 100, 256, 4097, 100003};
  kc_rng rng = {104};
  for (int k = 0; k < 5; k++) {
    size_t n = sizes[k];
    float *x = alloc_fill(&rng, n, 3.0);
    double *sq = malloc(n * sizeof *sq), exact = 0.0;
    for (size_t i = 0; i < n; i++) sq[i] = (double)x[i] * x[i], exact += sq[i];
    double s = l2norm_sumsq_tree_ref(x, n);
    assert_true(s == tree_sum_f64_ref(sq, n));
    float norm = l2norm_tree_ref(x, n);
    assert_true(norm == (float)sqrt(s));
    assert_true(within_ulps(norm, l2norm(x, n), 1));
    assert_true(fabs(norm - sqrt(exact)) <= 0x1p-23 * sqrt(exact));
    free(x), free(sq);
  }
  assert_true(l2norm_tree_ref(NULL, 0) == 0.0f);
}

/* embedding_backward_tree_ref (the GPU's scan per row) equals the
 * counting-sort kernel bit for bit: same order, every flag, unused rows
 * zeroed or kept. */
static void test_embedding(void **state) {
  (void)state;
  const int n = 1000, vocab = 300, d = 7;
  kc_rng rng = {105};
  uint16_t *ids = malloc((size_t)n * sizeof *ids);
  for (int r = 0; r < n; r++) /* skewed: low ids repeat often, some rows unused */
    ids[r] = (uint16_t)((int)((kc_uniform(&rng) + 1.0) * (kc_uniform(&rng) + 1.0) * 70.0) % vocab);
  float *dy = alloc_fill(&rng, (size_t)n * d, 1.0);
  float *a = malloc((size_t)vocab * d * sizeof *a), *b = malloc((size_t)vocab * d * sizeof *b);
  const int flagset[] = {0, KERNEL_ACCUMULATE, KERNEL_BF16, KERNEL_BF16 | KERNEL_ACCUMULATE};
  int unused = 0;
  for (int f = 0; f < 4; f++) {
    for (size_t i = 0; i < (size_t)vocab * d; i++) a[i] = b[i] = 0.375f;
    embedding_backward(a, dy, ids, n, vocab, d, flagset[f]);
    embedding_backward_tree_ref(b, dy, ids, n, vocab, d, flagset[f]);
    assert_memory_equal(a, b, (size_t)vocab * d * sizeof *a);
  }
  for (int v = 0; v < vocab; v++) unused += b[(size_t)v * d] == 0.375f;
  assert_true(unused > 0); /* the case of rows with no ids was exercised */
  free(ids), free(dy), free(a), free(b);
}

/* The forward tree ref: th equals the CPU kernel's bit for bit; lse is
 * max + log(tree_sum_ref of the exp terms), nll is lse - logit[y], the
 * mean is tree_sum_f64_ref of the nll over N. lse is within 1e-6 relative
 * of float64 (from the same th), and lse and the mean within the bound
 * of two float32 summation orders of the CPU kernel's. */
static void test_softcap_ce(void **state) {
  (void)state;
  const int shapes[][2] = {{5, 7}, {300, 100}, {40, 1000}};
  const float cap = 30.0f;
  kc_rng rng = {106};
  for (int k = 0; k < 3; k++) {
    int N = shapes[k][0], V = shapes[k][1];
    size_t n = (size_t)N * V;
    float *z = alloc_fill(&rng, n, 60.0);
    uint16_t *y = malloc((size_t)N * sizeof *y);
    for (int r = 0; r < N; r++) y[r] = (uint16_t)((r * 7919) % V);
    float *th1 = malloc(n * sizeof *th1), *th2 = malloc(n * sizeof *th2),
          *e = malloc(V * sizeof *e);
    float *lse1 = malloc(N * sizeof *lse1), *lse2 = malloc(N * sizeof *lse2);
    float *nll1 = malloc(N * sizeof *nll1), *nll2 = malloc(N * sizeof *nll2);
    double *nd = malloc(N * sizeof *nd);
    /* Two float32 sums of V positive terms differ by at most (V + 8) eps
     * relative, so their logs by that much absolute; plus the roundings
     * of lse (|lse| <= 2 cap + log V < 64). */
    double sum_bound = (V + 8) * (double)FLT_EPSILON + 4.0 * 64.0 * FLT_EPSILON;
    for (int f = 0; f < 2; f++) {
      int flags = f ? KERNEL_BF16 : 0;
      if (f) bf16_round_array(z, n);
      float L1 = softcap_cross_entropy_forward(th1, lse1, nll1, z, y, N, V, cap, flags);
      float L2 = softcap_cross_entropy_forward_tree_ref(th2, lse2, nll2, z, y, N, V, cap, flags);
      assert_memory_equal(th1, th2, n * sizeof *th1);
      for (int r = 0; r < N; r++) {
        const float *tr = th2 + (size_t)r * V;
        float m = -INFINITY;
        for (int i = 0; i < V; i++) {
          float l = softcap_logit(tr[i], cap, flags);
          if (l > m) m = l;
        }
        for (int i = 0; i < V; i++) e[i] = det_expf(softcap_logit(tr[i], cap, flags) - m);
        float want = m + det_logf(tree_sum_ref(e, (size_t)V));
        assert_true(hd_float_bits(lse2[r]) == hd_float_bits(want));
        assert_true(nll2[r] == lse2[r] - softcap_logit(tr[y[r]], cap, flags));
        assert_true(fabs(lse1[r] - lse2[r]) <= sum_bound);
        /* float64, from the same th */
        double s = 0.0;
        for (int i = 0; i < V; i++) s += exp((double)softcap_logit(tr[i], cap, flags) - m);
        assert_true(fabs(lse2[r] - (m + log(s))) <= 1e-6 * fabs(m + log(s)) + 1e-6);
        nd[r] = nll2[r];
      }
      assert_true(L2 == (float)(tree_sum_f64_ref(nd, (size_t)N) / N));
      assert_true(fabs(L1 - L2) <= sum_bound);
    }
    free(z), free(y), free(th1), free(th2), free(e), free(lse1), free(lse2), free(nll1);
    free(nll2), free(nd);
  }
}

/* The max tree: the largest term wherever it sits, NaN terms never kept,
 * -infinity for an empty lane. */
static void test_tree_max(void **state) {
  (void)state;
  float p[TREE_LANES];
  for (int pos = 0; pos < TREE_LANES; pos += 37) {
    for (int k = 0; k < TREE_LANES; k++) p[k] = (float)(k % 11) - 20.0f;
    p[pos] = 3.5f;
    assert_true(tree_combine_max(p) == 3.5f);
  }
  for (int k = 0; k < TREE_LANES; k++) p[k] = -INFINITY;
  p[200] = NAN;
  p[17] = -1.0f;
  assert_true(tree_combine_max(p) == -1.0f);
  assert_true(tree_max2(-INFINITY, NAN) == -INFINITY);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tree_order_by_hand),
      cmocka_unit_test(test_col_dot),
      cmocka_unit_test(test_scale_add_residual_mix),
      cmocka_unit_test(test_q_gain),
      cmocka_unit_test(test_l2norm),
      cmocka_unit_test(test_embedding),
      cmocka_unit_test(test_softcap_ce),
      cmocka_unit_test(test_tree_max),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
