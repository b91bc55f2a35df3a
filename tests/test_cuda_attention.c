/* The CUDA attention (kernels/attention.cu, attention_mma.cu) against the
 * CPU's definition, attention_forward_simple and attention_backward_simple:
 * y, lse, dq, dk, dv in fp32 and bf16 modes (bf16 inputs in bf16 mode),
 * on shapes that end mid-tile (T = 37, 65, 70, 130), with grouped KV heads
 * (4 over 2, 2 over 1, 4 over 1) and every head width class (16, 32, 48,
 * 64, 128); each launch twice, the second result equal to the first bit
 * for bit.
 * The CUDA-core kernels (fp32, head_dim 128, KERNEL_CUDA_CORES) equal the
 * CPU bit for bit. The tensor-core kernels (bf16, head_dim up to 64) do on
 * the stand-in, whose mma is the CPU's fmaf chain; on a GPU, and on the
 * stand-in with another adder (CUDA_EMU_MMA=wide: ci/cuda-emu.sh runs
 * this test so too, so the tolerance path is exercised here), they are
 * held to ATTENTION_MMA_TOL (attention.h) and to equality run to run. The
 * CPU's blocked kernels equal the simple ones (tests/
 * test_kernels_attention.c), so the GPU computes what the CPU trainer
 * does.
 *
 * Needs a GPU: without one these skip and say why (ci/gpu-check.sh runs
 * them on a GPU machine and fails on any skip there; ci/cuda-emu.sh runs
 * them on its CPU stand-in). The shape refusals need no GPU. */
#include "tests/test_util.h"

#include <math.h>

#include "kernels/attention.h"
#include "kernels/bf16.h"
#include "tests/cuda_check.h"
#include "tests/kernel_check.h"

#ifdef PGOLF_HAVE_CUDA

typedef struct shape {
  int B, T, heads, kv_heads, hd;
} shape;

static const shape SHAPES[] = {{2, 37, 4, 2, 16}, {1, 70, 2, 1, 64}, {1, 20, 2, 2, 128},
                               {1, 130, 4, 1, 32}, {2, 65, 2, 2, 48}};

static float *zeros(size_t n) {
  float *x = calloc(n, sizeof *x);
  assert_non_null(x);
  return x;
}

/* got against the CPU's want: bit for bit when exact, else within
 * ATTENTION_MMA_TOL * (|want| + the tensor's rms). */
static void expect_result(const float *got, const float *want, size_t n, int exact,
                          const char *what) {
  if (exact) {
    assert_same_bits(got, want, n, what);
    return;
  }
  double ss = 0.0;
  for (size_t i = 0; i < n; i++) ss += (double)want[i] * want[i];
  const double rms = n ? sqrt(ss / (double)n) : 0.0;
  double worst = 0.0; /* of |got - want| / (|want| + rms) */
  size_t differ = 0;
  for (size_t i = 0; i < n; i++) {
    const double scale = fabs(want[i]) + rms, diff = fabs((double)got[i] - want[i]);
    if (!(diff <= ATTENTION_MMA_TOL * scale))
      fail_msg("%s: element %zu: gpu %.9g, cpu %.9g, beyond %.3g", what, i, (double)got[i],
               (double)want[i], ATTENTION_MMA_TOL * scale);
    differ += memcmp(&got[i], &want[i], sizeof *got) != 0;
    if (scale > 0 && diff / scale > worst) worst = diff / scale;
  }
  /* The margin, for the record of a GPU run. */
  fprintf(stderr, "%s: %zu of %zu differ from the CPU's bits; worst %.3g of the tolerance\n", what,
          differ, n, worst / ATTENTION_MMA_TOL);
}

enum { Y, LSE, DQ, DK, DV, N_OUT };

