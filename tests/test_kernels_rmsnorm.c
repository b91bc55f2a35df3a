/* rmsnorm: forward against float64, backward against float64 central
 * differences, bf16 mode rounds where PyTorch does. */
#include "tests/test_util.h"

#include <float.h>

#include "kernels/residual_mix.h"
#include "kernels/residual_norm.h"
#include "kernels/rmsnorm.h"
#include "kernels/scale_add.h"
#include "tests/kernel_check.h"

enum { ROWS = 5, D = 12 };

static void ref_rmsnorm(double *y, const double *x, int rows, int d) {
  for (int r = 0; r < rows; r++) {
    double ss = 0.0;
    for (int j = 0; j < d; j++) ss += x[r * d + j] * x[r * d + j];
    double s = 1.0 / sqrt(ss / d + (double)FLT_EPSILON);
    for (int j = 0; j < d; j++) y[r * d + j] = x[r * d + j] * s;
  }
}

static const double *g_up;
static double loss(const double *x, void *ctx) {
  (void)ctx;
  double y[ROWS * D], L = 0.0;
  ref_rmsnorm(y, x, ROWS, D);
  for (int i = 0; i < ROWS * D; i++) L += g_up[i] * y[i];
  return L;
}

static void test_forward_backward(void **state) {
  (void)state;
  kc_rng rng = {3};
  float x[ROWS * D], g[ROWS * D], y[ROWS * D], rstd[ROWS], dx[ROWS * D];
  kc_fill(&rng, x, ROWS * D, 2.0);
  kc_fill(&rng, g, ROWS * D, 1.0);
  x[0] = 1e-4f; /* a small entry does not change the row's scale much */
  double *xd = kc_to_double(x, ROWS * D), *gd = kc_to_double(g, ROWS * D), yr[ROWS * D];
  ref_rmsnorm(yr, xd, ROWS, D);
  rmsnorm_forward(y, rstd, x, ROWS, D, 0);
  /* float32: a 12-term sum of squares, a sqrt and a division: a few ulp. */
  KC_ASSERT_CLOSE(y, yr, ROWS * D, 2e-6, 1e-7, "forward");
  rmsnorm_backward(dx, g, x, rstd, ROWS, D, 0);
  double fd[ROWS * D];
  g_up = gd;
  kc_fd_grad(loss, NULL, xd, ROWS * D, 1e-5, fd);
  /* central differences are accurate to ~1e-9 here; float32 to ~1e-6. */
  KC_ASSERT_CLOSE(dx, fd, ROWS * D, 1e-5, 1e-5, "dx");
  /* A row of zeros: eps keeps it finite, the output is zero. */
  float z[D] = {0}, zy[D], zr;
  rmsnorm_forward(zy, &zr, z, 1, D, 0);
  assert_true(zy[0] == 0.0f && isfinite(zr));
  /* accumulate adds the gradient */
  float acc[ROWS * D];
  for (int i = 0; i < ROWS * D; i++) acc[i] = 1.0f;
  rmsnorm_backward(acc, g, x, rstd, ROWS, D, KERNEL_ACCUMULATE);
  for (int i = 0; i < ROWS * D; i++) assert_true(acc[i] == 1.0f + dx[i]);
  free(xd);
  free(gd);
}

static void test_bf16_rounding_points(void **state) {
  (void)state;
  kc_rng rng = {4};
  float x[ROWS * D], g[ROWS * D], y[ROWS * D], yb[ROWS * D], rstd[ROWS], dx[ROWS * D],
      dxb[ROWS * D];
  kc_fill(&rng, x, ROWS * D, 2.0);
  kc_fill(&rng, g, ROWS * D, 1.0);
  bf16_round_array(x, ROWS * D);
  bf16_round_array(g, ROWS * D);
  rmsnorm_forward(y, rstd, x, ROWS, D, 0);
  rmsnorm_forward(yb, rstd, x, ROWS, D, KERNEL_BF16);
  rmsnorm_backward(dx, g, x, rstd, ROWS, D, 0);
  rmsnorm_backward(dxb, g, x, rstd, ROWS, D, KERNEL_BF16);
  /* float32 inside, one rounding at the output */
  for (int i = 0; i < ROWS * D; i++) {
    assert_true(yb[i] == bf16_round(y[i]));
    assert_true(dxb[i] == bf16_round(dx[i]));
  }
}

/* residual_norm_forward (kernels/residual_norm.h) is scale_add_forward,
 * residual_mix_forward and the norm in turn, bit for bit, in each of its
 * forms, bf16 and float32, in index order and by the tree; the tree
 * changes some row's bits, or its path was not taken. */
static void test_residual_norm_is_the_sequence(void **state) {
  (void)state;
  enum { R = 21, D = 300, NN = R * D };
  static float x[NN], x0[NN], y[NN], s[D], mix[2 * D], u[NN], v[NN], n[NN], rstd[R];
  static float wu[NN], wv[NN], wn[NN], wr[R], tn[NN];
  kc_rng rng = {71};
  kc_fill(&rng, x, NN, 3.0), kc_fill(&rng, x0, NN, 1.0), kc_fill(&rng, y, NN, 1.0);
  kc_fill(&rng, s, D, 1.0), kc_fill(&rng, mix, 2 * D, 1.0);
  int tree_differs = 0;
  for (int form = 0; form < 4; form++)
    for (int bf = 0; bf < 2; bf++)
      for (int tree = 0; tree < 2; tree++) {
        const int add = form & 1, mx = form >> 1, f = bf ? KERNEL_BF16 : 0;
        residual_norm_io io = {.x = x, .y = y, .u = u, .x0 = x0, .v = v, .n = n, .rstd = rstd};
        io.s = add ? s : NULL, io.mix = mx ? mix : NULL;
        residual_norm_forward(&io, R, D, f, f | (tree ? KERNEL_TREE : 0));
        const float *cur = x;
        if (add) scale_add_forward(wu, cur, s, y, R, D, f), cur = wu;
        if (mx) residual_mix_forward(wv, cur, x0, mix, R, D, f), cur = wv;
        (tree ? rmsnorm_forward_tree_ref : rmsnorm_forward)(wn, wr, cur, R, D, f);
        if (add) assert_memory_equal(u, wu, sizeof wu);
        if (mx) assert_memory_equal(v, wv, sizeof wv);
        assert_memory_equal(n, wn, sizeof wn);
        assert_memory_equal(rstd, wr, sizeof wr);
        if (tree) tree_differs |= memcmp(tn, n, sizeof n) != 0;
        memcpy(tn, n, sizeof n); /* the index order's, for the tree run next */
      }
  assert_true(tree_differs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_forward_backward),
      cmocka_unit_test(test_bf16_rounding_points),
      cmocka_unit_test(test_residual_norm_is_the_sequence),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
