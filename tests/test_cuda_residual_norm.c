/* The residual update fused with its norm on the GPU
 * (kernels/residual_norm.cu) against residual_norm_forward with the GPU's
 * tree (the CPU's scale_add_forward, residual_mix_forward and
 * rmsnorm_forward_tree_ref in turn), bit for bit: every form the trainer
 * uses (the mix alone at a block's start; an add of a packed projection
 * output, alone before n2 and the final norm, or followed by the next
 * block's mix; an add of floats, a skip connection, then the mix), the
 * norm in float32 and bf16 with its packed copy (and the copy alone),
 * widths under, at and over the tree's 256 lanes, rows that leave a
 * block's warps idle. Each launch twice, the second equal to the first;
 * every output starts as NaNs. And what the launcher refuses.
 *
 * Needs a GPU: without one these skip and say why (ci/gpu-check.sh runs
 * them on a GPU machine and fails on any skip there; ci/cuda-emu.sh runs
 * them on its CPU stand-in). */
#include "tests/test_util.h"

#include "kernels/bf16.h"
#include "kernels/residual_norm.h"
#include "tests/cuda_check.h"
#include "tests/kernel_check.h"

#ifdef PGOLF_HAVE_CUDA

#define TWICE for (int rep_ = 0; rep_ < 2; rep_++)

static float *nans_device(size_t n) {
  float *d = NULL;
  CK(cudaMalloc((void **)&d, (n ? n : 1) * sizeof *d));
  CK(cudaMemset(d, 0xff, n * sizeof *d));
  return d;
}

enum { ADD_NONE, ADD_PACKED, ADD_FLOATS };

/* One form (add, mix) at one shape and precision. */
static void one_case(int rows, int d, int add, int mix, int add_flags, int norm_flags) {
  const size_t n = (size_t)rows * d;
  kc_rng rng = {(uint64_t)(rows * 131 + d * 7 + add * 3 + mix)};
  const int bf16 = (add_flags | norm_flags) & KERNEL_BF16;
  float *x = kc_filled(&rng, n, 2.0, bf16), *x0 = kc_filled(&rng, n, 1.0, bf16);
  float *y = kc_filled(&rng, n, 1.0, add == ADD_PACKED || bf16), *s = kc_filled(&rng, d, 1.0, 0);
  float *m = kc_filled(&rng, 2 * (size_t)d, 1.0, 0);
  float *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v), *nn = malloc(n * sizeof *nn);
  float *rstd = malloc((size_t)rows * sizeof *rstd);
  assert_true(u && v && nn && rstd);
  residual_norm_io want = {x, add ? s : NULL, y, NULL, u, x0, mix ? m : NULL, v, nn, NULL, rstd};
  residual_norm_forward(&want, rows, d, add_flags, norm_flags | KERNEL_TREE);

  float *d_x = to_device(x, n), *d_x0 = to_device(x0, n), *d_y = to_device(y, n);
  float *d_s = to_device(s, d), *d_m = to_device(m, 2 * (size_t)d);
  uint16_t *d_y16 = packed_device(y, n), *d_n16 = packed_nans(n);
  float *d_u = nans_device(n), *d_v = nans_device(n), *d_n = nans_device(n);
  float *d_rstd = nans_device((size_t)rows);
  const int packed_ok = kernel_packed_ok(norm_flags);
  residual_norm_io io = {d_x,
                         add ? d_s : NULL,
                         add == ADD_FLOATS ? d_y : NULL,
                         add == ADD_PACKED ? d_y16 : NULL,
                         d_u,
                         d_x0,
                         mix ? d_m : NULL,
                         d_v,
                         d_n,
                         packed_ok ? d_n16 : NULL,
                         d_rstd};
  char what[128];
  snprintf(what, sizeof what, "residual_norm %d x %d add %d mix %d flags %d/%d", rows, d, add, mix,
           add_flags, norm_flags);
  pg_error err;
  TWICE {
    assert_int_equal(residual_norm_forward_cuda(&io, rows, d, add_flags, norm_flags, 0, &err), 0);
    if (add) expect_device(d_u, u, n, what);
    if (mix) expect_device(d_v, v, n, what);
    expect_device(d_n, nn, n, what);
    expect_device(d_rstd, rstd, (size_t)rows, what);
    if (packed_ok) expect_packed(d_n16, d_n, n, what);
  }
  if (packed_ok) { /* the packed copy alone, as the trainer's mixed precision takes n1 and n2 */
    residual_norm_io alone = io;
    alone.n = NULL;
    CK(cudaMemset(d_n16, 0xff, n * sizeof *d_n16));
    assert_int_equal(residual_norm_forward_cuda(&alone, rows, d, add_flags, norm_flags, 0, &err),
                     0);
    expect_packed(d_n16, d_n, n, what);
  }
  float *devs[] = {d_x, d_x0, d_y, d_s, d_m, d_u, d_v, d_n, d_rstd};
  for (size_t i = 0; i < sizeof devs / sizeof *devs; i++) CK(cudaFree(devs[i]));
  CK(cudaFree(d_y16)), CK(cudaFree(d_n16));
  free(x), free(x0), free(y), free(s), free(m), free(u), free(v), free(nn), free(rstd);
}