static void one_shape(const shape *s, int flags) {
  const size_t nq = (size_t)s->B * s->T * s->heads * s->hd;
  const size_t nk = (size_t)s->B * s->T * s->kv_heads * s->hd;
  const size_t nr = (size_t)s->B * s->heads * s->T;
  /* The CUDA-core kernels and the stand-in's fmaf chain give the CPU's
   * bits; a tensor core (or the stand-in's wide adder) its tolerance. */
  const int exact = mma_is_cpu_chain() || !attention_mma_supported(s->hd, flags);
  kc_rng rng = {(uint64_t)(977 + s->T + 31 * s->hd + flags)};
  /* Scores of a few units: the softmax is neither uniform nor one-hot. */
  float *q = kc_filled(&rng, nq, 1.5, flags & KERNEL_BF16),
        *k = kc_filled(&rng, nk, 1.5, flags & KERNEL_BF16);
  float *v = kc_filled(&rng, nk, 1.0, flags & KERNEL_BF16),
        *dy = kc_filled(&rng, nq, 1.0, flags & KERNEL_BF16);
  float *y = zeros(nq), *lse = zeros(nr), *dq = zeros(nq), *dk = zeros(nk), *dv = zeros(nk);
  attention_forward_simple(y, lse, q, k, v, s->B, s->T, s->heads, s->kv_heads, s->hd, flags);
  attention_backward_simple(dq, dk, dv, dy, y, lse, q, k, v, s->B, s->T, s->heads, s->kv_heads,
                            s->hd, flags);
  float *d_q = to_device(q, nq), *d_k = to_device(k, nk), *d_v = to_device(v, nk);
  float *d_dy = to_device(dy, nq), *d_y = to_device(y, nq), *d_lse = to_device(lse, nr);
  float *d_out = to_device(y, nq), *d_lse_out = to_device(lse, nr), *d_scratch = NULL;
  /* The backward's scratch: D, and ds where the tensor cores run. The
   * first backward gets it as cudaMalloc leaves it, so that under
   * compute-sanitizer's initcheck (ci/gpu-check.sh) the dq kernel must
   * copy no ds the dk/dv kernel did not write; NaNs before each later
   * one, so a ds it uses without dk/dv having written it shows in dq. */
  const size_t scratch_bytes = attention_backward_scratch_bytes(s->B, s->T, s->heads, s->hd, flags);
  CK(cudaMalloc((void **)&d_scratch, scratch_bytes));
  float *d_dq = to_device(dq, nq), *d_dk = to_device(dk, nk), *d_dv = to_device(dv, nk);
  /* bf16: y's packed copy too (kernels/flags.h), the output projection's operand. */
  uint16_t *d_y16 = (flags & KERNEL_BF16) ? packed_nans(nq) : NULL;
  const float *want[N_OUT] = {y, lse, dq, dk, dv};
  float *dev[N_OUT] = {d_out, d_lse_out, d_dq, d_dk, d_dv};
  const size_t len[N_OUT] = {nq, nr, nq, nk, nk};
  static const char *const name[N_OUT] = {"y", "lse", "dq", "dk", "dv"};
  float *got[2][N_OUT];
  pg_error err;
  char what[128];
  for (int rep = 0; rep < 2; rep++) {
    /* NaNs: every element must be written. */
    for (int o = 0; o < N_OUT; o++) CK(cudaMemset(dev[o], 0xff, len[o] * sizeof(float)));
    assert_int_equal(attention_forward_cuda(d_out, d_y16, d_lse_out, d_q, d_k, d_v, s->B, s->T,
                                            s->heads, s->kv_heads, s->hd, flags, 0, &err),
                     0);
    if (d_y16) {
      snprintf(what, sizeof what, "attention y16 T=%d hd=%d flags=%d rep %d", s->T, s->hd, flags,
               rep);
      expect_packed(d_y16, d_out, nq, what);
      CK(cudaMemset(d_y16, 0xff, nq * sizeof *d_y16));
    }
    /* The backward from the CPU's y and lse: the comparison is of the
     * backward alone. */
    if (rep) CK(cudaMemset(d_scratch, 0xff, scratch_bytes));
    assert_int_equal(attention_backward_cuda(d_dq, d_dk, d_dv, d_dy, d_y, d_lse, d_q, d_k, d_v,
                                             d_scratch, s->B, s->T, s->heads, s->kv_heads, s->hd,
                                             flags, 0, &err),
                     0);
    CK(cudaDeviceSynchronize());
    for (int o = 0; o < N_OUT; o++) {
      got[rep][o] = malloc(len[o] * sizeof(float));
      assert_non_null(got[rep][o]);
      from_device(got[rep][o], dev[o], len[o]);
      snprintf(what, sizeof what, "attention %s T=%d hd=%d flags=%d rep %d%s", name[o], s->T,
               s->hd, flags, rep, exact ? "" : " (tensor cores)");
      expect_result(got[rep][o], want[o], len[o], exact, what);
      if (rep == 1) { /* run to run: bit for bit, whichever kernels */
        snprintf(what, sizeof what, "attention %s T=%d hd=%d flags=%d: second run against first",
                 name[o], s->T, s->hd, flags);
        assert_same_bits(got[1][o], got[0][o], len[o], what);
      }
    }
  }
  if (attention_mma_supported(s->hd, flags)) {
    /* Packed operands (as qk_norm, the GEMMs and the forward's packed
     * copy leave them): the float entry points' bits, on a GPU too, since
     * the kernels stage the same bf16s. */
    uint16_t *p_q = packed_device(q, nq), *p_k = packed_device(k, nk), *p_v = packed_device(v, nk);
    uint16_t *p_dy = packed_device(dy, nq), *p_y = packed_device(y, nq);
    /* The backward's results packed as well: NaNs first, so every
     * element must be written. */
    uint16_t *p_dq = packed_nans(nq), *p_dk = packed_nans(nk), *p_dv = packed_nans(nk);
    uint16_t *p_out[N_OUT] = {NULL, NULL, p_dq, p_dk, p_dv};
    for (int rep = 0; rep < 2; rep++) {
      for (int o = 0; o < N_OUT; o++) CK(cudaMemset(dev[o], 0xff, len[o] * sizeof(float)));
      for (int o = DQ; o < N_OUT; o++) CK(cudaMemset(p_out[o], 0xff, len[o] * sizeof(uint16_t)));
      CK(cudaMemset(d_y16, 0xff, nq * sizeof *d_y16));
      CK(cudaMemset(d_scratch, 0xff, scratch_bytes));
      assert_int_equal(attention_forward_packed_cuda(rep ? NULL : d_out, d_y16, d_lse_out, p_q,
                                                     p_k, p_v, s->B, s->T, s->heads, s->kv_heads,
                                                     s->hd, flags, 0, &err),
                       0);
      assert_int_equal(attention_backward_packed_cuda(p_dq, p_dk, p_dv, p_dy, p_y, d_lse, p_q, p_k,
                                                      p_v, d_scratch, s->B, s->T, s->heads,
                                                      s->kv_heads, s->hd, flags, 0, &err),
                       0);
      snprintf(what, sizeof what, "attention packed operands T=%d hd=%d rep %d", s->T, s->hd, rep);
      if (!rep) expect_device(d_out, got[0][Y], nq, what);
      /* y16 alone (rep 1) must hold the float entry's y */
      to_device_again(d_out, got[0][Y], nq);
      expect_packed(d_y16, d_out, nq, what);
      expect_device(d_lse_out, got[0][LSE], nr, what);
      /* the packed dq, dk, dv: the float entry's bits, each a bf16 */
      for (int o = DQ; o < N_OUT; o++) {
        to_device_again(dev[o], got[0][o], len[o]);
        expect_packed(p_out[o], dev[o], len[o], what);
      }
    }
    CK(cudaFree(p_q)), CK(cudaFree(p_k)), CK(cudaFree(p_v)), CK(cudaFree(p_dy)), CK(cudaFree(p_y));
    CK(cudaFree(p_dq)), CK(cudaFree(p_dk)), CK(cudaFree(p_dv));
  }
  for (int rep = 0; rep < 2; rep++)
    for (int o = 0; o < N_OUT; o++) free(got[rep][o]);
  float *devs[] = {d_q, d_k, d_v, d_dy, d_y, d_lse, d_out, d_lse_out, d_scratch, d_dq, d_dk, d_dv};
  for (size_t i = 0; i < sizeof devs / sizeof *devs; i++) CK(cudaFree(devs[i]));
  if (d_y16) CK(cudaFree(d_y16));
  float *host[] = {q, k, v, dy, y, lse, dq, dk, dv};
  for (size_t i = 0; i < sizeof host / sizeof *host; i++) free(host[i]);
}

