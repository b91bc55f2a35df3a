/* The CUDA kernels against their CPU tree twins, bit for bit, and run to
 * run. Needs a GPU: without one (or without the CUDA build) every test
 * skips and says why; ci/gpu-check.sh runs this on a GPU machine and fails
 * on any skip there. */
#include "tests/test_util.h"

#include "kernels/bf16.h"
#include "kernels/cuda_common.h"
#include "kernels/rmsnorm.h"
#include "tests/cuda_check.h"
#include "tests/kernel_check.h"

#ifdef PGOLF_HAVE_CUDA

/* Forward and backward at widths that leave lanes empty (100), fill them
 * (256, 512: the baseline), wrap them (1000, 4096), in fp32 and bf16, and
 * the backward accumulating into bf16 gradients; rounded on the store
 * alone (KERNEL_ROUND_OUT). Where the flags round what is stored, the
 * packed copy too (kernels/flags.h), which must hold the floats' bits.
 * Each launch twice: the second result must equal the first. */
static void test_rmsnorm_equals_tree_ref(void **state) {
  (void)state;
  NEED_GPU();
  /* Head widths (16, 64: lanes past the row), a row of one term per lane
   * and more; 37 rows (the last block's warps partly idle). */
  const int dims[] = {16, 64, 100, 256, 512, 1000, 4096}, rows = 37;
  const int fwd_flags[] = {0, KERNEL_BF16, KERNEL_ROUND_OUT};
  const int bwd_flags[] = {0, KERNEL_BF16, KERNEL_BF16 | KERNEL_ACCUMULATE, KERNEL_ROUND_OUT};
  kc_rng rng = {17};
  pg_error err;
  for (int k = 0; k < (int)(sizeof dims / sizeof *dims); k++) {
    int d = dims[k];
    size_t n = (size_t)rows * d;
    float *x = malloc(n * sizeof *x), *g = malloc(n * sizeof *g), *acc0 = malloc(n * sizeof *acc0);
    float *y_cpu = malloc(n * sizeof *y_cpu), *y_gpu = malloc(n * sizeof *y_gpu);
    float r_cpu[37], r_gpu[37];
    kc_fill(&rng, x, n, 2.0);
    kc_fill(&rng, g, n, 1.0);
    kc_fill(&rng, acc0, n, 0.5);
    float *dx = to_device(x, n), *dg = to_device(g, n), *dy = to_device(x, n);
    float *dr = to_device(r_cpu, rows);
    uint16_t *d16 = packed_nans(n);
    for (int f = 0; f < 3; f++) {
      rmsnorm_forward_tree_ref(y_cpu, r_cpu, x, rows, d, fwd_flags[f]);
      uint16_t *y16 = kernel_packed_ok(fwd_flags[f]) ? d16 : NULL;
      for (int rep = 0; rep < 2; rep++) {
        assert_int_equal(
            rmsnorm_forward_cuda(dy, y16, dr, dx, NULL, rows, d, fwd_flags[f], 0, &err), 0);
        CK(cudaDeviceSynchronize());
        from_device(y_gpu, dy, n);
        from_device(r_gpu, dr, rows);
        assert_same_bits(y_gpu, y_cpu, n, "rmsnorm forward y");
        assert_same_bits(r_gpu, r_cpu, rows, "rmsnorm forward rstd");
        if (y16) expect_packed(y16, dy, n, "rmsnorm forward y16");
        CK(cudaMemset(d16, 0xff, n * sizeof *d16));
      }
      if (y16) { /* the packed copy alone, y unwritten (NULL) */
        CK(cudaMemset(dy, 0xff, n * sizeof(float)));
        assert_int_equal(
            rmsnorm_forward_cuda(NULL, y16, dr, dx, NULL, rows, d, fwd_flags[f], 0, &err), 0);
        to_device_again(dy, y_cpu, n);
        expect_packed(y16, dy, n, "rmsnorm forward y16 alone");
        CK(cudaMemset(d16, 0xff, n * sizeof *d16));
      }
    }
    rmsnorm_forward_tree_ref(y_cpu, r_cpu, x, rows, d, 0);
    CK(cudaMemcpy(dr, r_cpu, rows * sizeof *r_cpu, cudaMemcpyHostToDevice));
    for (int f = 0; f < 4; f++) {
      memcpy(y_cpu, acc0, n * sizeof *y_cpu);
      rmsnorm_backward_tree_ref(y_cpu, g, x, r_cpu, rows, d, bwd_flags[f]);
      uint16_t *dx16 = kernel_packed_ok(bwd_flags[f]) ? d16 : NULL;
      for (int rep = 0; rep < 2; rep++) {
        CK(cudaMemcpy(dy, acc0, n * sizeof *acc0, cudaMemcpyHostToDevice));
        assert_int_equal(
            rmsnorm_backward_cuda(dy, dx16, dg, NULL, 1, dx, NULL, dr, rows, d, bwd_flags[f], 0, &err), 0);
        CK(cudaDeviceSynchronize());
        from_device(y_gpu, dy, n);
        assert_same_bits(y_gpu, y_cpu, n, "rmsnorm backward dx");
        if (dx16) expect_packed(dx16, dy, n, "rmsnorm backward dx16");
        CK(cudaMemset(d16, 0xff, n * sizeof *d16));
      }
    }
    cudaFree(dx), cudaFree(dg), cudaFree(dy), cudaFree(dr), cudaFree(d16);
    free(x), free(g), free(acc0), free(y_cpu), free(y_gpu);
  }
}

