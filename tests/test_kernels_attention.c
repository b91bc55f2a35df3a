/* attention: causal GQA forward and log-sum-exp against float64, the
 * recomputing backward against float64 central differences, threads. */
#include "tests/test_util.h"

#include <omp.h>

#include "kernels/attention.h"
#include "kernels/gemm.h"
#include "tests/kernel_check.h"

enum { B = 2, T = 5, H = 4, KV = 2, HD = 6, QW = H * HD, KW = KV * HD };
enum { NQ = B * T * QW, NK = B * T * KW };

static void ref_attention(double *y, double *lse, const double *q, const double *k,
                          const double *v) {
  double scale = 1.0 / sqrt((double)HD);
  for (int b = 0; b < B; b++)
    for (int h = 0; h < H; h++)
      for (int t = 0; t < T; t++) {
        int kh = h / (H / KV);
        double s[T], m = -INFINITY, l = 0.0;
        for (int j = 0; j <= t; j++) {
          double d = 0.0;
          for (int e = 0; e < HD; e++)
            d += q[(b * T + t) * QW + h * HD + e] * k[(b * T + j) * KW + kh * HD + e];
          s[j] = d * scale;
          if (s[j] > m) m = s[j];
        }
        for (int j = 0; j <= t; j++) l += exp(s[j] - m);
        if (lse) lse[(b * H + h) * T + t] = m + log(l);
        for (int e = 0; e < HD; e++) {
          double acc = 0.0;
          for (int j = 0; j <= t; j++) acc += exp(s[j] - m) / l * v[(b * T + j) * KW + kh * HD + e];
          y[(b * T + t) * QW + h * HD + e] = acc;
        }
      }
}

typedef struct {
  double *q, *k, *v;
  const double *g;
  int which; /* 0 q, 1 k, 2 v */
} ctx_t;

static double loss(const double *x, void *vc) {
  ctx_t *c = vc;
  double y[NQ], L = 0.0;
  ref_attention(y, NULL, c->which == 0 ? x : c->q, c->which == 1 ? x : c->k,
                c->which == 2 ? x : c->v);
  for (int i = 0; i < NQ; i++) L += c->g[i] * y[i];
  return L;
}

static void test_forward_backward(void **state) {
  (void)state;
  kc_rng rng = {11};
  float q[NQ], k[NK], v[NK], g[NQ], y[NQ], lse[B * H * T], dq[NQ], dk[NK], dv[NK];
  kc_fill(&rng, q, NQ, 1.5);
  kc_fill(&rng, k, NK, 1.5);
  kc_fill(&rng, v, NK, 1.0);
  kc_fill(&rng, g, NQ, 1.0);
  double *qd = kc_to_double(q, NQ), *kd = kc_to_double(k, NK), *vd = kc_to_double(v, NK);
  double *gd = kc_to_double(g, NQ), yr[NQ], lr[B * H * T];
  ref_attention(yr, lr, qd, kd, vd);
  attention_forward(y, lse, q, k, v, B, T, H, KV, HD, 0);
  /* float32 dot products, exp and sums over at most T = 5 keys */
  KC_ASSERT_CLOSE(y, yr, NQ, 1e-5, 1e-6, "y");
  KC_ASSERT_CLOSE(lse, lr, B * H * T, 1e-6, 1e-6, "lse");
  /* causality: the first query of each sequence sees only its own value */
  for (int e = 0; e < HD; e++) assert_true(y[e] == v[e]);
  attention_backward(dq, dk, dv, g, y, lse, q, k, v, B, T, H, KV, HD, 0);
  ctx_t c = {qd, kd, vd, gd, 0};
  double fq[NQ], fk[NK], fv[NK];
  kc_fd_grad(loss, &c, qd, NQ, 1e-5, fq);
  c.which = 1;
  kc_fd_grad(loss, &c, kd, NK, 1e-5, fk);
  c.which = 2;
  kc_fd_grad(loss, &c, vd, NK, 1e-5, fv);
  /* float32 recomputation (exp of rounded scores, D from the float32 y):
   * relative error a few 1e-6; central differences ~1e-9. */
  KC_ASSERT_CLOSE(dq, fq, NQ, 1e-4, 1e-5, "dq");
  KC_ASSERT_CLOSE(dk, fk, NK, 1e-4, 1e-5, "dk");
  KC_ASSERT_CLOSE(dv, fv, NK, 1e-4, 1e-5, "dv");
  free(qd);
  free(kd);
  free(vd);
  free(gd);
}

