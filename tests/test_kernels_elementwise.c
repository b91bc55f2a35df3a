/* The small elementwise ops (relu_square, residual_mix, scale_add, q_gain):
 * forward against float64, every gradient (inputs and the float32
 * parameter vectors) against float64 central differences, and the bf16
 * rounding points. */
#include "tests/test_util.h"

#include <math.h>
#include <omp.h>
#include <string.h>

#include "kernels/bf16.h"
#include "kernels/col_dot.h"
#include "kernels/q_gain.h"
#include "kernels/relu_square.h"
#include "kernels/residual_mix.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"
#include "kernels/scale_add.h"
#include "tests/kernel_check.h"

enum { R = 6, D = 10, N = R * D };

/* One generic loss: L = sum(g * op(inputs)), op chosen by ctx. */
typedef struct {
  int op;     /* 0 relu_square, 1 residual_mix, 2 scale_add, 3 q_gain */
  int which;  /* which input is x */
  double *in[3];
  const double *g;
} ctx_t;

static double loss(const double *x, void *vc) {
  ctx_t *c = vc;
  const double *a = c->which == 0 ? x : c->in[0], *b = c->which == 1 ? x : c->in[1],
               *p = c->which == 2 ? x : c->in[2];
  double L = 0.0;
  for (int r = 0; r < R; r++)
    for (int j = 0; j < D; j++) {
      int i = r * D + j;
      double y = 0.0;
      if (c->op == 0) y = a[i] > 0 ? a[i] * a[i] : 0.0;
      if (c->op == 1) y = p[j] * a[i] + p[D + j] * b[i];
      if (c->op == 2) y = a[i] + p[j] * b[i];
      if (c->op == 3) y = a[i] * p[j / 5]; /* 2 heads of 5 */
      L += c->g[i] * y;
    }
  return L;
}

static void fill_away_from_zero(kc_rng *rng, float *x, int n) {
  for (int i = 0; i < n; i++) {
    double u = kc_uniform(rng);
    x[i] = (float)(u + (u < 0 ? -0.1 : 0.1));
  }
}

static void test_relu_square(void **state) {
  (void)state;
  kc_rng rng = {21};
  float h[N], g[N], y[N], dh[N];
  fill_away_from_zero(&rng, h, N);
  kc_fill(&rng, g, N, 1.0);
  relu_square_forward(y, h, N, 0);
  for (int i = 0; i < N; i++) assert_true(y[i] == (h[i] > 0 ? h[i] * h[i] : 0.0f));
  relu_square_backward(dh, g, h, N, 0);
  double *hd = kc_to_double(h, N), *gd = kc_to_double(g, N), fd[N];
  ctx_t c = {0, 0, {hd, NULL, NULL}, gd};
  kc_fd_grad(loss, &c, hd, N, 1e-6, fd);
  KC_ASSERT_CLOSE(dh, fd, N, 1e-6, 1e-7, "dh");
  /* bf16: the square is rounded, the gradient is bf16(dy * 2r) */
  float hb = 1.0f + 0x1p-7f, yb, gb = 1.0f + 0x1p-7f, db;
  relu_square_forward(&yb, &hb, 1, KERNEL_BF16);
  assert_true(yb == bf16_round(hb * hb) && yb != hb * hb);
  relu_square_backward(&db, &gb, &hb, 1, KERNEL_BF16);
  assert_true(db == bf16_round(gb * (2.0f * hb)));
  free(hd);
  free(gd);
}