/* x packed (the bf16 q and k projections, read where their GEMMs left
 * them): the tree refs' bits on the same values as floats, forward and
 * backward, the head widths the trainer uses and a wider row. */
static void test_rmsnorm_packed_input(void **state) {
  (void)state;
  NEED_GPU();
  const int dims[] = {16, 64, 512}, rows = 37;
  kc_rng rng = {18};
  pg_error err;
  for (int k = 0; k < 3; k++) {
    int d = dims[k];
    size_t n = (size_t)rows * d;
    float *x = malloc(n * sizeof *x), *g = malloc(n * sizeof *g), *r = malloc(rows * sizeof *r);
    float *y_cpu = malloc(n * sizeof *y_cpu), *y_gpu = malloc(n * sizeof *y_gpu);
    kc_fill(&rng, x, n, 2.0);
    kc_fill(&rng, g, n, 1.0);
    bf16_round_array(x, n);
    uint16_t *x16 = packed_device(x, n);
    float *dg = to_device(g, n), *dy = to_device(g, n), *dr = to_device(r, rows);
    for (int f = 0; f < 2; f++) {
      const int flags = f ? KERNEL_BF16 : 0;
      rmsnorm_forward_tree_ref(y_cpu, r, x, rows, d, 0);
      assert_int_equal(rmsnorm_forward_cuda(dy, NULL, dr, NULL, x16, rows, d, 0, 0, &err), 0);
      expect_device(dy, y_cpu, n, "rmsnorm forward from packed x");
      expect_device(dr, r, rows, "rmsnorm forward from packed x: rstd");
      rmsnorm_backward_tree_ref(y_cpu, g, x, r, rows, d, flags);
      assert_int_equal(rmsnorm_backward_cuda(dy, NULL, dg, NULL, 1, NULL, x16, dr, rows, d, flags, 0, &err),
                       0);
      expect_device(dy, y_cpu, n, "rmsnorm backward from packed x");
    }
    cudaFree(x16), cudaFree(dg), cudaFree(dy), cudaFree(dr);
    free(x), free(g), free(r), free(y_cpu), free(y_gpu);
  }
}

/* dy packed, in one part or as three whose float32 sum in order is dy
 * (B2's gradients of n1 from q, k and v, where their GEMMs left them):
 * the tree ref's bits on that sum as floats, accumulating into dx as the
 * trainer does. */
