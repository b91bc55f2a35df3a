/* The CUDA twins of the non-GEMM ops against their CPU twins, bit for bit,
 * and run to run: elementwise results against the unchanged CPU kernels,
 * reductions against the *_tree_ref functions (tests/
 * test_kernels_tree_refs.c holds those to float64 and to the tree's
 * order). Every op in fp32 and bf16 modes (bf16 mode on bf16 inputs), the
 * gradients also accumulating (KERNEL_ACCUMULATE) where the op supports
 * it and in place where the trainer calls them so; each launch twice, the
 * second result equal to the first. det_math's functions are compared
 * over a dense sweep of float32 inputs.
 *
 * Needs a GPU: without one (or without the CUDA build) these skip and say
 * why; ci/gpu-check.sh runs them on a GPU machine and fails on any skip
 * there. The shape refusals need no GPU and run everywhere CUDA is built. */
#include "tests/test_util.h"

#include <math.h>

#include "kernels/bf16.h"
#include "kernels/col_dot.h"
#include "kernels/det_expf32.h"
#include "kernels/det_math.h"
#include "kernels/embedding.h"
#include "kernels/l2norm.h"
#include "kernels/optim_step.h"
#include "kernels/q_gain.h"
#include "kernels/reduce_tree.h"
#include "kernels/relu_square.h"
#include "kernels/residual_mix.h"
#include "kernels/rope.h"
#include "kernels/scale_add.h"
#include "kernels/softcap_cross_entropy.h"
#include "tests/cuda_check.h"
#include "tests/kernel_check.h"

#ifdef PGOLF_HAVE_CUDA

/* Each GPU launch is made twice; both results must equal the CPU's. */
#define TWICE for (int rep_ = 0; rep_ < 2; rep_++)

static float *copy_new(const float *x, size_t n) {
  float *y = malloc((n > 0 ? n : 1) * sizeof *y);
  assert_non_null(y);
  memcpy(y, x, n * sizeof *y);
  return y;
}

/* x for a mode: itself in fp32, a bf16-rounded copy under KERNEL_BF16
 * (the kernels take bf16 inputs in that mode). */
static float *mode_copy(const float *x, size_t n, int flags) {
  float *y = copy_new(x, n);
  if (flags & KERNEL_BF16) bf16_round_array(y, n);
  return y;
}

static const int FWD_FLAGS[] = {0, KERNEL_BF16};
/* KERNEL_ROUND_OUT last: the kernels that honour it round what they
 * store, and the CPU's do the same. */
static const int BWD_FLAGS[] = {0, KERNEL_BF16, KERNEL_BF16 | KERNEL_ACCUMULATE, KERNEL_ACCUMULATE,
                                KERNEL_ROUND_OUT};
#define N_BWD ((int)(sizeof BWD_FLAGS / sizeof *BWD_FLAGS))

/* Where the flags round what a kernel stores, the tests ask for the
 * packed copy too (kernels/flags.h) and hold it to the floats stored. */
static uint16_t *packed_if(uint16_t *d16, int flags) {
  return kernel_packed_ok(flags) ? d16 : NULL;
}

/* ---- relu_square: elementwise, against the CPU kernel ---- */

static void test_relu_square(void **state) {
  (void)state;
  NEED_GPU();
  const size_t n = 100003; /* more than one grid of the launch shape: the loop strides */
  kc_rng rng = {201};
  float *h0 = kc_filled(&rng, n, 2.0, 0), *g0 = kc_filled(&rng, n, 1.0, 0),
        *acc = kc_filled(&rng, n, 0.5, 0);
  float *want = malloc(n * sizeof *want);
  float *d_out = to_device(acc, n), *d_h = to_device(h0, n), *d_g = to_device(g0, n);
  uint16_t *d16 = packed_nans(n);
  pg_error err;
  for (int f = 0; f < N_BWD; f++) {
    int flags = BWD_FLAGS[f];
    uint16_t *p16 = packed_if(d16, flags);
    float *h = mode_copy(h0, n, flags), *g = mode_copy(g0, n, flags);
    to_device_again(d_h, h, n);
    to_device_again(d_g, g, n);
    if (!(flags & KERNEL_ACCUMULATE)) {
      relu_square_forward(want, h, n, flags);
      TWICE {
        assert_int_equal(relu_square_forward_cuda(d_out, p16, d_h, NULL, n, flags, 0, &err), 0);
        expect_device(d_out, want, n, "relu_square forward");
        if (p16) expect_packed(p16, d_out, n, "relu_square forward y16");
      }
      if (p16) { /* the packed copy alone, y unwritten (NULL) */
        TWICE {
          CK(cudaMemset(p16, 0xff, n * sizeof *p16));
          assert_int_equal(relu_square_forward_cuda(NULL, p16, d_h, NULL, n, flags, 0, &err), 0);
          to_device_again(d_out, want, n);
          expect_packed(p16, d_out, n, "relu_square forward y16 alone");
        }
      }
    }
    memcpy(want, acc, n * sizeof *want);
    relu_square_backward(want, g, h, n, flags);
    TWICE {
      to_device_again(d_out, acc, n);
      assert_int_equal(
          relu_square_backward_cuda(d_out, p16, d_g, NULL, d_h, NULL, n, flags, 0, &err), 0);
      expect_device(d_out, want, n, "relu_square backward");
      if (p16) expect_packed(p16, d_out, n, "relu_square backward dh16");
    }
    /* In place, dh = dy, as the trainer calls it. */
    if (!(flags & KERNEL_ACCUMULATE)) {
      memcpy(want, g, n * sizeof *want);
      relu_square_backward(want, want, h, n, flags);
      TWICE {
        to_device_again(d_out, g, n);
        assert_int_equal(
            relu_square_backward_cuda(d_out, p16, d_out, NULL, d_h, NULL, n, flags, 0, &err), 0);
        expect_device(d_out, want, n, "relu_square backward in place");
        if (p16) expect_packed(p16, d_out, n, "relu_square backward in place dh16");
      }
    }
    free(h), free(g);
  }
  cudaFree(d_out), cudaFree(d_h), cudaFree(d_g), cudaFree(d16);
  free(h0), free(g0), free(acc), free(want);
}