static void test_residual_mix(void **state) {
  (void)state;
  kc_rng rng = {22};
  float x[N], x0[N], mix[2 * D], g[N], y[N], dx[N], dx0[N], dmix[2 * D];
  kc_fill(&rng, x, N, 1.0);
  kc_fill(&rng, x0, N, 1.0);
  kc_fill(&rng, mix, 2 * D, 1.0);
  kc_fill(&rng, g, N, 1.0);
  residual_mix_forward(y, x, x0, mix, R, D, 0);
  for (int i = 0; i < N; i++) assert_true(y[i] == mix[i % D] * x[i] + mix[D + i % D] * x0[i]);
  for (int i = 0; i < N; i++) dx0[i] = 0.5f;
  for (int i = 0; i < 2 * D; i++) dmix[i] = 0.25f;
  residual_mix_backward(dx, dx0, dmix, g, x, x0, mix, R, D, 0);
  double *xd = kc_to_double(x, N), *x0d = kc_to_double(x0, N), *md = kc_to_double(mix, 2 * D);
  double *gd = kc_to_double(g, N), f0[N], f1[N], fm[2 * D];
  ctx_t c = {1, 0, {xd, x0d, md}, gd};
  kc_fd_grad(loss, &c, xd, N, 1e-3, f0);
  c.which = 1;
  kc_fd_grad(loss, &c, x0d, N, 1e-3, f1);
  c.which = 2;
  kc_fd_grad(loss, &c, md, 2 * D, 1e-3, fm);
  for (int i = 0; i < N; i++) f1[i] += 0.5; /* accumulated onto 0.5 */
  for (int i = 0; i < 2 * D; i++) fm[i] += 0.25;
  KC_ASSERT_CLOSE(dx, f0, N, 1e-6, 1e-7, "dx");
  KC_ASSERT_CLOSE(dx0, f1, N, 1e-6, 1e-7, "dx0");
  KC_ASSERT_CLOSE(dmix, fm, 2 * D, 1e-6, 1e-7, "dmix");
  /* dx may alias dout */
  float alias[N];
  memcpy(alias, g, sizeof g);
  residual_mix_backward(alias, dx0, dmix, alias, x, x0, mix, R, D, 0);
  assert_memory_equal(alias, dx, sizeof dx);
  free(xd);
  free(x0d);
  free(md);
  free(gd);
}

static void test_scale_add(void **state) {
  (void)state;
  kc_rng rng = {23};
  float x[N], s[D], yv[N], g[N], out[N], dy[N], ds[D];
  kc_fill(&rng, x, N, 1.0);
  kc_fill(&rng, s, D, 1.0);
  kc_fill(&rng, yv, N, 1.0);
  kc_fill(&rng, g, N, 1.0);
  scale_add_forward(out, x, s, yv, R, D, 0);
  for (int i = 0; i < N; i++) assert_true(out[i] == x[i] + s[i % D] * yv[i]);
  for (int i = 0; i < D; i++) ds[i] = 0.0f;
  scale_add_backward(dy, ds, g, s, yv, R, D, 0);
  double *xd = kc_to_double(x, N), *yd = kc_to_double(yv, N), *sd = kc_to_double(s, D);
  double *gd = kc_to_double(g, N), fy[N], fs[D];
  ctx_t c = {2, 1, {xd, yd, sd}, gd};
  kc_fd_grad(loss, &c, yd, N, 1e-3, fy);
  c.which = 2;
  kc_fd_grad(loss, &c, sd, D, 1e-3, fs);
  KC_ASSERT_CLOSE(dy, fy, N, 1e-6, 1e-7, "dy");
  KC_ASSERT_CLOSE(ds, fs, D, 1e-6, 1e-7, "ds");
  /* bf16: out = bf16(x + bf16(bf16(s) y)), the vector gradient is rounded */
  float xb[N], yb[N], gb[N], ob[N], dsb[D] = {0};
  memcpy(xb, x, sizeof x);
  memcpy(yb, yv, sizeof yv);
  memcpy(gb, g, sizeof g);
  bf16_round_array(xb, N);
  bf16_round_array(yb, N);
  bf16_round_array(gb, N);
  scale_add_forward(ob, xb, s, yb, R, D, KERNEL_BF16);
  for (int i = 0; i < N; i++)
    assert_true(ob[i] == bf16_round(xb[i] + bf16_round(bf16_round(s[i % D]) * yb[i])));
  scale_add_backward(dy, dsb, gb, s, yb, R, D, KERNEL_BF16);
  for (int i = 0; i < D; i++) assert_true(bf16_is_exact(dsb[i]));
  free(xd);
  free(yd);
  free(sd);
  free(gd);
}

static void test_q_gain(void **state) {
  (void)state;
  kc_rng rng = {24};
  float q[N], gain[2], g[N], y[N], dq[N], dg[2] = {0, 0};
  kc_fill(&rng, q, N, 1.0);
  kc_fill(&rng, gain, 2, 2.0);
  kc_fill(&rng, g, N, 1.0);
  q_gain_forward(y, q, gain, R, 2, 5, 0);
  for (int i = 0; i < N; i++) assert_true(y[i] == q[i] * gain[(i % D) / 5]);
  q_gain_backward(dq, dg, g, q, gain, R, 2, 5, 0);
  float dg_alone[2] = {0, 0}; /* dq NULL: dg alone, the same sums */
  q_gain_backward(NULL, dg_alone, g, q, gain, R, 2, 5, 0);
  assert_memory_equal(dg_alone, dg, sizeof dg);
  double *qd = kc_to_double(q, N), *pd = kc_to_double(gain, 2), *gd = kc_to_double(g, N);
  double fq[N], fg[2];
  ctx_t c = {3, 0, {qd, NULL, pd}, gd};
  kc_fd_grad(loss, &c, qd, N, 1e-3, fq);
  c.which = 2;
  kc_fd_grad(loss, &c, pd, 2, 1e-3, fg);
  KC_ASSERT_CLOSE(dq, fq, N, 1e-6, 1e-7, "dq");
  KC_ASSERT_CLOSE(dg, fg, 2, 1e-6, 1e-7, "dgain");
  free(qd);
  free(pd);
  free(gd);
}

