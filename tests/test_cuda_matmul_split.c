/* The split weight gradient on the GPU (kernels/matmul_split.h) against
 * the CPU's: the chunks' products through kernels/matmul.h, their ordered
 * sum by matmul_split_sum_cuda. Shapes with one chunk, several, and a
 * short last one; fp32 and bf16 operands; stored, and accumulated into a
 * float32 gradient. The sum kernel alone must equal matmul_split_sum bit
 * for bit everywhere. On ci/cuda-emu.sh's stand-in the products are the
 * CPU's, so the whole split must equal the CPU's bit for bit; on a GPU
 * the products are cuBLASLt's (within kernels/matmul.h's tolerance of the
 * whole sum, plus a bf16 ulp where the sum is rounded) and the bits
 * repeat run to run. Skips without a GPU. */
#include "tests/test_util.h"

#include <math.h>

#include "kernels/bf16.h"
#include "kernels/matmul.h"
#include "kernels/matmul_split.h"
#include "tests/cuda_check.h"
#include "tests/kernel_check.h"

#ifdef PGOLF_HAVE_CUDA

/* The sum kernel against the CPU loop, every flag combination the model
 * uses, 1 to 9 chunks. */
static void test_split_sum_equals_cpu(void **state) {
  (void)state;
  NEED_GPU();
  const int flag_sets[] = {0, KERNEL_ACCUMULATE | KERNEL_OUT_FP32, KERNEL_BF16,
                           KERNEL_BF16 | KERNEL_ACCUMULATE | KERNEL_OUT_FP32};
  const size_t len = 70001;
  kc_rng rng = {41};
  pg_error err;
  for (int chunks = 1; chunks <= 9; chunks += 4)
    for (int f = 0; f < 4; f++) {
      float *parts = malloc(chunks * len * sizeof *parts), *dw = malloc(len * sizeof *dw);
      float *want = malloc(len * sizeof *want);
      assert_true(parts && dw && want);
      kc_fill(&rng, parts, chunks * len, 2.0);
      kc_fill(&rng, dw, len, 1.0);
      memcpy(want, dw, len * sizeof *want);
      matmul_split_sum(want, parts, chunks, len, flag_sets[f]);
      float *d_parts = to_device(parts, chunks * len), *d_dw = to_device(dw, len);
      assert_int_equal(matmul_split_sum_cuda(d_dw, d_parts, chunks, len, flag_sets[f], 0, &err), 0);
      expect_device(d_dw, want, len, "matmul_split_sum");
      cudaFree(d_parts), cudaFree(d_dw);
      free(parts), free(dw), free(want);
    }
  assert_int_equal(matmul_split_sum_cuda(NULL, NULL, 0, 1, 0, 0, &err), -1);
}

/* Device operands: floats, or their bf16 bits. */
static void *upload(const float *h, size_t n, int bf16) {
  if (!bf16) return to_device(h, n);
  uint16_t *t = malloc((n ? n : 1) * sizeof *t);
  assert_non_null(t);
  bf16_pack(t, h, n);
  void *d = dev_bytes(t, n * sizeof *t);
  free(t);
  return d;
}

