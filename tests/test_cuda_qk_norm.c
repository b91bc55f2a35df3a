/* The fused q/k norm, RoPE and gain on the GPU (kernels/qk_norm.cu)
 * against the CPU's three kernels in turn under KERNEL_TREE
 * (qk_norm_forward, qk_norm_backward), bit for bit: q (with its gain) and
 * k (without), float32 and F4's cast (KERNEL_ROUND_OUT), x as floats and
 * packed, the backward plain, B4-rounded with its packed copy (alone, as
 * the trainer takes it, too), accumulating, and in place (dx = dy); head
 * widths whose rotation pairs sit in one lane (64, 128) and others (16,
 * 48), rows that leave a block's warps idle, positions that wrap T. Each
 * launch twice, the second equal to the first. The tests of the CPU
 * functions themselves are in tests/test_kernels_qk_norm.c.
 *
 * Needs a GPU: without one these skip and say why (ci/gpu-check.sh runs
 * them on a GPU machine and fails on any skip there; ci/cuda-emu.sh runs
 * them on its CPU stand-in). */
#include "tests/test_util.h"

#include "kernels/bf16.h"
#include "kernels/qk_norm.h"
#include "kernels/rope.h"
#include "tests/cuda_check.h"
#include "tests/kernel_check.h"

#ifdef PGOLF_HAVE_CUDA

#define TWICE for (int rep_ = 0; rep_ < 2; rep_++)

typedef struct {
  int rows, T, heads, hd;
} shape;

/* The last is QK_NORM_HD_MAX wide: every one of a lane's rotation pairs
 * (kernels/qk_norm.cu's QN_PAIRS) in use. */
static const shape SHAPES[] = {
    {37, 16, 3, 16}, {20, 8, 2, 64}, {9, 4, 2, 128}, {13, 5, 1, 48}, {6, 3, 2, QK_NORM_HD_MAX}};