/* want[i] = bf16(plain[i]) for all i, and some plain[i] is not bf16 (so
 * the rounding is not vacuous); 1 if so. */
static int rounds_of(const float *want, const float *plain, int n) {
  int moved = 0;
  for (int i = 0; i < n; i++) {
    float r = bf16_round(plain[i]);
    if (memcmp(&r, &want[i], sizeof r)) return 0;
    moved += memcmp(&r, &plain[i], sizeof r) != 0;
  }
  return moved > 0;
}

/* KERNEL_ROUND_OUT (kernels/flags.h): each kernel that honours it stores
 * the float32 result rounded to bf16, the op's arithmetic unchanged: the
 * forwards of q_gain, RoPE, relu^2 and RMSNorm, the backwards' stores
 * (scale_add's dy, with ds as without the flag). And which flags make a
 * packed copy exact. */
static void test_round_out(void **state) {
  (void)state;
  kc_rng rng = {25};
  float x[N], x2[N], gain[2], s[D], plain[N], got[N], rstd[R], ds0[D], ds1[D];
  kc_fill(&rng, x, N, 1.0);
  kc_fill(&rng, x2, N, 1.0);
  kc_fill(&rng, gain, 2, 2.0);
  kc_fill(&rng, s, D, 1.0);
  q_gain_forward(plain, x, gain, R, 2, 5, 0);
  q_gain_forward(got, x, gain, R, 2, 5, KERNEL_ROUND_OUT);
  assert_true(rounds_of(got, plain, N));
  relu_square_forward(plain, x, N, 0);
  relu_square_forward(got, x, N, KERNEL_ROUND_OUT);
  assert_true(rounds_of(got, plain, N));
  rmsnorm_forward(plain, rstd, x, R, D, 0);
  rmsnorm_forward(got, rstd, x, R, D, KERNEL_ROUND_OUT);
  assert_true(rounds_of(got, plain, N));
  float c[4 * 5], sn[4 * 5]; /* T = 4 positions, head_dim 10 */
  rope_table(c, sn, 4, 10, 10000.0f, 0);
  rope_forward(plain, x, c, sn, R, 4, 1, D, 0);
  rope_forward(got, x, c, sn, R, 4, 1, D, KERNEL_ROUND_OUT);
  assert_true(rounds_of(got, plain, N));
  memset(ds0, 0, sizeof ds0), memset(ds1, 0, sizeof ds1);
  scale_add_backward(plain, ds0, x, s, x2, R, D, 0);
  scale_add_backward(got, ds1, x, s, x2, R, D, KERNEL_ROUND_OUT);
  assert_true(rounds_of(got, plain, N));
  assert_memory_equal(ds0, ds1, sizeof ds0);
  /* Packed copies: exact only where every stored value is bf16. */
  assert_true(kernel_packed_ok(KERNEL_BF16));
  assert_true(kernel_packed_ok(KERNEL_ROUND_OUT));
  assert_true(kernel_packed_ok(KERNEL_BF16 | KERNEL_ACCUMULATE));
  assert_false(kernel_packed_ok(0));
  assert_false(kernel_packed_ok(KERNEL_ROUND_OUT | KERNEL_ACCUMULATE)); /* a float32 sum */
  assert_false(kernel_packed_ok(KERNEL_BF16 | KERNEL_ACCUMULATE | KERNEL_OUT_FP32));
  float out = 1.0f;
  assert_true(kernel_store(&out, 1.0f + 0x1p-12f, KERNEL_ROUND_OUT) == 1.0f && out == 1.0f);
}

/* col_dot_sums (the parameter gradients of scale_add and residual_mix)
 * reads rows across blocks of channels, yet each channel's float64 sum is
 * the plain column walk's, bit for bit: channels crossing a block edge
 * and a short last block, bf16 terms, 1 to 3 threads. A sum taken in
 * another order (descending rows) is told apart. */