/* Packed inputs (a bf16 GEMM's result read where it lies, as the trainer
 * reads h_pre and dh): the floats the CPU kernel reads, bit for bit, in
 * every mode; the result packed alone as the trainer takes it (dh NULL),
 * or as floats too, accumulating. */
static void test_relu_square_packed_inputs(void **state) {
  (void)state;
  NEED_GPU();
  const size_t n = 70001;
  kc_rng rng = {209};
  float *h = kc_filled(&rng, n, 2.0, 0), *g = kc_filled(&rng, n, 1.0, 0),
        *acc = kc_filled(&rng, n, 0.5, 0);
  bf16_round_array(h, n), bf16_round_array(g, n), bf16_round_array(acc, n);
  float *want = malloc(n * sizeof *want), *d_out = to_device(acc, n);
  uint16_t *h16 = packed_device(h, n), *g16 = packed_device(g, n), *o16 = packed_nans(n);
  pg_error err;
  for (int f = 0; f < N_BWD; f++) {
    int flags = BWD_FLAGS[f];
    uint16_t *p16 = packed_if(o16, flags);
    if (!(flags & KERNEL_ACCUMULATE)) {
      relu_square_forward(want, h, n, flags);
      TWICE {
        CK(cudaMemset(d_out, 0xff, n * sizeof(float)));
        assert_int_equal(relu_square_forward_cuda(d_out, p16, NULL, h16, n, flags, 0, &err), 0);
        expect_device(d_out, want, n, "relu_square forward from packed h");
        if (p16) expect_packed(p16, d_out, n, "relu_square forward from packed h: y16");
      }
    }
    memcpy(want, acc, n * sizeof *want);
    relu_square_backward(want, g, h, n, flags);
    TWICE {
      to_device_again(d_out, acc, n);
      assert_int_equal(
          relu_square_backward_cuda(d_out, p16, NULL, g16, NULL, h16, n, flags, 0, &err), 0);
      expect_device(d_out, want, n, "relu_square backward from packed dy and h");
      if (p16) expect_packed(p16, d_out, n, "relu_square backward from packed dy and h: dh16");
      if (p16 && !(flags & KERNEL_ACCUMULATE)) { /* dh16 alone, the trainer's call */
        CK(cudaMemset(p16, 0xff, n * sizeof *p16));
        assert_int_equal(
            relu_square_backward_cuda(NULL, p16, NULL, g16, NULL, h16, n, flags, 0, &err), 0);
        expect_packed(p16, d_out, n, "relu_square backward dh16 alone");
      }
    }
  }
  cudaFree(d_out), cudaFree(h16), cudaFree(g16), cudaFree(o16);
  free(h), free(g), free(acc), free(want);
}

/* Device scratch of n doubles, all NaN: a lane the kernels forget to
 * write shows in the sums. */
static double *scratch_nans(size_t n) {
  double *p = NULL;
  CK(cudaMalloc((void **)&p, n * sizeof *p));
  CK(cudaMemset(p, 0xff, n * sizeof *p));
  return p;
}

/* ---- scale_add: out and dy elementwise, ds by the tree ---- */

static void test_scale_add(void **state) {
  (void)state;
  NEED_GPU();
  /* 2100 rows: a backward lane's rows in more than one batch of
   * COL_DOT_BATCH (kernels/col_dot_lanes.h), the last one short */
  const int shapes[][2] = {{600, 100}, {300, 512}, {37, 13}, {2100, 40}};
  kc_rng rng = {202};
  pg_error err;
  char what[96];
  for (int k = 0; k < 4; k++) {
    int rows = shapes[k][0], d = shapes[k][1];
    size_t n = (size_t)rows * d;
    float *x0 = kc_filled(&rng, n, 1.0, 0), *s0 = kc_filled(&rng, d, 1.0, 0),
          *y0 = kc_filled(&rng, n, 1.0, 0);
    float *g0 = kc_filled(&rng, n, 1.0, 0), *acc = kc_filled(&rng, n, 0.5, 0),
          *ds0 = kc_filled(&rng, d, 0.25, 0);
    float *want = malloc(n * sizeof *want), *want_ds = malloc(d * sizeof *want_ds);
    float *d_out = to_device(acc, n), *d_x = to_device(x0, n), *d_s = to_device(s0, d);
    float *d_y = to_device(y0, n), *d_g = to_device(g0, n), *d_ds = to_device(ds0, d);
    double *d_cs = scratch_nans(COL_DOT_SCRATCH(d));
    uint16_t *d16 = packed_nans(n);
    const int flagset[] = {0, KERNEL_BF16, KERNEL_BF16 | KERNEL_ACCUMULATE, KERNEL_ROUND_OUT};
    for (int f = 0; f < 4; f++) {
      int flags = flagset[f];
      uint16_t *p16 = packed_if(d16, flags);
      float *x = mode_copy(x0, n, flags), *y = mode_copy(y0, n, flags),
            *g = mode_copy(g0, n, flags);
      to_device_again(d_x, x, n);
      to_device_again(d_y, y, n);
      to_device_again(d_g, g, n);
      /* y as floats, then packed (a bf16 projection's output where its
       * GEMM left it): the CPU's bits on the same values as floats. */
      float *yb = mode_copy(y0, n, KERNEL_BF16);
      uint16_t *y16 = packed_device(yb, n);
      for (int pk = 0; pk < 2; pk++) {
        const float *yh = pk ? yb : y, *dy_f = pk ? NULL : d_y;
        const uint16_t *dy_h = pk ? y16 : NULL;
        const char *how = pk ? "from packed y" : "from floats";
        snprintf(what, sizeof what, "scale_add forward %s", how);
        if (f < 2) {
          scale_add_forward(want, x, s0, yh, rows, d, flags);
          TWICE {
            CK(cudaMemset(d_out, 0xff, n * sizeof(float)));
            assert_int_equal(
                scale_add_forward_cuda(d_out, d_x, d_s, dy_f, dy_h, rows, d, flags, 0, &err), 0);
            expect_device(d_out, want, n, what);
            /* out = x, in place, as the trainer's skip connections */
            to_device_again(d_out, x, n);
            assert_int_equal(
                scale_add_forward_cuda(d_out, d_out, d_s, dy_f, dy_h, rows, d, flags, 0, &err), 0);
            expect_device(d_out, want, n, what);
          }
        }
        snprintf(what, sizeof what, "scale_add backward %s: dy, dy16, ds (tree)", how);
        memcpy(want, acc, n * sizeof *want);
        memcpy(want_ds, ds0, d * sizeof *want_ds);
        scale_add_backward_tree_ref(want, want_ds, g, s0, yh, rows, d, flags);
        TWICE {
          to_device_again(d_out, acc, n);
          to_device_again(d_ds, ds0, d);
          assert_int_equal(scale_add_backward_cuda(d_out, p16, d_ds, d_g, d_s, dy_f, dy_h, rows, d,
                                                   flags, d_cs, 0, &err),
                           0);
          expect_device(d_out, want, n, what);
          if (p16) expect_packed(p16, d_out, n, what);
          expect_device(d_ds, want_ds, d, what);
          if (p16 && !(flags & KERNEL_ACCUMULATE)) {
            /* dy packed alone (the trainer's mixed precision): the same
             * bits as the packed copy above, ds again */
            snprintf(what, sizeof what, "scale_add backward %s: dy16 alone", how);
            CK(cudaMemset(p16, 0xff, n * sizeof *p16));
            to_device_again(d_ds, ds0, d);
            assert_int_equal(scale_add_backward_cuda(NULL, p16, d_ds, d_g, d_s, dy_f, dy_h, rows, d,
                                                     flags, d_cs, 0, &err),
                             0);
            expect_packed(p16, d_out, n, what);
            expect_device(d_ds, want_ds, d, what);
          }
        }
      }
      cudaFree(y16);
      free(x), free(y), free(g), free(yb);
    }
    cudaFree(d_out), cudaFree(d_x), cudaFree(d_s), cudaFree(d_y), cudaFree(d_g), cudaFree(d_ds);
    cudaFree(d_cs), cudaFree(d16);
    free(x0), free(s0), free(y0), free(g0), free(acc), free(ds0), free(want), free(want_ds);
  }
}

