/* The CUDA attention (kernels/attention.cu) against the CPU's definition,
 * attention_forward_simple and attention_backward_simple, bit for bit:
 * y, lse, dq, dk, dv in fp32 and bf16 modes (bf16 inputs in bf16 mode),
 * on shapes that end mid-tile (T = 37, 70), with grouped KV heads (4 over
 * 2, 2 over 1) and every head width class (16, 64, 128); each launch
 * twice, the second result equal to the first. The CPU's blocked kernels
 * equal the simple ones (tests/test_kernels_attention.c), so the GPU
 * equals what the CPU trainer computes.
 *
 * Needs a GPU: without one these skip and say why (ci/gpu-check.sh runs
 * them on a GPU machine and fails on any skip there; ci/cuda-emu.sh runs
 * them on its CPU stand-in). The shape refusals need no GPU. */
#include "tests/test_util.h"

#include "kernels/attention.h"
#include "kernels/bf16.h"
#include "tests/cuda_check.h"
#include "tests/kernel_check.h"

#ifdef PGOLF_HAVE_CUDA

typedef struct shape {
  int B, T, heads, kv_heads, hd;
} shape;

static const shape SHAPES[] = {{2, 37, 4, 2, 16}, {1, 70, 2, 1, 64}, {1, 20, 2, 2, 128}};

static float *filled(kc_rng *rng, size_t n, double scale, int flags) {
  float *x = malloc(n * sizeof *x);
  assert_non_null(x);
  kc_fill(rng, x, n, scale);
  if (flags & KERNEL_BF16) bf16_round_array(x, n);
  return x;
}

static float *zeros(size_t n) {
  float *x = calloc(n, sizeof *x);
  assert_non_null(x);
  return x;
}

static void one_shape(const shape *s, int flags) {
  const size_t nq = (size_t)s->B * s->T * s->heads * s->hd;
  const size_t nk = (size_t)s->B * s->T * s->kv_heads * s->hd;
  const size_t nr = (size_t)s->B * s->heads * s->T;
  kc_rng rng = {(uint64_t)(977 + s->T + 31 * s->hd + flags)};
  /* Scores of a few units: the softmax is neither uniform nor one-hot. */
  float *q = filled(&rng, nq, 1.5, flags), *k = filled(&rng, nk, 1.5, flags);
  float *v = filled(&rng, nk, 1.0, flags), *dy = filled(&rng, nq, 1.0, flags);
  float *y = zeros(nq), *lse = zeros(nr), *dq = zeros(nq), *dk = zeros(nk), *dv = zeros(nk);
  attention_forward_simple(y, lse, q, k, v, s->B, s->T, s->heads, s->kv_heads, s->hd, flags);
  attention_backward_simple(dq, dk, dv, dy, y, lse, q, k, v, s->B, s->T, s->heads, s->kv_heads,
                            s->hd, flags);
  float *d_q = to_device(q, nq), *d_k = to_device(k, nk), *d_v = to_device(v, nk);
  float *d_dy = to_device(dy, nq), *d_y = to_device(y, nq), *d_lse = to_device(lse, nr);
  float *d_out = to_device(y, nq), *d_lse_out = to_device(lse, nr), *d_scratch = to_device(lse, nr);
  float *d_dq = to_device(dq, nq), *d_dk = to_device(dk, nk), *d_dv = to_device(dv, nk);
  pg_error err;
  char what[96];
  for (int rep = 0; rep < 2; rep++) {
    CK(cudaMemset(d_out, 0xff, nq * sizeof *d_out)); /* NaNs: every element must be written */
    CK(cudaMemset(d_lse_out, 0xff, nr * sizeof *d_lse_out));
    assert_int_equal(attention_forward_cuda(d_out, d_lse_out, d_q, d_k, d_v, s->B, s->T, s->heads,
                                            s->kv_heads, s->hd, flags, 0, &err),
                     0);
    snprintf(what, sizeof what, "attention y T=%d hd=%d flags=%d rep %d", s->T, s->hd, flags, rep);
    expect_device(d_out, y, nq, what);
    snprintf(what, sizeof what, "attention lse T=%d hd=%d flags=%d rep %d", s->T, s->hd, flags, rep);
    expect_device(d_lse_out, lse, nr, what);
    /* The backward from the CPU's y and lse: the comparison is of the
     * backward alone. */
    CK(cudaMemset(d_dq, 0xff, nq * sizeof *d_dq));
    CK(cudaMemset(d_dk, 0xff, nk * sizeof *d_dk));
    CK(cudaMemset(d_dv, 0xff, nk * sizeof *d_dv));
    assert_int_equal(attention_backward_cuda(d_dq, d_dk, d_dv, d_dy, d_y, d_lse, d_q, d_k, d_v,
                                             d_scratch, s->B, s->T, s->heads, s->kv_heads, s->hd,
                                             flags, 0, &err),
                     0);
    snprintf(what, sizeof what, "attention dq T=%d hd=%d flags=%d rep %d", s->T, s->hd, flags, rep);
    expect_device(d_dq, dq, nq, what);
    snprintf(what, sizeof what, "attention dk T=%d hd=%d flags=%d rep %d", s->T, s->hd, flags, rep);
    expect_device(d_dk, dk, nk, what);
    snprintf(what, sizeof what, "attention dv T=%d hd=%d flags=%d rep %d", s->T, s->hd, flags, rep);
    expect_device(d_dv, dv, nk, what);
  }
  float *dev[] = {d_q, d_k, d_v, d_dy, d_y, d_lse, d_out, d_lse_out, d_scratch, d_dq, d_dk, d_dv};
  for (size_t i = 0; i < sizeof dev / sizeof *dev; i++) CK(cudaFree(dev[i]));
  float *host[] = {q, k, v, dy, y, lse, dq, dk, dv};
  for (size_t i = 0; i < sizeof host / sizeof *host; i++) free(host[i]);
}