static void one_shape(matmul_cuda_ctx *c, int n, int in, int out, int rows, int flags,
                      kc_rng *rng) {
  pg_error err;
  const int bf = (flags & KERNEL_BF16) != 0, exact = on_stand_in();
  const size_t ny = (size_t)n * out, nx = (size_t)n * in, nw = (size_t)out * in;
  float *dy = malloc(ny * 4), *x = malloc(nx * 4), *base = malloc(nw * 4), *want = malloc(nw * 4);
  float *got = malloc(nw * 4), *first = malloc(nw * 4), *abs = malloc(nw * 4);
  float *ady = malloc(ny * 4), *ax = malloc(nx * 4);
  float *parts = malloc(matmul_split_floats(n, rows, in, out) * 4);
  assert_true(dy && x && base && want && got && first && abs && ady && ax && parts);
  kc_fill(rng, dy, ny, 1.0);
  kc_fill(rng, x, nx, 1.0);
  kc_fill(rng, base, nw, 1.0);
  if (bf) bf16_round_array(dy, ny), bf16_round_array(x, nx);
  memcpy(want, base, nw * 4);
  matmul_backward_weight_split(want, dy, x, n, in, out, flags, rows, parts);
  for (size_t i = 0; i < ny; i++) ady[i] = fabsf(dy[i]);
  for (size_t i = 0; i < nx; i++) ax[i] = fabsf(x[i]);
  matmul_backward_weight_simple(abs, ady, ax, n, in, out, 0);
  void *d_dy = upload(dy, ny, bf), *d_x = upload(x, nx, bf);
  float *d_parts = NULL, *d_dw = to_device(base, nw);
  CK(cudaMalloc((void **)&d_parts, matmul_split_floats(n, rows, in, out) * 4));
  for (int rep = 0; rep < 2; rep++) {
    to_device_again(d_dw, base, nw);
    /* The partials poisoned with NaN (all bits set): a partial cuBLASLt
     * left unwritten makes its elements NaN, which the checks below fail.
     * This is the check compute-sanitizer's initcheck cannot make here: it
     * does not see the writes of cuBLASLt's Hopper kernels and reported
     * every read of their partials as uninitialised (H100, 2026-11-28). */
    CK(cudaMemset(d_parts, 0xff, matmul_split_floats(n, rows, in, out) * 4));
    assert_int_equal(matmul_backward_weight_split_cuda(c, d_dw, d_dy, d_x, n, in, out, flags, rows,
                                                       d_parts, 0, &err),
                     0);
    CK(cudaDeviceSynchronize());
    from_device(got, d_dw, nw);
    if (rep == 1) assert_same_bits(got, first, nw, "split, run to run");
    memcpy(first, got, nw * 4);
  }
  if (exact) {
    assert_same_bits(got, want, nw, "split on the stand-in");
  } else {
    for (size_t i = 0; i < nw; i++) {
      double tol = MATMUL_CUDA_RTOL * n * abs[i] + (bf ? fabs(want[i]) * 0x1p-7 : 0.0);
      if (!(fabs((double)got[i] - want[i]) <= tol)) {
        fprintf(stderr, "split %dx%dx%d flags %d: element %zu gpu %.9g cpu %.9g tol %.3g\n", n,
                in, out, flags, i, (double)got[i], (double)want[i], tol);
        fail();
      }
    }
  }
  cudaFree(d_dy), cudaFree(d_x), cudaFree(d_parts), cudaFree(d_dw);
  free(dy), free(x), free(base), free(want), free(got), free(first), free(abs), free(ady);
  free(ax), free(parts);
}

static void test_split_product(void **state) {
  (void)state;
  NEED_GPU();
  /* {n, in, out, rows}: one chunk; four; three with a short last one */
  const int shapes[][4] = {{96, 40, 24, 128}, {512, 40, 24, 128}, {300, 64, 48, 128}};
  const int flag_sets[] = {0, KERNEL_ACCUMULATE | KERNEL_OUT_FP32, KERNEL_BF16,
                           KERNEL_BF16 | KERNEL_ACCUMULATE | KERNEL_OUT_FP32};
  kc_rng rng = {43};
  matmul_cuda_ctx *c;
  pg_error err;
  assert_int_equal(matmul_cuda_init(&c, 4u << 20, &err), 0);
  for (int s = 0; s < 3; s++)
    for (int f = 0; f < 4; f++)
      one_shape(c, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], flag_sets[f], &rng);
  assert_int_equal(matmul_backward_weight_split_cuda(c, NULL, NULL, NULL, 0, 4, 4, 0, 128, NULL, 0,
                                                     &err),
                   -1);
  /* A partial product is stored, never accumulated. */
  assert_int_equal(matmul_backward_weight_cuda(c, NULL, NULL, NULL, 4, 4, 4,
                                               KERNEL_PARTIAL | KERNEL_ACCUMULATE, 0, &err),
                   -1);
  matmul_cuda_free(c);
}

#else

static void no_cuda(void **state) {
  (void)state;
  fprintf(stderr, "skipped: needs a GPU: this pgolf was built without CUDA (no nvcc)\n");
  skip();
}
#define test_split_sum_equals_cpu no_cuda
#define test_split_product no_cuda

#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_split_sum_equals_cpu),
      cmocka_unit_test(test_split_product),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