static void one_shape(const shape *s) {
  const int rows = s->rows, T = s->T, heads = s->heads, hd = s->hd;
  const size_t n = (size_t)rows * heads * hd, nr = (size_t)rows * heads, nt = (size_t)T * hd / 2;
  kc_rng rng = {(uint64_t)(300 + hd + rows)};
  /* x bf16 (a bf16 projection's output), so its packed copy is exact */
  float *x = kc_filled(&rng, n, 2.0, 1), *dy = kc_filled(&rng, n, 1.0, 0);
  float *acc = kc_filled(&rng, n, 0.5, 1), *gain = kc_filled(&rng, heads, 2.0, 0);
  float *c = malloc(nt * sizeof *c), *sn = malloc(nt * sizeof *sn),
        *scratch = malloc(n * sizeof *scratch);
  float *rope = malloc(n * sizeof *rope), *fin = malloc(n * sizeof *fin),
        *rstd = malloc(nr * sizeof *rstd);
  float *want = malloc(n * sizeof *want);
  rope_table(c, sn, T, hd, 10000.0f, KERNEL_BF16);
  float *d_x = to_device(x, n), *d_dy = to_device(dy, n), *d_gain = to_device(gain, heads);
  float *d_c = to_device(c, nt), *d_s = to_device(sn, nt), *d_rope = to_device(x, n);
  float *d_fin = to_device(x, n), *d_rstd = to_device(x, nr), *d_dx = to_device(x, n);
  uint16_t *d_x16 = packed_device(x, n), *d16 = packed_nans(n);
  pg_error err;
  char what[160];
  for (int q = 0; q < 2; q++) { /* k, then q with its gain */
    const float *g = q ? gain : NULL, *d_g = q ? d_gain : NULL;
    for (int f = 0; f < 2; f++) {
      const int flags = f ? KERNEL_ROUND_OUT : 0;
      qk_norm_forward(rope, fin, rstd, x, g, c, sn, rows, T, heads, hd, flags | KERNEL_TREE,
                      scratch);
      for (int packed = 0; packed < 2; packed++) TWICE {
          CK(cudaMemset(d_fin, 0xff, n * sizeof(float)));
          CK(cudaMemset(d_rope, 0xff, n * sizeof(float)));
          CK(cudaMemset(d_rstd, 0xff, nr * sizeof(float)));
          /* F4's cast: fin's packed copy too, for the tensor-core attention */
          uint16_t *fin16 = kernel_packed_ok(flags) ? d16 : NULL;
          assert_int_equal(qk_norm_forward_cuda(q ? d_rope : NULL, d_fin, fin16, d_rstd,
                                                packed ? NULL : d_x, packed ? d_x16 : NULL, d_g,
                                                d_c, d_s, rows, T, heads, hd, flags, 0, &err),
                           0);
          snprintf(what, sizeof what, "qk_norm forward %s hd=%d flags=%d x %s", q ? "q" : "k", hd,
                   flags, packed ? "packed" : "floats");
          expect_device(d_fin, fin, n, what);
          expect_device(d_rstd, rstd, nr, what);
          if (q) expect_device(d_rope, rope, n, what);
          if (!fin16) continue;
          expect_packed(fin16, d_fin, n, what);
          CK(cudaMemset(fin16, 0xff, n * sizeof *fin16)); /* and fin16 alone */
          assert_int_equal(qk_norm_forward_cuda(NULL, NULL, fin16, d_rstd, packed ? NULL : d_x,
                                                packed ? d_x16 : NULL, d_g, d_c, d_s, rows, T,
                                                heads, hd, flags, 0, &err),
                           0);
          expect_packed(fin16, d_fin, n, "qk_norm forward fin16 alone");
        }
    }
    /* The backward from the CPU's rstd (the forward's, just compared). */
    qk_norm_forward(rope, fin, rstd, x, g, c, sn, rows, T, heads, hd, KERNEL_TREE, scratch);
    to_device_again(d_rstd, rstd, nr);
    const int bwd[] = {0, KERNEL_BF16, KERNEL_BF16 | KERNEL_ACCUMULATE, KERNEL_ACCUMULATE};
    for (int f = 0; f < 4; f++) {
      const int flags = bwd[f];
      uint16_t *p16 = kernel_packed_ok(flags) ? d16 : NULL;
      memcpy(want, acc, n * sizeof *want);
      qk_norm_backward(want, dy, x, rstd, g, c, sn, rows, T, heads, hd, flags | KERNEL_TREE,
                       scratch);
      for (int packed = 0; packed < 2; packed++) TWICE {
          to_device_again(d_dx, acc, n);
          assert_int_equal(qk_norm_backward_cuda(d_dx, p16, d_dy, NULL, packed ? NULL : d_x,
                                                 packed ? d_x16 : NULL, d_rstd, d_g, d_c, d_s, rows,
                                                 T, heads, hd, flags, 0, &err),
                           0);
          snprintf(what, sizeof what, "qk_norm backward %s hd=%d flags=%d x %s", q ? "q" : "k", hd,
                   flags, packed ? "packed" : "floats");
          expect_device(d_dx, want, n, what);
          if (p16) expect_packed(p16, d_dx, n, what);
        }
      if (flags & KERNEL_ACCUMULATE) continue;
      /* In place (dx = dy), as the trainer calls it; and dx16 alone. */
      memcpy(want, dy, n * sizeof *want);
      qk_norm_backward(want, want, x, rstd, g, c, sn, rows, T, heads, hd, flags | KERNEL_TREE,
                       want);
      TWICE {
        to_device_again(d_dx, dy, n);
        assert_int_equal(qk_norm_backward_cuda(d_dx, p16, d_dx, NULL, NULL, d_x16, d_rstd, d_g, d_c,
                                               d_s, rows, T, heads, hd, flags, 0, &err),
                         0);
        snprintf(what, sizeof what, "qk_norm backward in place %s hd=%d flags=%d", q ? "q" : "k",
                 hd, flags);
        expect_device(d_dx, want, n, what);
        if (!p16) continue;
        expect_packed(p16, d_dx, n, what);
        CK(cudaMemset(p16, 0xff, n * sizeof *p16));
        assert_int_equal(qk_norm_backward_cuda(NULL, p16, d_dy, NULL, NULL, d_x16, d_rstd, d_g, d_c,
                                               d_s, rows, T, heads, hd, flags, 0, &err),
                         0);
        expect_packed(p16, d_dx, n, "qk_norm backward dx16 alone");
      }
      if (!p16) continue;
      /* dy packed and dx16 written over it in place: the trainer's mixed
       * precision, where the tensor-core attention leaves dq and dk
       * packed. The bits of the same values as floats. */
      float *dyb = malloc(n * sizeof *dyb);
      assert_non_null(dyb);
      for (size_t i = 0; i < n; i++) dyb[i] = bf16_round(dy[i]);
      qk_norm_backward(want, dyb, x, rstd, g, c, sn, rows, T, heads, hd, flags | KERNEL_TREE,
                       scratch);
      TWICE {
        uint16_t *pdy = packed_device(dyb, n);
        assert_int_equal(qk_norm_backward_cuda(NULL, pdy, NULL, pdy, NULL, d_x16, d_rstd, d_g, d_c,
                                               d_s, rows, T, heads, hd, flags, 0, &err),
                         0);
        snprintf(what, sizeof what, "qk_norm backward %s hd=%d from packed dy, in place",
                 q ? "q" : "k", hd);
        to_device_again(d_dx, want, n);
        expect_packed(pdy, d_dx, n, what);
        CK(cudaFree(pdy));
      }
      free(dyb);
    }
  }
  float *devs[] = {d_x, d_dy, d_gain, d_c, d_s, d_rope, d_fin, d_rstd, d_dx};
  for (size_t i = 0; i < sizeof devs / sizeof *devs; i++) CK(cudaFree(devs[i]));
  CK(cudaFree(d_x16)), CK(cudaFree(d16));
  float *host[] = {x, dy, acc, gain, c, sn, scratch, rope, fin, rstd, want};
  for (size_t i = 0; i < sizeof host / sizeof *host; i++) free(host[i]);
}