/* ---- residual_mix: out, dx, dx0 elementwise, dmix by the tree ---- */

static void test_residual_mix(void **state) {
  (void)state;
  NEED_GPU();
  const int shapes[][2] = {{600, 100}, {300, 512}, {2100, 40}}; /* as test_scale_add's */
  kc_rng rng = {203};
  pg_error err;
  for (int k = 0; k < 3; k++) {
    int rows = shapes[k][0], d = shapes[k][1];
    size_t n = (size_t)rows * d;
    float *x0v = kc_filled(&rng, n, 1.0, 0), *e0 = kc_filled(&rng, n, 1.0, 0),
          *mix = kc_filled(&rng, 2 * d, 1.0, 0);
    float *g0 = kc_filled(&rng, n, 1.0, 0), *acc = kc_filled(&rng, n, 0.5, 0),
          *dm0 = kc_filled(&rng, 2 * d, 0.25, 0);
    float *want = malloc(n * sizeof *want), *want_dx0 = malloc(n * sizeof *want_dx0);
    float *want_dm = malloc(2 * d * sizeof *want_dm);
    float *d_out = to_device(acc, n), *d_x = to_device(x0v, n), *d_e = to_device(e0, n);
    float *d_mix = to_device(mix, 2 * d), *d_dx0 = to_device(acc, n), *d_dm = to_device(dm0, 2 * d);
    double *d_cs = scratch_nans(COL_DOT_SCRATCH(2 * d)); /* both halves of mix at once */
    for (int f = 0; f < 2; f++) {
      int flags = FWD_FLAGS[f];
      float *x = mode_copy(x0v, n, flags), *e = mode_copy(e0, n, flags),
            *g = mode_copy(g0, n, flags);
      to_device_again(d_x, x, n);
      to_device_again(d_e, e, n);
      residual_mix_forward(want, x, e, mix, rows, d, flags);
      TWICE {
        assert_int_equal(residual_mix_forward_cuda(d_out, d_x, d_e, d_mix, rows, d, flags, 0, &err),
                         0);
        expect_device(d_out, want, n, "residual_mix forward");
      }
      /* dx = dout in place, as the trainer calls it; dx0 and dmix accumulate. */
      memcpy(want, g, n * sizeof *want);
      memcpy(want_dx0, acc, n * sizeof *want_dx0);
      memcpy(want_dm, dm0, 2 * d * sizeof *want_dm);
      residual_mix_backward_tree_ref(want, want_dx0, want_dm, want, x, e, mix, rows, d, flags);
      TWICE {
        to_device_again(d_out, g, n);
        to_device_again(d_dx0, acc, n);
        to_device_again(d_dm, dm0, 2 * d);
        assert_int_equal(residual_mix_backward_cuda(d_out, d_dx0, d_dm, d_out, d_x, d_e, d_mix,
                                                    rows, d, flags, d_cs, 0, &err),
                         0);
        expect_device(d_out, want, n, "residual_mix backward dx");
        expect_device(d_dx0, want_dx0, n, "residual_mix backward dx0");
        expect_device(d_dm, want_dm, 2 * d, "residual_mix backward dmix (tree)");
      }
      free(x), free(e), free(g);
    }
    cudaFree(d_out), cudaFree(d_x), cudaFree(d_e), cudaFree(d_mix), cudaFree(d_dx0), cudaFree(d_dm);
    cudaFree(d_cs);
    free(x0v), free(e0), free(mix), free(g0), free(acc), free(dm0), free(want), free(want_dx0);
    free(want_dm);
  }
}

/* ---- q_gain: y and dq elementwise, dg by the tree ---- */

/* Head widths that divide the tree's 256 lanes, one that does not (24:
 * the term index's carry), one wider than the lanes (300), fewer terms
 * than lanes (5 x 8), and lanes of several staged chunks (q_gain.cu's
 * QG_CHUNK = 128 terms a lane: 525 and, with the carry, 141). */