static void test_col_dot_sums_order(void **state) {
  (void)state;
  enum { ROWS = 301, W = 77 };
  kc_rng rng = {41};
  float *a = malloc(sizeof(float) * ROWS * W), *b = malloc(sizeof(float) * ROWS * W);
  double got[W], want[W], rev[W];
  kc_fill(&rng, a, (size_t)ROWS * W, 1.0);
  kc_fill(&rng, b, (size_t)ROWS * W, 1.0);
  /* Terms over 2^-45 .. 1, so a float64 sum rounds and its order shows. */
  for (int i = 0; i < ROWS * W; i++) a[i] = ldexpf(a[i], -(int)((i * 7) % 46));
  for (int flags = 0; flags <= KERNEL_BF16; flags += KERNEL_BF16) {
    int differs = 0;
    for (int c = 0; c < W; c++) {
      double s = 0.0, t = 0.0;
      for (int r = 0; r < ROWS; r++) s += (double)col_dot_term(a[r * W + c], b[r * W + c], flags);
      for (int r = ROWS - 1; r >= 0; r--) t += (double)col_dot_term(a[r * W + c], b[r * W + c], flags);
      want[c] = s;
      rev[c] = t;
      differs |= s != t;
    }
    for (int th = 1; th <= 3; th++) {
      omp_set_num_threads(th);
      col_dot_sums(got, a, b, ROWS, W, flags);
      assert_memory_equal(got, want, sizeof want);
    }
    assert_true(differs); /* the data can tell the orders apart */
    assert_memory_not_equal(got, rev, sizeof rev);
  }
  omp_set_num_threads(2);
  free(a);
  free(b);
}

/* relu_square's vector lanes equal the shared per-element functions bit
 * for bit on the values where a careless vector form would differ: NaN
 * (quiet, with payload), signed zeros, infinities, subnormals, bf16
 * rounding ties and carries, for every flag set, on a length that leaves
 * a scalar tail and spans several threads' blocks. */
static void test_relu_square_lanes(void **state) {
  (void)state;
  enum { NE = 4099 };
  static const uint32_t special[] = {0x7fc00000u, 0x7fa00001u, 0xffc00123u, 0x00000000u,
                                     0x80000000u, 0x7f800000u, 0xff800000u, 0x00000001u,
                                     0x807fffffu, 0x3f808000u, 0x3f818000u, 0x3f80ffffu,
                                     0x7f7fffffu, 0xbf7f8000u, 0x40490fdbu, 0xc0490fdbu};
  float *h = malloc(NE * sizeof *h), *g = malloc(NE * sizeof *g), *y = malloc(NE * sizeof *y);
  float *dh = malloc(NE * sizeof *dh), *want = malloc(NE * sizeof *want);
  kc_rng rng = {77};
  kc_fill(&rng, h, NE, 3.0);
  kc_fill(&rng, g, NE, 3.0);
  for (int i = 0; i < NE; i += 3) memcpy(&h[i], &special[(i / 3) % 16], 4);
  for (int i = 1; i < NE; i += 5) memcpy(&g[i], &special[(i / 5 + 7) % 16], 4);
  const int flag_sets[] = {0,
                           KERNEL_BF16,
                           KERNEL_ACCUMULATE,
                           KERNEL_ACCUMULATE | KERNEL_BF16,
                           KERNEL_ACCUMULATE | KERNEL_BF16 | KERNEL_OUT_FP32,
                           KERNEL_ROUND_OUT,
                           KERNEL_ROUND_OUT | KERNEL_ACCUMULATE};
  const int fwd_mask = KERNEL_BF16 | KERNEL_ROUND_OUT;
  for (size_t f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++) {
    int flags = flag_sets[f];
    for (int th = 1; th <= 3; th++) {
      omp_set_num_threads(th);
      relu_square_forward(y, h, NE, flags & fwd_mask);
      for (int i = 0; i < NE; i++) want[i] = relu_square_y(h[i], flags & fwd_mask);
      assert_memory_equal(y, want, NE * sizeof *y);
      for (int i = 0; i < NE; i++) dh[i] = want[i] = g[(i * 7) % NE];
      relu_square_backward(dh, g, h, NE, flags);
      for (int i = 0; i < NE; i++) kernel_store(&want[i], relu_square_dh(g[i], h[i]), flags);
      assert_memory_equal(dh, want, NE * sizeof *dh);
    }
  }
  omp_set_num_threads(2);
  free(h);
  free(g);
  free(y);
  free(dh);
  free(want);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_relu_square),
      cmocka_unit_test(test_relu_square_lanes),
      cmocka_unit_test(test_residual_mix),
      cmocka_unit_test(test_scale_add),
      cmocka_unit_test(test_q_gain),
      cmocka_unit_test(test_round_out),
      cmocka_unit_test(test_col_dot_sums_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
