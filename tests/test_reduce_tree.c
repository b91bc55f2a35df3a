/* The fixed reduction tree (kernels/reduce_tree.h) and the tree twins of
 * the kernels: the tree's order exactly (small cases by hand), its error
 * against float64 within the documented bound, and rmsnorm's tree refs
 * against float64 references in fp32 and bf16 modes. On a GPU the CUDA
 * kernels must equal these refs bit for bit (tests/test_cuda_kernels.c). */
#include "tests/test_util.h"

#include <float.h>
#include <math.h>

#include "kernels/bf16.h"
#include "kernels/reduce_tree.h"
#include "kernels/rmsnorm.h"
#include "tests/kernel_check.h"

/* The order, by hand. With 3 terms, lanes 0-2 hold t0-t2 and the others
 * zero; the halving adds zeros until off = 2 (p0 = t0 + t2) and off = 1
 * (p0 = p0 + p1), so the sum is (t0 + t2) + t1. */
static void test_order_small(void **state) {
  (void)state;
  float t[3] = {1.0f, 1e-8f, -1.0f};
  /* t0 + t2 = 0 first, then + t1: the tiny term survives. A left-to-right
   * sum (1 + 1e-8) - 1 loses it. */
  assert_true(tree_sum_ref(t, 3) == 1e-8f);
  float seq = (t[0] + t[1]) + t[2];
  assert_true(seq == 0.0f);
  /* 257 terms: lane 0 sums t0 then t256 before the halving. */
  float u[257];
  for (int i = 0; i < 257; i++) u[i] = 0.0f;
  u[0] = 1e8f, u[256] = -1e8f, u[128] = 1.0f;
  assert_true(tree_sum_ref(u, 257) == 1.0f); /* (1e8 - 1e8) + 1, not (1e8 + 1) - 1e8 */
}

/* |tree - exact| <= (ceil(n/256) + 8) * eps * sum |t| (each term passes
 * through at most that many float adds). */
static void test_error_bound(void **state) {
  (void)state;
  kc_rng rng = {11};
  size_t sizes[] = {1, 7, 255, 256, 257, 1000, 4096, 100003};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    size_t n = sizes[s];
    float *t = malloc(n * sizeof *t);
    double *td = malloc(n * sizeof *td);
    assert_non_null(t);
    assert_non_null(td);
    kc_fill(&rng, t, n, 3.0);
    double exact = 0.0, abs_sum = 0.0;
    for (size_t i = 0; i < n; i++) exact += t[i], abs_sum += fabs(t[i]), td[i] = t[i];
    double bound = ((double)((n + 255) / 256) + 8.0) * FLT_EPSILON * abs_sum;
    assert_true(fabs((double)tree_sum_ref(t, n) - exact) <= bound);
    assert_true(fabs(tree_sum_f64_ref(td, n) - exact) <= 1e-12 * abs_sum);
    free(t);
    free(td);
  }
}

static void ref_rmsnorm(double *y, double *rstd, const float *x, int rows, int d) {
  for (int r = 0; r < rows; r++) {
    double ss = 0.0;
    for (int j = 0; j < d; j++) ss += (double)x[r * d + j] * x[r * d + j];
    rstd[r] = 1.0 / sqrt(ss / d + (double)FLT_EPSILON);
    for (int j = 0; j < d; j++) y[r * d + j] = x[r * d + j] * rstd[r];
  }
}

/* The tree refs at the baseline's width (512) and a width that leaves
 * lanes empty (100): within a few ulp of float64; bf16 mode rounds y. */
static void test_rmsnorm_tree_ref(void **state) {
  (void)state;
  int dims[] = {100, 512, 1000};
  kc_rng rng = {5};
  for (int k = 0; k < 3; k++) {
    int rows = 3, d = dims[k];
    size_t n = (size_t)rows * d;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *g = malloc(n * sizeof *g);
    float *dx = malloc(n * sizeof *dx), rstd[3];
    double *yr = malloc(n * sizeof *yr), rr[3];
    kc_fill(&rng, x, n, 2.0);
    kc_fill(&rng, g, n, 1.0);
    ref_rmsnorm(yr, rr, x, rows, d);
    rmsnorm_forward_tree_ref(y, rstd, x, rows, d, 0);
    KC_ASSERT_CLOSE(y, yr, n, 1e-5, 1e-6, "tree ref forward");
    rmsnorm_forward_tree_ref(y, rstd, x, rows, d, KERNEL_BF16);
    for (size_t i = 0; i < n; i++) assert_true(bf16_is_exact(y[i]));
    KC_ASSERT_CLOSE(y, yr, n, 8e-3, 1e-6, "tree ref forward, bf16");
    /* Backward: the tree ref and the sequential kernel agree to float
     * rounding (same formula, another summation order). */
    rmsnorm_forward_tree_ref(y, rstd, x, rows, d, 0);
    rmsnorm_backward_tree_ref(dx, g, x, rstd, rows, d, 0);
    float *dx2 = malloc(n * sizeof *dx2);
    rmsnorm_backward(dx2, g, x, rstd, rows, d, 0);
    double *dx2d = kc_to_double(dx2, n);
    KC_ASSERT_CLOSE(dx, dx2d, n, 1e-4, 1e-6, "tree ref backward");
    free(x), free(y), free(g), free(dx), free(dx2), free(dx2d), free(yr);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_order_small),
      cmocka_unit_test(test_error_bound),
      cmocka_unit_test(test_rmsnorm_tree_ref),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