static void test_q_gain(void **state) {
  (void)state;
  NEED_GPU();
  const int shapes[][3] = {{300, 8, 16}, {100, 3, 64},  {5, 2, 8},    {37, 2, 24},
                           {3, 2, 300},  {2100, 2, 64}, {1500, 1, 24}};
  kc_rng rng = {204};
  pg_error err;
  double *d_scratch;
  CK(cudaMalloc((void **)&d_scratch, 8 * TREE_LANES * sizeof *d_scratch));
  for (int k = 0; k < 7; k++) {
    int rows = shapes[k][0], heads = shapes[k][1], hd = shapes[k][2];
    size_t n = (size_t)rows * heads * hd;
    float *q0 = kc_filled(&rng, n, 1.0, 0), *gain = kc_filled(&rng, heads, 2.0, 0);
    float *g0 = kc_filled(&rng, n, 1.0, 0);
    /* Over the chunked shapes, terms whose float64 sums depend on their
     * order (small ones summed in float64 are exact in any order, and a
     * lane that took its terms out of order would pass): dy = 1, and each
     * lane's terms (its i-th is term m = 256 i + lane) go +2^40, small,
     * small, -2^40, small, small, ... (each +2^40 with its -2^40, so the
     * sums stay small), and the small terms are rounded to 2^-12 next to a
     * large one, differently in another order. */
    if (k >= 5)
      for (size_t e = 0; e < n; e++) {
        const size_t m = e / ((size_t)heads * hd) * hd + e % hd, i = m / TREE_LANES;
        const size_t terms = (size_t)rows * hd,
                     count = (terms - m % TREE_LANES + TREE_LANES - 1) / TREE_LANES;
        g0[e] = 1.0f;
        if (i % 3 == 0 && i - i % 6 + 3 < count) q0[e] = i % 6 == 0 ? 0x1p40f : -0x1p40f;
      }
    float *acc = kc_filled(&rng, n, 0.5, 0), *dg0 = kc_filled(&rng, heads, 0.25, 0);
    float *want = malloc(n * sizeof *want), *want_dg = malloc(heads * sizeof *want_dg);
    float *d_out = to_device(acc, n), *d_q = to_device(q0, n), *d_gain = to_device(gain, heads);
    float *d_g = to_device(g0, n), *d_dg = to_device(dg0, heads);
    for (int f = 0; f < N_BWD; f++) {
      int flags = BWD_FLAGS[f];
      float *q = mode_copy(q0, n, flags), *g = mode_copy(g0, n, flags);
      to_device_again(d_q, q, n);
      to_device_again(d_g, g, n);
      if (!(flags & KERNEL_ACCUMULATE)) {
        q_gain_forward(want, q, gain, rows, heads, hd, flags);
        TWICE {
          assert_int_equal(q_gain_forward_cuda(d_out, d_q, d_gain, rows, heads, hd, flags, 0, &err),
                           0);
          expect_device(d_out, want, n, "q_gain forward");
        }
      }
      memcpy(want, acc, n * sizeof *want);
      memcpy(want_dg, dg0, heads * sizeof *want_dg);
      q_gain_backward_tree_ref(want, want_dg, g, q, gain, rows, heads, hd, flags);
      TWICE {
        to_device_again(d_out, acc, n);
        to_device_again(d_dg, dg0, heads);
        assert_int_equal(q_gain_backward_cuda(d_out, d_dg, d_scratch, d_g, NULL, d_q, d_gain, rows,
                                              heads, hd, flags, 0, &err),
                         0);
        expect_device(d_out, want, n, "q_gain backward dq");
        expect_device(d_dg, want_dg, heads, "q_gain backward dg (tree)");
        /* dq NULL: dg alone (the trainer's call; kernels/qk_norm.h makes dq) */
        to_device_again(d_dg, dg0, heads);
        assert_int_equal(q_gain_backward_cuda(NULL, d_dg, d_scratch, d_g, NULL, d_q, d_gain, rows,
                                              heads, hd, flags, 0, &err),
                         0);
        expect_device(d_dg, want_dg, heads, "q_gain backward dg alone (tree)");
        expect_device(d_out, want, n, "q_gain backward dg alone leaves dq");
      }
      /* dy packed (the tensor-core attention's dq, read where it lies):
       * the bits of the same values as floats. */
      float *gb = mode_copy(g0, n, KERNEL_BF16);
      uint16_t *gb16 = packed_device(gb, n);
      memcpy(want, acc, n * sizeof *want);
      memcpy(want_dg, dg0, heads * sizeof *want_dg);
      q_gain_backward_tree_ref(want, want_dg, gb, q, gain, rows, heads, hd, flags);
      TWICE {
        to_device_again(d_out, acc, n);
        to_device_again(d_dg, dg0, heads);
        assert_int_equal(q_gain_backward_cuda(d_out, d_dg, d_scratch, NULL, gb16, d_q, d_gain, rows,
                                              heads, hd, flags, 0, &err),
                         0);
        expect_device(d_out, want, n, "q_gain backward dq from packed dy");
        expect_device(d_dg, want_dg, heads, "q_gain backward dg from packed dy (tree)");
      }
      cudaFree(gb16);
      free(gb);
      /* dq = dy in place, as the trainer calls it. */
      if (!(flags & KERNEL_ACCUMULATE)) {
        memcpy(want, g, n * sizeof *want);
        memcpy(want_dg, dg0, heads * sizeof *want_dg);
        q_gain_backward_tree_ref(want, want_dg, want, q, gain, rows, heads, hd, flags);
        TWICE {
          to_device_again(d_out, g, n);
          to_device_again(d_dg, dg0, heads);
          assert_int_equal(q_gain_backward_cuda(d_out, d_dg, d_scratch, d_out, NULL, d_q, d_gain,
                                                rows, heads, hd, flags, 0, &err),
                           0);
          expect_device(d_out, want, n, "q_gain backward dq in place");
          expect_device(d_dg, want_dg, heads, "q_gain backward dg in place (tree)");
        }
      }
      free(q), free(g);
    }
    cudaFree(d_out), cudaFree(d_q), cudaFree(d_gain), cudaFree(d_g), cudaFree(d_dg);
    free(q0), free(gain), free(g0), free(acc), free(dg0), free(want), free(want_dg);
  }
  cudaFree(d_scratch);
}

/* ---- l2norm: the float64 tree ---- */

