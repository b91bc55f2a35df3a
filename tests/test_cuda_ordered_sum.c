/* The ordered sum's CUDA kernel (kernels/ordered_sum.h) against the CPU's
 * combination (trainer/grad_sum.h's grad_sum_ordered), bit for bit and run
 * to run: 1 to 8 shards, both scales, lengths that leave a block partly
 * empty and that wrap the grid, in place over shard 0 as well. Needs a
 * GPU: without one (or without the CUDA build) it skips and says why;
 * ci/gpu-check.sh runs it on a GPU machine and fails on any skip there. */
#include "tests/test_util.h"

#include "kernels/ordered_sum.h"
#include "tests/cuda_check.h"
#include "trainer/grad_sum.h"

#ifdef PGOLF_HAVE_CUDA
static void fill(float *g, size_t count, uint32_t seed) {
  for (size_t i = 0; i < count; i++) {
    seed = seed * 1664525u + 1013904223u;
    float mag = 1.0f;
    for (uint32_t e = (seed >> 3) % 7; e > 0; e--) mag *= 10.0f;
    g[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * mag;
  }
}

static void test_equals_cpu(void **state) {
  (void)state;
  NEED_GPU();
  const size_t lens[] = {1, 255, 1000, 256 * 4096 + 77};
  pg_error err;
  for (int k = 0; k < 4; k++) {
    size_t len = lens[k];
    for (int n = 1; n <= 8; n *= 2) {
      size_t stride = len + 3; /* a gap between the shards, as the padded slices have */
      float *g = malloc((size_t)n * stride * sizeof *g), *want = malloc(len * sizeof *want);
      float *got = malloc(len * sizeof *got);
      assert_true(g && want && got);
      fill(g, (size_t)n * stride, (uint32_t)(k * 16 + n));
      float *dg = to_device(g, (size_t)n * stride), *dout = to_device(g, len);
      for (int s = 0; s < 2; s++) {
        float scale = s ? 1.0f / (float)n : 1.0f;
        grad_sum_ordered(want, g, stride, n, len, scale);
        for (int rep = 0; rep < 2; rep++) {
          assert_int_equal(ordered_sum_cuda(dout, dg, stride, n, len, scale, 0, &err), 0);
          expect_device(dout, want, len, "ordered sum");
        }
      }
      /* In place over shard 0, as the single-process world sums. */
      grad_sum_ordered(want, g, stride, n, len, 0.125f);
      assert_int_equal(ordered_sum_cuda(dg, dg, stride, n, len, 0.125f, 0, &err), 0);
      expect_device(dg, want, len, "ordered sum in place");
      CK(cudaFree(dg));
      CK(cudaFree(dout));
      free(g);
      free(want);
      free(got);
    }
  }
}

static void test_no_shards_is_an_error(void **state) {
  (void)state;
  pg_error err;
  assert_int_equal(ordered_sum_cuda(NULL, NULL, 1, 0, 1, 1.0f, 0, &err), -1);
  assert_non_null(strstr(err.msg, "0 shards"));
}
#else
static void test_equals_cpu(void **state) {
  (void)state;
  fprintf(stderr, "skipped: needs a GPU: this pgolf was built without CUDA (no nvcc)\n");
  skip();
}
static void test_no_shards_is_an_error(void **state) { test_equals_cpu(state); }
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_equals_cpu),
      cmocka_unit_test(test_no_shards_is_an_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