static void test_attention_fp32(void **state) {
  (void)state;
  NEED_GPU();
  for (size_t i = 0; i < sizeof SHAPES / sizeof *SHAPES; i++) one_shape(&SHAPES[i], 0);
}

/* bf16: the tensor cores where they apply (head_dim up to 64). */
static void test_attention_bf16(void **state) {
  (void)state;
  NEED_GPU();
  for (size_t i = 0; i < sizeof SHAPES / sizeof *SHAPES; i++) one_shape(&SHAPES[i], KERNEL_BF16);
}

/* bf16 on the CUDA cores (KERNEL_CUDA_CORES): the CPU's bits everywhere. */
static void test_attention_bf16_cuda_cores(void **state) {
  (void)state;
  NEED_GPU();
  for (size_t i = 0; i < sizeof SHAPES / sizeof *SHAPES; i++)
    one_shape(&SHAPES[i], KERNEL_BF16 | KERNEL_CUDA_CORES);
}

/* Which kernels run: the tensor cores only for bf16 heads of 16..64 in
 * steps of 16, and the direct entry points refuse anything else. */
static void test_attention_mma_choice(void **state) {
  (void)state;
  for (int hd = 16; hd <= 128; hd += 16) {
    assert_int_equal(attention_mma_supported(hd, KERNEL_BF16), hd <= 64);
    assert_int_equal(attention_mma_supported(hd, 0), 0);
    assert_int_equal(attention_mma_supported(hd, KERNEL_BF16 | KERNEL_CUDA_CORES), 0);
  }
  assert_int_equal(attention_mma_supported(24, KERNEL_BF16), 0);
  pg_error err;
  assert_int_equal(attention_mma_forward_cuda(NULL, NULL, NULL, NULL, NULL, NULL, 1, 8, 2, 1, 128,
                                              KERNEL_BF16, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "got head_dim 128"));
  assert_int_equal(attention_mma_backward_cuda(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                               NULL, 1, 8, 2, 1, 64, 0, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "flags 0"));
  /* ds's tiles are copied 16 bytes at a time. */
  static _Alignas(16) uint16_t ds[64];
  assert_int_equal(attention_mma_backward_cuda(NULL, NULL, NULL, ds + 4, NULL, NULL, NULL, NULL,
                                               NULL, NULL, 1, 8, 2, 1, 64, KERNEL_BF16, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "ds scratch"));
  assert_non_null(strstr(err.msg, "not 16-byte aligned"));
  /* The scratch: D's floats rounded up to 16 bytes, then ds's rows of T
   * rounded up to 8 where the tensor cores run. */
  assert_int_equal(attention_ds_stride(37), 40);
  assert_int_equal(attention_ds_stride(64), 64);
  assert_int_equal(attention_backward_scratch_bytes(2, 37, 3, 64, 0), 2 * 3 * 37 * 4 + 8);
  assert_int_equal(attention_backward_scratch_bytes(2, 37, 3, 64, KERNEL_BF16),
                   2 * 3 * 37 * 4 + 8 + 2 * 3 * 37 * 40 * 2);
  assert_int_equal(attention_backward_scratch_bytes(2, 37, 3, 128, KERNEL_BF16),
                   2 * 3 * 37 * 4 + 8);
}