static void test_l2norm(void **state) {
  (void)state;
  NEED_GPU();
  const size_t sizes[] = {1, 255, 4097, (1u << 20) + 3};
  kc_rng rng = {205};
  pg_error err;
  for (int k = 0; k < 4; k++) {
    size_t n = sizes[k];
    float *x = kc_filled(&rng, n, 3.0, 0), *d_x = to_device(x, n);
    float *d_norm = NULL;
    double *d_ss = NULL, ss = 0.0, want_ss = l2norm_sumsq_tree_ref(x, n);
    float want = l2norm_tree_ref(x, n);
    CK(cudaMalloc((void **)&d_norm, sizeof *d_norm));
    CK(cudaMalloc((void **)&d_ss, sizeof *d_ss));
    TWICE {
      assert_int_equal(l2norm_cuda(d_norm, d_ss, d_x, n, 0, &err), 0);
      expect_device(d_norm, &want, 1, "l2norm (tree)");
      CK(cudaMemcpy(&ss, d_ss, sizeof ss, cudaMemcpyDeviceToHost));
      assert_memory_equal(&ss, &want_ss, sizeof ss);
      assert_int_equal(l2norm_cuda(d_norm, NULL, d_x, n, 0, &err), 0);
      expect_device(d_norm, &want, 1, "l2norm without the sum (tree)");
    }
    cudaFree(d_x), cudaFree(d_norm), cudaFree(d_ss);
    free(x);
  }
}

/* ---- sgd_momentum: elementwise, against the shared arithmetic's loop ---- */

static void test_sgd_momentum(void **state) {
  (void)state;
  NEED_GPU();
  const size_t n = (1u << 20) + 5;
  kc_rng rng = {211};
  pg_error err;
  float *w = kc_filled(&rng, n, 1.0, 0), *buf = kc_filled(&rng, n, 0.1, 0),
        *g = kc_filled(&rng, n, 0.5, 0);
  float *want_w = copy_new(w, n), *want_buf = copy_new(buf, n);
  const float lr = 0.002f, mu = 0.9f;
  for (size_t i = 0; i < n; i++) sgd_momentum_elem(&want_w[i], &want_buf[i], g[i], lr, mu);
  float *d_g = to_device(g, n);
  TWICE {
    float *d_w = to_device(w, n), *d_buf = to_device(buf, n);
    assert_int_equal(sgd_momentum_cuda(d_w, d_buf, d_g, n, lr, mu, 0, &err), 0);
    expect_device(d_w, want_w, n, "sgd_momentum w");
    expect_device(d_buf, want_buf, n, "sgd_momentum buf");
    cudaFree(d_w), cudaFree(d_buf);
  }
  cudaFree(d_g);
  free(w), free(buf), free(g), free(want_w), free(want_buf);
}

/* ---- embedding: the gather, and the scatter-add in ascending position ---- */

static void test_embedding(void **state) {
  (void)state;
  NEED_GPU();
  const int n = 1000, vocab = 300, dims[] = {100, 300};
  kc_rng rng = {206};
  pg_error err;
  uint16_t *ids = malloc((size_t)n * sizeof *ids);
  for (int r = 0; r < n; r++) /* skewed: low ids repeat often, ids >= 280 unused */
    ids[r] = (uint16_t)((int)((kc_uniform(&rng) + 1.0) * (kc_uniform(&rng) + 1.0) * 70.0) % vocab);
  uint16_t *d_ids = dev_bytes(ids, (size_t)n * sizeof *ids);
  const int flagset[] = {0, KERNEL_ACCUMULATE, KERNEL_BF16 | KERNEL_ACCUMULATE, KERNEL_BF16};
  for (int k = 0; k < 2; k++) {
    int d = dims[k];
    size_t nt = (size_t)vocab * d, ny = (size_t)n * d;
    float *table = kc_filled(&rng, nt, 1.0, 0), *dy = kc_filled(&rng, ny, 1.0, 0);
    float *acc = kc_filled(&rng, nt, 0.5, 0), *want = malloc(ny * sizeof *want);
    float *d_table = to_device(table, nt), *d_dy = to_device(dy, ny), *d_y = to_device(dy, ny);
    embedding_forward(want, table, ids, n, d);
    TWICE {
      assert_int_equal(embedding_forward_cuda(d_y, d_table, d_ids, n, d, 0, &err), 0);
      expect_device(d_y, want, ny, "embedding forward");
    }
    for (int f = 0; f < 4; f++) {
      memcpy(want, acc, nt * sizeof *want);
      embedding_backward(want, dy, ids, n, vocab, d, flagset[f]);
      TWICE {
        to_device_again(d_table, acc, nt);
        assert_int_equal(
            embedding_backward_cuda(d_table, d_dy, d_ids, n, vocab, d, flagset[f], 0, &err), 0);
        expect_device(d_table, want, nt, "embedding backward");
      }
    }
    cudaFree(d_table), cudaFree(d_dy), cudaFree(d_y);
    free(table), free(dy), free(acc), free(want);
  }
  cudaFree(d_ids);
  free(ids);
}

/* ---- rope: tables and rotations elementwise ---- */

static void test_rope_table(void **state) {
  (void)state;
  NEED_GPU();
  const int T = 1024, dims[] = {16, 64};
  pg_error err;
  for (int k = 0; k < 2; k++) {
    int hd = dims[k];
    size_t n = (size_t)T * (hd / 2);
    float *c = malloc(n * sizeof *c), *s = malloc(n * sizeof *s);
    float *d_c = to_device(c, n), *d_s = to_device(s, n);
    for (int f = 0; f < 2; f++) {
      rope_table(c, s, T, hd, 10000.0f, FWD_FLAGS[f]);
      TWICE {
        assert_int_equal(rope_table_cuda(d_c, d_s, T, hd, 10000.0f, FWD_FLAGS[f], 0, &err), 0);
        expect_device(d_c, c, n, "rope table cos");
        expect_device(d_s, s, n, "rope table sin");
      }
    }
    cudaFree(d_c), cudaFree(d_s);
    free(c), free(s);
  }
}