static void test_attention_fp32(void **state) {
  (void)state;
  NEED_GPU();
  for (size_t i = 0; i < sizeof SHAPES / sizeof *SHAPES; i++) one_shape(&SHAPES[i], 0);
}

static void test_attention_bf16(void **state) {
  (void)state;
  NEED_GPU();
  for (size_t i = 0; i < sizeof SHAPES / sizeof *SHAPES; i++) one_shape(&SHAPES[i], KERNEL_BF16);
}

/* Shapes the launchers refuse before touching the device. No GPU needed. */
static void test_attention_bad_shapes(void **state) {
  (void)state;
  pg_error err;
  assert_int_equal(attention_forward_cuda(NULL, NULL, NULL, NULL, NULL, 1, 8, 4, 2, 24, 0, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "head_dim 24 not supported on the GPU"));
  assert_int_equal(attention_forward_cuda(NULL, NULL, NULL, NULL, NULL, 1, 8, 4, 2, 256, 0, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "head_dim 256"));
  assert_int_equal(attention_backward_cuda(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                           NULL, 1, 8, 3, 2, 64, 0, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "attention: bad shape"));
  /* Operands the kernels would read a float4 at a time from a misaligned
   * address (never dereferenced: refused first). */
  static _Alignas(16) float buf[64];
  const float *odd = buf + 1;
  assert_int_equal(attention_forward_cuda(buf, buf, buf, odd, buf, 1, 8, 2, 1, 16, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "operand 1 at"));
  assert_non_null(strstr(err.msg, "not 16-byte aligned"));
  assert_int_equal(attention_backward_cuda(buf, buf, buf, odd, buf, buf, buf, buf, buf, buf, 1, 8, 2,
                                           1, 16, 0, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "operand 0 at"));
}

#else

static void no_cuda(void **state) {
  (void)state;
  fprintf(stderr, "skipped: needs a GPU: this pgolf was built without CUDA (no nvcc)\n");
  skip();
}
#define test_attention_fp32 no_cuda
#define test_attention_bf16 no_cuda
#define test_attention_bad_shapes no_cuda

#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_attention_bad_shapes),
      cmocka_unit_test(test_attention_fp32),
      cmocka_unit_test(test_attention_bf16),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