static void test_threads_and_bf16(void **state) {
  (void)state;
  enum { BB = 3, TT = 109, HH = 4, KK = 1, D = 28 }; /* a group of 4 heads, tails in every tile */
  size_t nq = (size_t)BB * TT * HH * D, nk = (size_t)BB * TT * KK * D;
  float *q = malloc(nq * 4), *k = malloc(nk * 4), *v = malloc(nk * 4), *g = malloc(nq * 4);
  kc_rng rng = {12};
  kc_fill(&rng, q, nq, 2.0);
  kc_fill(&rng, k, nk, 2.0);
  kc_fill(&rng, v, nk, 1.0);
  kc_fill(&rng, g, nq, 1.0);
  bf16_round_array(q, nq);
  bf16_round_array(k, nk);
  bf16_round_array(v, nk);
  bf16_round_array(g, nq);
  float *out[3][5];
  for (int th = 1; th <= 3; th++) {
    omp_set_num_threads(th);
    float *y = malloc(nq * 4), *l = malloc((size_t)BB * HH * TT * 4), *dq = malloc(nq * 4);
    float *dk = malloc(nk * 4), *dv = malloc(nk * 4);
    attention_forward(y, l, q, k, v, BB, TT, HH, KK, D, KERNEL_BF16);
    attention_backward(dq, dk, dv, g, y, l, q, k, v, BB, TT, HH, KK, D, KERNEL_BF16);
    float *o[5] = {y, l, dq, dk, dv};
    memcpy(out[th - 1], o, sizeof o);
  }
  size_t sizes[5] = {nq, (size_t)BB * HH * TT, nq, nk, nk};
  for (int th = 1; th < 3; th++)
    for (int i = 0; i < 5; i++) assert_memory_equal(out[0][i], out[th][i], sizes[i] * 4);
  for (size_t i = 0; i < nq; i++)
    assert_true(bf16_is_exact(out[0][0][i]) && bf16_is_exact(out[0][2][i]));
  for (size_t i = 0; i < nk; i++)
    assert_true(bf16_is_exact(out[0][3][i]) && bf16_is_exact(out[0][4][i]));
  /* the one-pass backward equals the plain two-pass definition bitwise */
  float *sq = malloc(nq * 4), *sk = malloc(nk * 4), *sv = malloc(nk * 4);
  float *sy = malloc(nq * 4), *sl = malloc((size_t)BB * HH * TT * 4);
  for (int fl = 0; fl <= KERNEL_BF16; fl += KERNEL_BF16) {
    attention_forward(out[0][0], out[0][1], q, k, v, BB, TT, HH, KK, D, fl);
    attention_backward(out[0][2], out[0][3], out[0][4], g, out[0][0], out[0][1], q, k, v, BB, TT,
                       HH, KK, D, fl);
    attention_forward_simple(sy, sl, q, k, v, BB, TT, HH, KK, D, fl);
    assert_memory_equal(sy, out[0][0], nq * 4);
    assert_memory_equal(sl, out[0][1], (size_t)BB * HH * TT * 4);
    attention_backward_simple(sq, sk, sv, g, out[0][0], out[0][1], q, k, v, BB, TT, HH, KK, D, fl);
    assert_memory_equal(sq, out[0][2], nq * 4);
    assert_memory_equal(sk, out[0][3], nk * 4);
    assert_memory_equal(sv, out[0][4], nk * 4);
  }
  free(sq);
  free(sk);
  free(sv);
  free(sy);
  free(sl);
  for (int th = 0; th < 3; th++)
    for (int i = 0; i < 5; i++) free(out[th][i]);
  free(q);
  free(k);
  free(v);
  free(g);
  omp_set_num_threads(2);
}

/* The blocked kernels equal the plain definitions bit for bit (every sum
 * in the same order, each term one FMA) on float32 inputs (where FMA's
 * single rounding shows) and bf16 ones, for every gemm micro-kernel
 * (AVX-512, AVX2 + FMA, scalar fmaf) and 1, 2, 3 threads: several query
 * blocks, the last a tail (T = 300), a group of 2 query heads per KV head, an
 * odd head_dim. */
static void test_blocked_equals_simple_all_kernels(void **state) {
  (void)state;
  enum { BB = 2, TT = 300, HH = 4, KK = 2, D = 13 };
  const size_t nq = (size_t)BB * TT * HH * D, nk = (size_t)BB * TT * KK * D,
               nl = (size_t)BB * HH * TT;
  float *in = malloc((2 * nq + 2 * nk) * 4);
  float *q = in, *k = q + nq, *v = k + nk, *g = v + nk;
  float *ref = malloc((3 * nq + 2 * nk + nl) * 4), *got = malloc((3 * nq + 2 * nk + nl) * 4);
  for (int fl = 0; fl <= KERNEL_BF16; fl += KERNEL_BF16) {
    kc_rng rng = {21};
    kc_fill(&rng, q, nq, 2.0);
    kc_fill(&rng, k, nk, 2.0);
    kc_fill(&rng, v, nk, 1.0);
    kc_fill(&rng, g, nq, 1.0);
    if (fl) bf16_round_array(in, 2 * nq + 2 * nk);
    float *r[6] = {ref,          ref + nq,          ref + 2 * nq,
                   ref + 3 * nq, ref + 3 * nq + nk, ref + 3 * nq + 2 * nk};
    attention_forward_simple(r[0], r[5], q, k, v, BB, TT, HH, KK, D, fl);
    attention_backward_simple(r[1], r[3], r[4], g, r[0], r[5], q, k, v, BB, TT, HH, KK, D, fl);
    for (int kernel = GEMM_FMAF; kernel <= GEMM_AVX512; kernel++) {
      gemm_select_kernel(kernel);
      for (int th = 1; th <= 3; th++) {
        omp_set_num_threads(th);
        float *o[6] = {got,          got + nq,          got + 2 * nq,
                       got + 3 * nq, got + 3 * nq + nk, got + 3 * nq + 2 * nk};
        memset(got, 0xff, (3 * nq + 2 * nk + nl) * 4);
        attention_forward(o[0], o[5], q, k, v, BB, TT, HH, KK, D, fl);
        attention_backward(o[1], o[3], o[4], g, o[0], o[5], q, k, v, BB, TT, HH, KK, D, fl);
        assert_memory_equal(r[0], o[0], nq * 4);
        assert_memory_equal(r[5], o[5], nl * 4);
        assert_memory_equal(r[1], o[1], nq * 4);
        assert_memory_equal(r[3], o[3], nk * 4);
        assert_memory_equal(r[4], o[4], nk * 4);
      }
    }
  }
  gemm_select_kernel(GEMM_WIDEST);
  omp_set_num_threads(2);
  free(in);
  free(ref);
  free(got);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_blocked_equals_simple_all_kernels),
      cmocka_unit_test(test_forward_backward),
      cmocka_unit_test(test_threads_and_bf16),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