static void test_residual_norm(void **state) {
  (void)state;
  NEED_GPU();
  static const int shapes[][2] = {{37, 100}, {20, 512}, {13, 48}, {9, 1000}};
  /* (add, mix): the trainer's forms, and the norm of x alone */
  static const int forms[][2] = {{ADD_NONE, 1},   {ADD_PACKED, 0}, {ADD_PACKED, 1},
                                 {ADD_FLOATS, 1}, {ADD_FLOATS, 0}, {ADD_NONE, 0}};
  static const int flags[][2] = {{0, 0}, {0, KERNEL_BF16}, {KERNEL_BF16, KERNEL_BF16}};
  for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
    for (size_t f = 0; f < sizeof forms / sizeof *forms; f++)
      for (size_t g = 0; g < sizeof flags / sizeof *flags; g++)
        one_case(shapes[k][0], shapes[k][1], forms[f][0], forms[f][1], flags[g][0], flags[g][1]);
}

/* What the launcher refuses, before any launch. No GPU needed. */
static void test_residual_norm_refusals(void **state) {
  (void)state;
  static float f[16];
  static uint16_t b[16];
  pg_error err;
  residual_norm_io io = {f, NULL, NULL, NULL, NULL, NULL, NULL, NULL, f, NULL, f};
  assert_int_equal(residual_norm_forward_cuda(&io, 2, 0, 0, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "residual_norm: bad shape 2 x 0"));
  io.s = f;
  io.y = f;
  assert_int_equal(residual_norm_forward_cuda(&io, 2, 8, 0, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "residual_norm: an add needs u"));
  io.u = f;
  io.y16 = b;
  assert_int_equal(residual_norm_forward_cuda(&io, 2, 8, 0, 0, 0, &err), -1);
  assert_non_null(
      strstr(err.msg, "residual_norm: y must come as floats or packed, exactly one (got both)"));
  io.y16 = NULL;
  io.mix = f;
  assert_int_equal(residual_norm_forward_cuda(&io, 2, 8, 0, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "residual_norm: a mix needs v and x0"));
  io.mix = NULL;
  io.n16 = b;
  assert_int_equal(residual_norm_forward_cuda(&io, 2, 8, 0, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "residual_norm: a packed copy needs bf16 results (flags 0)"));
  io.n = NULL;
  io.n16 = NULL;
  assert_int_equal(residual_norm_forward_cuda(&io, 2, 8, 0, KERNEL_BF16, 0, &err), -1);
  assert_non_null(strstr(err.msg, "residual_norm: no output"));
}

#else

static void no_cuda(void **state) {
  (void)state;
  fprintf(stderr, "skipped: needs a GPU: this pgolf was built without CUDA (no nvcc)\n");
  skip();
}
#define test_residual_norm no_cuda
#define test_residual_norm_refusals no_cuda

#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_residual_norm_refusals),
      cmocka_unit_test(test_residual_norm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