/* One shape of test_rope. */
static void rope_case(int T, int rows, int heads, int hd) {
  const int half = hd / 2;
  const size_t n = (size_t)rows * heads * hd, nt = (size_t)T * half;
  kc_rng rng = {207};
  pg_error err;
  float *x0 = kc_filled(&rng, n, 1.0, 0), *g0 = kc_filled(&rng, n, 1.0, 0),
        *acc = kc_filled(&rng, n, 0.5, 0);
  float *want = malloc(n * sizeof *want), *c = malloc(nt * sizeof *c), *s = malloc(nt * sizeof *s);
  float *d_out = to_device(acc, n), *d_x = to_device(x0, n), *d_g = to_device(g0, n);
  float *d_c = to_device(acc, nt), *d_s = to_device(acc, nt);
  for (int f = 0; f < N_BWD; f++) {
    int flags = BWD_FLAGS[f];
    rope_table(c, s, T, hd, 10000.0f, flags & KERNEL_BF16);
    to_device_again(d_c, c, nt);
    to_device_again(d_s, s, nt);
    float *x = mode_copy(x0, n, flags), *g = mode_copy(g0, n, flags);
    to_device_again(d_x, x, n);
    to_device_again(d_g, g, n);
    if (!(flags & KERNEL_ACCUMULATE)) {
      rope_forward(want, x, c, s, rows, T, heads, hd, flags);
      TWICE {
        assert_int_equal(
            rope_forward_cuda(d_out, d_x, d_c, d_s, rows, T, heads, hd, flags, 0, &err), 0);
        expect_device(d_out, want, n, "rope forward");
      }
    }
    memcpy(want, acc, n * sizeof *want);
    rope_backward(want, g, c, s, rows, T, heads, hd, flags);
    TWICE {
      to_device_again(d_out, acc, n);
      assert_int_equal(rope_backward_cuda(d_out, d_g, d_c, d_s, rows, T, heads, hd, flags, 0, &err),
                       0);
      expect_device(d_out, want, n, "rope backward");
    }
    /* dx = dy in place, as the trainer calls it. */
    if (!(flags & KERNEL_ACCUMULATE)) {
      memcpy(want, g, n * sizeof *want);
      rope_backward(want, want, c, s, rows, T, heads, hd, flags);
      TWICE {
        to_device_again(d_out, g, n);
        assert_int_equal(
            rope_backward_cuda(d_out, d_out, d_c, d_s, rows, T, heads, hd, flags, 0, &err), 0);
        expect_device(d_out, want, n, "rope backward in place");
      }
    }
    free(x), free(g);
  }
  cudaFree(d_out), cudaFree(d_x), cudaFree(d_g), cudaFree(d_c), cudaFree(d_s);
  free(x0), free(g0), free(acc), free(want), free(c), free(s);
}

/* The baseline's kind of shape, and one whose pairs, heads and positions
 * (5, 7, 11) no power of two is a multiple of: a grid's stride (a
 * multiple of 256) then wraps each of the kernel's three index walks
 * (kernels/index_walk.h) and carries from one into the next. */
static void test_rope(void **state) {
  (void)state;
  NEED_GPU();
  rope_case(64, 300, 4, 16);
  rope_case(11, 66, 7, 10);
}

/* ---- softcap cross-entropy: forward by the trees, backward elementwise ---- */

static void test_softcap_ce(void **state) {
  (void)state;
  NEED_GPU();
  const int shapes[][2] = {{300, 1000}, {37, 1024}, {5, 7}};
  const float cap = 30.0f;
  kc_rng rng = {208};
  pg_error err;
  for (int k = 0; k < 3; k++) {
    int N = shapes[k][0], V = shapes[k][1];
    size_t n = (size_t)N * V;
    float *z0 = kc_filled(&rng, n, 60.0, 0), *acc = kc_filled(&rng, n, 0.5, 0);
    uint16_t *y = malloc((size_t)N * sizeof *y);
    for (int r = 0; r < N; r++) y[r] = (uint16_t)((r * 7919) % V);
    float *th = malloc(n * sizeof *th), *lse = malloc(N * sizeof *lse),
          *nll = malloc(N * sizeof *nll);
    float *want = malloc(n * sizeof *want);
    float *d_z = to_device(z0, n), *d_th = to_device(acc, n), *d_dz = to_device(acc, n);
    float *d_lse = to_device(acc, N), *d_nll = to_device(acc, N), *d_loss = to_device(acc, 1);
    uint16_t *d_y = dev_bytes(y, (size_t)N * sizeof *y);
    uint16_t *d16 = packed_nans(n);
    for (int f = 0; f < 3; f++) {
      int flags = BWD_FLAGS[f];
      uint16_t *p16 = packed_if(d16, flags);
      float *z = mode_copy(z0, n, flags);
      to_device_again(d_z, z, n);
      float loss = softcap_cross_entropy_forward_tree_ref(th, lse, nll, z, y, N, V, cap, flags);
      TWICE {
        assert_int_equal(softcap_cross_entropy_forward_cuda(d_th, NULL, d_lse, d_nll, d_loss, d_z,
                                                            NULL, d_y, N, V, cap, flags, 0, &err),
                         0);
        expect_device(d_th, th, n, "softcap_ce forward th");
        expect_device(d_lse, lse, N, "softcap_ce forward lse (tree)");
        expect_device(d_nll, nll, N, "softcap_ce forward nll (tree)");
        expect_device(d_loss, &loss, 1, "softcap_ce forward mean loss (tree)");
      }
      /* The backward from the forward's th and lse (the same bits on both
       * sides, as just checked). */
      memcpy(want, acc, n * sizeof *want);
      softcap_cross_entropy_backward(want, th, lse, y, N, V, cap, 0.125f, flags);
      TWICE {
        to_device_again(d_dz, acc, n);
        assert_int_equal(softcap_cross_entropy_backward_cuda(d_dz, p16, d_th, NULL, d_lse, d_y, N,
                                                             V, cap, 0.125f, flags, 0, &err),
                         0);
        expect_device(d_dz, want, n, "softcap_ce backward dz");
        if (p16) expect_packed(p16, d_dz, n, "softcap_ce backward dz16");
      }
      if (flags & KERNEL_BF16) {
        /* Packed all the way (the trainer's mixed precision): z as the
         * head's GEMM leaves it, th packed alone, dz packed alone where
         * nothing accumulates; the bits of the float runs above, which
         * d_th and d_dz still hold. */
        uint16_t *z16 = packed_device(z, n), *th16 = packed_nans(n);
        TWICE {
          assert_int_equal(
              softcap_cross_entropy_forward_cuda(NULL, th16, d_lse, d_nll, d_loss, NULL, z16, d_y,
                                                 N, V, cap, flags, 0, &err),
              0);
          expect_packed(th16, d_th, n, "softcap_ce forward th16 from z16");
          expect_device(d_lse, lse, N, "softcap_ce forward lse from z16 (tree)");
          expect_device(d_nll, nll, N, "softcap_ce forward nll from z16 (tree)");
          expect_device(d_loss, &loss, 1, "softcap_ce forward mean loss from z16 (tree)");
          const int acc_ = (flags & KERNEL_ACCUMULATE) != 0;
          if (acc_) to_device_again(d_dz, acc, n);
          CK(cudaMemset(p16, 0xff, n * sizeof *p16));
          assert_int_equal(
              softcap_cross_entropy_backward_cuda(acc_ ? d_dz : NULL, p16, NULL, th16, d_lse, d_y,
                                                  N, V, cap, 0.125f, flags, 0, &err),
              0);
          if (acc_) expect_device(d_dz, want, n, "softcap_ce backward dz from th16");
          expect_packed(p16, d_dz, n, "softcap_ce backward dz16 from th16");
        }
        cudaFree(z16), cudaFree(th16);
      }
      free(z);
    }
    cudaFree(d_z), cudaFree(d_th), cudaFree(d_dz), cudaFree(d_lse), cudaFree(d_nll);
    cudaFree(d_loss), cudaFree(d_y), cudaFree(d16);
    free(z0), free(acc), free(y), free(th), free(lse), free(nll), free(want);
  }
}