static void test_qk_norm(void **state) {
  (void)state;
  NEED_GPU();
  for (size_t i = 0; i < sizeof SHAPES / sizeof *SHAPES; i++) one_shape(&SHAPES[i]);
}

/* What the launchers refuse, before any launch. No GPU needed. */
static void test_qk_norm_refusals(void **state) {
  (void)state;
  static float f[16];
  static uint16_t b[16];
  pg_error err;
  assert_int_equal(qk_norm_forward_cuda(NULL, f, NULL, f, f, NULL, NULL, f, f, 2, 4, 1, 7, 0, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "qk_norm: bad shape"));
  assert_int_equal(qk_norm_forward_cuda(NULL, f, NULL, f, f, NULL, NULL, f, f, 2, 4, 1,
                                        QK_NORM_HD_MAX + 2, 0, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "at most 256"));
  assert_int_equal(qk_norm_forward_cuda(NULL, f, NULL, f, f, b, NULL, f, f, 2, 4, 1, 8, 0, 0, &err), -1);
  assert_non_null(
      strstr(err.msg, "qk_norm: x must come as floats or packed, exactly one (got both)"));
  assert_int_equal(qk_norm_forward_cuda(NULL, f, b, f, f, NULL, NULL, f, f, 2, 4, 1, 8, 0, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "qk_norm: a packed copy needs bf16 results (flags 0)"));
  assert_int_equal(qk_norm_forward_cuda(NULL, NULL, NULL, f, f, NULL, NULL, f, f, 2, 4, 1, 8,
                                        KERNEL_ROUND_OUT, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "qk_norm: no output"));
  assert_int_equal(
      qk_norm_backward_cuda(f, b, f, NULL, f, NULL, f, NULL, f, f, 2, 4, 1, 8, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "qk_norm: a packed copy needs bf16 results (flags 0)"));
  assert_int_equal(qk_norm_backward_cuda(NULL, NULL, f, NULL, f, NULL, f, NULL, f, f, 2, 4, 1, 8,
                                         KERNEL_BF16, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "qk_norm: no output"));
  assert_int_equal(qk_norm_backward_cuda(NULL, b, f, NULL, f, NULL, f, NULL, f, f, 2, 4, 1, 8,
                                         KERNEL_BF16 | KERNEL_ACCUMULATE, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "qk_norm: accumulating needs dx"));
  assert_int_equal(
      qk_norm_backward_cuda(f, NULL, f, b, f, NULL, f, NULL, f, f, 2, 4, 1, 8, 0, 0, &err), -1);
  assert_non_null(
      strstr(err.msg, "qk_norm: dy must come as floats or packed, exactly one (got both)"));
}

#else

static void test_qk_norm(void **state) {
  (void)state;
  fprintf(stderr, "skipped: needs a GPU: this pgolf was built without CUDA (no nvcc)\n");
  skip();
}
#define test_qk_norm_refusals test_qk_norm

#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_qk_norm),
      cmocka_unit_test(test_qk_norm_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