/* Shapes the launchers refuse before touching the device. No GPU needed. */
static void test_attention_bad_shapes(void **state) {
  (void)state;
  pg_error err;
  assert_int_equal(
      attention_forward_cuda(NULL, NULL, NULL, NULL, NULL, NULL, 1, 8, 4, 2, 24, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "head_dim 24 not supported on the GPU"));
  assert_int_equal(
      attention_forward_cuda(NULL, NULL, NULL, NULL, NULL, NULL, 1, 8, 4, 2, 256, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "head_dim 256"));
  assert_int_equal(attention_backward_cuda(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                           NULL, 1, 8, 3, 2, 64, 0, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "attention: bad shape"));
  /* Operands the kernels would read a float4 at a time from a misaligned
   * address (never dereferenced: refused first). */
  static _Alignas(16) float buf[64];
  const float *odd = buf + 1;
  assert_int_equal(
      attention_forward_cuda(buf, NULL, buf, buf, odd, buf, 1, 8, 2, 1, 16, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "operand 1 at"));
  assert_non_null(strstr(err.msg, "not 16-byte aligned"));
  /* A packed copy of fp32 results would not be the results. */
  static _Alignas(16) uint16_t buf16[64];
  assert_int_equal(
      attention_forward_cuda(buf, buf16, buf, buf, buf, buf, 1, 8, 2, 1, 16, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "attention: a packed copy needs bf16 results"));
  /* Packed operands: only for the tensor-core kernels, 16-byte aligned
   * (the staged inputs) or 8 (the results). */
  assert_int_equal(attention_forward_packed_cuda(buf, NULL, buf, buf16, buf16, buf16, 1, 8, 2, 1, 128,
                                                 KERNEL_BF16, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "packed operands need the tensor-core kernels"));
  assert_int_equal(attention_backward_packed_cuda(buf16, buf16, buf16, buf16, buf16, buf, buf16,
                                                  buf16, buf16, buf, 1, 8, 2, 1, 64, 0, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "got head_dim 64, flags 0"));
  /* The packed results are stored in pairs: 8-byte aligned. */
  assert_int_equal(
      attention_backward_packed_cuda(buf16, buf16, buf16 + 2, buf16, buf16, buf, buf16, buf16,
                                     buf16, buf, 1, 8, 2, 1, 64, KERNEL_BF16, 0, &err),
      -1);
  assert_non_null(strstr(err.msg, "packed operand 3 at"));
  assert_non_null(strstr(err.msg, "not 8-byte aligned"));
  /* The staged inputs are copied 16 bytes at a time: 8 is not enough. */
  assert_int_equal(
      attention_backward_packed_cuda(buf16, buf16, buf16, buf16, buf16, buf, buf16, buf16 + 4,
                                     buf16, buf, 1, 8, 2, 1, 64, KERNEL_BF16, 0, &err),
      -1);
  assert_non_null(strstr(err.msg, "packed operand 2 at"));
  assert_non_null(strstr(err.msg, "not 16-byte aligned"));
  assert_int_equal(attention_forward_packed_cuda(buf, NULL, buf, buf16, buf16 + 1, buf16, 1, 8, 2, 1,
                                                 64, KERNEL_BF16, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "packed operand 1 at"));
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
#define test_attention_bf16_cuda_cores no_cuda
#define test_attention_mma_choice no_cuda
#define test_attention_bad_shapes no_cuda

#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_attention_bad_shapes),
      cmocka_unit_test(test_attention_fp32),
      cmocka_unit_test(test_attention_mma_choice),
      cmocka_unit_test(test_attention_bf16),
      cmocka_unit_test(test_attention_bf16_cuda_cores),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