static void test_rmsnorm_packed_dy(void **state) {
  (void)state;
  NEED_GPU();
  const int d = 512, rows = 37;
  const size_t n = (size_t)rows * d;
  kc_rng rng = {19};
  pg_error err;
  float *x = malloc(n * sizeof *x), *r = malloc(rows * sizeof *r), *y = malloc(n * sizeof *y);
  float *parts = malloc(3 * n * sizeof *parts), *sum = malloc(n * sizeof *sum);
  float *acc = malloc(n * sizeof *acc), *want = malloc(n * sizeof *want);
  kc_fill(&rng, x, n, 2.0);
  kc_fill(&rng, parts, 3 * n, 1.0);
  kc_fill(&rng, acc, n, 0.5);
  bf16_round_array(parts, 3 * n);
  rmsnorm_forward_tree_ref(y, r, x, rows, d, 0);
  uint16_t *d16 = packed_device(parts, 3 * n);
  float *dx = to_device(x, n), *dr = to_device(r, rows), *dout = to_device(acc, n);
  for (int k = 1; k <= 3; k += 2) {
    for (size_t i = 0; i < n; i++) {
      float t = parts[i];
      for (int p = 1; p < k; p++) t = t + parts[(size_t)p * n + i];
      sum[i] = t;
    }
    memcpy(want, acc, n * sizeof *want);
    rmsnorm_backward_tree_ref(want, sum, x, r, rows, d, KERNEL_ACCUMULATE);
    for (int rep = 0; rep < 2; rep++) {
      to_device_again(dout, acc, n);
      assert_int_equal(rmsnorm_backward_cuda(dout, NULL, NULL, d16, k, dx, NULL, dr, rows, d,
                                             KERNEL_ACCUMULATE, 0, &err),
                       0);
      expect_device(dout, want, n, k == 1 ? "rmsnorm backward from packed dy"
                                          : "rmsnorm backward from three packed parts of dy");
    }
  }
  cudaFree(d16), cudaFree(dx), cudaFree(dr), cudaFree(dout);
  free(x), free(r), free(y), free(parts), free(sum), free(acc), free(want);
}

/* A launch error comes back as a value: zero width is refused before any
 * launch, with the kernel's name. */
static void test_bad_shape_is_an_error(void **state) {
  (void)state;
  NEED_GPU();
  pg_error err;
  assert_int_equal(rmsnorm_forward_cuda(NULL, NULL, NULL, NULL, NULL, 4, 0, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "rmsnorm"));
  /* A packed copy of results that are not bf16 (fp32; a float32 sum). */
  static uint16_t y16[4];
  assert_int_equal(rmsnorm_forward_cuda(NULL, y16, NULL, NULL, NULL, 4, 8, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "rmsnorm: a packed copy needs bf16 results (flags 0)"));
  assert_int_equal(rmsnorm_backward_cuda(NULL, y16, NULL, NULL, 1, NULL, NULL, NULL, 4, 8,
                                         KERNEL_ROUND_OUT | KERNEL_ACCUMULATE, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "a packed copy needs bf16 results"));
  assert_int_equal(rmsnorm_forward_cuda(NULL, NULL, NULL, NULL, NULL, 4, 8, KERNEL_BF16, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "rmsnorm: no output"));
  static float f4[4];
  assert_int_equal(rmsnorm_forward_cuda(f4, NULL, f4, f4, y16, 4, 8, 0, 0, &err), -1);
  assert_non_null(
      strstr(err.msg, "rmsnorm: x must come as floats or packed, exactly one (got both)"));
  assert_int_equal(rmsnorm_backward_cuda(f4, NULL, f4, NULL, 1, NULL, NULL, f4, 4, 8, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "(got neither)"));
  assert_int_equal(rmsnorm_backward_cuda(f4, NULL, NULL, y16, 4, f4, NULL, f4, 4, 8, 0, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "rmsnorm: dy in 4 packed parts (1 to 3)"));
}

#else

static void test_rmsnorm_equals_tree_ref(void **state) {
  (void)state;
  fprintf(stderr, "skipped: needs a GPU: this pgolf was built without CUDA (no nvcc)\n");
  skip();
}
static void test_bad_shape_is_an_error(void **state) { test_rmsnorm_equals_tree_ref(state); }
static void test_rmsnorm_packed_input(void **state) { test_rmsnorm_equals_tree_ref(state); }
static void test_rmsnorm_packed_dy(void **state) { test_rmsnorm_equals_tree_ref(state); }

#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rmsnorm_equals_tree_ref),
      cmocka_unit_test(test_rmsnorm_packed_input),
      cmocka_unit_test(test_rmsnorm_packed_dy),
      cmocka_unit_test(test_bad_shape_is_an_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