/* ---- det_math: the device's bits over a dense sweep ---- */

/* Every 4093rd float32 bit pattern and a few chosen values: the CPU's
 * result bits, or NaN where the CPU gives NaN (which NaN is the
 * hardware's). det_expf_fast_hd is held to det_expf's bits; the last
 * chosen values are inputs where it falls back (tests/
 * test_det_expf_fast.c proves the two equal on every float, on the CPU).
 * det_expf32_hd, float32 arithmetic alone, is held to the CPU's bits of
 * the same function (not det_expf's, which it is within a unit of),
 * chosen[21..25] at its range's edges. */
static void test_det_math_sweep(void **state) {
  (void)state;
  NEED_GPU();
  const float chosen[] = {0.0f, -0.0f, INFINITY, -INFINITY, 0x1p-149f, -0x1p-149f, 88.72f, -103.9f,
                          20.0f, 0x1p-4f, 0x1p-30f, 1.0f, 0.5f, 0x1p20f, -0x1p20f, 3.1415927f,
                          0x1.ffff8p-25f, 0x1.0d5f92p-1f, 0x1.036492p+1f, -0x1.03e2ap-1f,
                          -0x1.09314p+1f,
                          /* det_expf32's range tests: -104, the overflow threshold and the
                           * float below it, 89, the smallest subnormal result */
                          -104.0f, 88.72283935546875f, 88.72283172607421875f, 89.0f, -103.2789f};
  size_t nc = sizeof chosen / sizeof chosen[0], n = nc;
  for (uint64_t u = 0; u < 0x100000000ull; u += 4093) n++;
  float *x = malloc(n * sizeof *x), *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  float *ga = malloc(n * sizeof *ga), *gb = malloc(n * sizeof *gb);
  memcpy(x, chosen, sizeof chosen);
  size_t i = nc;
  for (uint64_t u = 0; u < 0x100000000ull; u += 4093) x[i++] = hd_bits_float((uint32_t)u);
  float *d_x = to_device(x, n), *d_a = to_device(x, n), *d_b = to_device(x, n);
  pg_error err;
  const char *names[] = {"det_expf",    "det_logf",      "det_tanhf",
                         "det_sincosf", "det_expf_fast", "det_expf32"};
  for (int fn = DET_FN_EXPF; fn <= DET_FN_EXPF32; fn++) {
    for (size_t j = 0; j < n; j++) {
      if (fn == DET_FN_EXPF || fn == DET_FN_EXPF_FAST) a[j] = det_expf(x[j]);
      if (fn == DET_FN_EXPF32) a[j] = det_expf32_hd(x[j]);
      if (fn == DET_FN_LOGF) a[j] = det_logf(x[j]);
      if (fn == DET_FN_TANHF) a[j] = det_tanhf(x[j]);
      if (fn == DET_FN_SINCOSF) det_sincosf(x[j], &a[j], &b[j]);
    }
    TWICE {
      assert_int_equal(det_math_eval_cuda(d_a, d_b, d_x, n, fn, 0, &err), 0);
      CK(cudaDeviceSynchronize());
      from_device(ga, d_a, n);
      from_device(gb, d_b, n);
      for (size_t j = 0; j < n; j++) {
        int same = isnan(a[j]) ? isnan(ga[j]) : hd_float_bits(a[j]) == hd_float_bits(ga[j]);
        if (fn == DET_FN_SINCOSF)
          same = same && (isnan(b[j]) ? isnan(gb[j]) : hd_float_bits(b[j]) == hd_float_bits(gb[j]));
        if (!same) {
          fprintf(stderr, "%s(%a): gpu %a %a, cpu %a %a\n", names[fn], (double)x[j], (double)ga[j],
                  (double)gb[j], (double)a[j], (double)b[j]);
          fail();
        }
      }
    }
  }
  cudaFree(d_x), cudaFree(d_a), cudaFree(d_b);
  free(x), free(a), free(b), free(ga), free(gb);
}

/* Shapes the launchers refuse before touching the device: errors as
 * values naming the op. No GPU needed. */
static void test_bad_shapes(void **state) {
  (void)state;
  pg_error err;
  assert_int_equal(scale_add_forward_cuda(NULL, NULL, NULL, NULL, NULL, 4, 0, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "scale_add"));
  assert_int_equal(
      residual_mix_backward_cuda(NULL, NULL, NULL, NULL, NULL, NULL, NULL, -1, 8, 0, NULL, 0, &err),
      -1);
  assert_non_null(strstr(err.msg, "residual_mix"));
  assert_int_equal(q_gain_forward_cuda(NULL, NULL, NULL, 4, 0, 8, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "q_gain"));
  assert_int_equal(col_dot_cuda(NULL, NULL, NULL, NULL, -2, 8, 0, NULL, 0, &err), -1);
  assert_non_null(strstr(err.msg, "col_dot"));
  assert_int_equal(embedding_backward_cuda(NULL, NULL, NULL, 4, 70000, 8, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "embedding"));
  assert_int_equal(rope_forward_cuda(NULL, NULL, NULL, NULL, 4, 8, 2, 7, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "rope"));
  assert_int_equal(softcap_cross_entropy_forward_cuda(NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                                      NULL, 0, 8, 30.0f, 0, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "softcap_cross_entropy"));
  assert_int_equal(det_math_eval_cuda(NULL, NULL, NULL, 4, 9, 0, &err), -1);
  assert_non_null(strstr(err.msg, "det_math"));
  /* Packed copies of results that are not all bf16 (kernels/flags.h):
   * fp32; a float32 sum; bf16 rounding added into a float32 .grad. */
  static uint16_t b16[8];
  static float f8[8];
  assert_int_equal(relu_square_forward_cuda(NULL, b16, f8, NULL, 8, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "relu_square: a packed copy needs bf16 results (flags 0)"));
  assert_int_equal(relu_square_forward_cuda(NULL, NULL, f8, NULL, 8, KERNEL_BF16, 0, &err), -1);
  assert_non_null(strstr(err.msg, "relu_square: no output"));
  assert_int_equal(relu_square_backward_cuda(NULL, b16, f8, NULL, f8, NULL, 8,
                                             KERNEL_ROUND_OUT | KERNEL_ACCUMULATE, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "relu_square: a packed copy"));
  /* An input as floats and packed at once, or neither; accumulating
   * into no floats. */
  assert_int_equal(relu_square_forward_cuda(f8, NULL, f8, b16, 8, 0, 0, &err), -1);
  assert_non_null(
      strstr(err.msg, "relu_square: h must come as floats or packed, exactly one (got both)"));
  assert_int_equal(relu_square_backward_cuda(f8, NULL, NULL, NULL, f8, NULL, 8, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "dy must come as floats or packed, exactly one (got neither)"));
  assert_int_equal(relu_square_backward_cuda(NULL, b16, f8, NULL, f8, NULL, 8,
                                             KERNEL_BF16 | KERNEL_ACCUMULATE, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "relu_square: accumulating needs dh"));
  assert_int_equal(scale_add_forward_cuda(f8, f8, f8, f8, b16, 2, 4, 0, 0, &err), -1);
  assert_non_null(
      strstr(err.msg, "scale_add: y must come as floats or packed, exactly one (got both)"));
  assert_int_equal(
      scale_add_backward_cuda(f8, NULL, f8, f8, f8, NULL, NULL, 2, 4, 0, NULL, 0, &err), -1);
  assert_non_null(
      strstr(err.msg, "scale_add: y must come as floats or packed, exactly one (got neither)"));
  assert_int_equal(
      scale_add_backward_cuda(NULL, b16, NULL, NULL, NULL, f8, NULL, 2, 4,
                              KERNEL_BF16 | KERNEL_ACCUMULATE | KERNEL_OUT_FP32, NULL, 0, &err),
      -1);
  assert_non_null(strstr(err.msg, "scale_add: a packed copy"));
  assert_int_equal(scale_add_backward_cuda(NULL, b16, NULL, NULL, NULL, f8, NULL, 2, 4,
                                           KERNEL_BF16 | KERNEL_ACCUMULATE, NULL, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "scale_add: an accumulated dy needs its floats"));
  assert_int_equal(
      scale_add_backward_cuda(NULL, NULL, NULL, NULL, NULL, f8, NULL, 2, 4, 0, NULL, 0, &err), -1);
  assert_non_null(strstr(err.msg, "scale_add: no output"));
  assert_int_equal(softcap_cross_entropy_backward_cuda(NULL, b16, NULL, NULL, NULL, NULL, 2, 4,
                                                       30.0f, 1.0f, KERNEL_ACCUMULATE, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "softcap_cross_entropy: a packed copy"));
  assert_int_equal(
      softcap_cross_entropy_backward_cuda(NULL, b16, f8, NULL, NULL, NULL, 2, 4, 30.0f, 1.0f,
                                          KERNEL_BF16 | KERNEL_ACCUMULATE, 0, &err),
      -1);
  assert_non_null(strstr(err.msg, "softcap_cross_entropy: an accumulated dz needs its floats"));
  assert_int_equal(softcap_cross_entropy_backward_cuda(f8, NULL, f8, b16, NULL, NULL, 2, 4, 30.0f,
                                                       1.0f, 0, 0, &err),
                   -1);
  assert_non_null(strstr(
      err.msg, "softcap_cross_entropy: th must come as floats or packed, exactly one (got both)"));
  assert_int_equal(softcap_cross_entropy_forward_cuda(NULL, b16, f8, f8, f8, f8, NULL, NULL, 2, 4,
                                                      30.0f, 0, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "softcap_cross_entropy: a packed copy needs bf16 results"));
  assert_int_equal(softcap_cross_entropy_forward_cuda(f8, NULL, f8, f8, f8, NULL, NULL, NULL, 2, 4,
                                                      30.0f, KERNEL_BF16, 0, &err),
                   -1);
  assert_non_null(
      strstr(err.msg,
             "softcap_cross_entropy: z must come as floats or packed, exactly one (got neither)"));
}

#else

static void no_cuda(void **state) {
  (void)state;
  fprintf(stderr, "skipped: needs a GPU: this pgolf was built without CUDA (no nvcc)\n");
  skip();
}
#define test_relu_square no_cuda
#define test_relu_square_packed_inputs no_cuda
#define test_scale_add no_cuda
#define test_residual_mix no_cuda
#define test_q_gain no_cuda
#define test_l2norm no_cuda
#define test_sgd_momentum no_cuda
#define test_embedding no_cuda
#define test_rope_table no_cuda
#define test_rope no_cuda
#define test_softcap_ce no_cuda
#define test_det_math_sweep no_cuda
#define test_bad_shapes no_cuda

#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_shapes),
      cmocka_unit_test(test_relu_square),
      cmocka_unit_test(test_scale_add),
      cmocka_unit_test(test_residual_mix),
      cmocka_unit_test(test_q_gain),
      cmocka_unit_test(test_l2norm),
      cmocka_unit_test(test_embedding),
      cmocka_unit_test(test_rope_table),
      cmocka_unit_test(test_rope),
      cmocka_unit_test(test_softcap_ce),
      cmocka_unit_test(test_det_math_sweep),
      cmocka_unit_test(test_sgd_momentum),
      cmocka_unit_test(test_relu_square_packed_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
