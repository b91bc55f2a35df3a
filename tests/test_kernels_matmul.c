/* matmul: forward against a float64 reference, backward against float64
 * central differences, the blocked kernels bit-identical to the plain
 * loops for 1, 2 and 3 threads, and the bf16/accumulate flags. */
#include <omp.h>

#include "kernels/matmul.h"
#include "tests/kernel_check.h"
#include "tests/test_util.h"

typedef struct {
  int n, in, out;
  const double *x, *w, *g; /* g: upstream gradient of y */
  int wrt_w;               /* perturb w (1) or x (0) */
} mm_ctx;

static void ref_matmul(double *y, const double *x, const double *w, int n, int in, int out) {
  for (int r = 0; r < n; r++)
    for (int o = 0; o < out; o++) {
      double s = 0.0;
      for (int i = 0; i < in; i++) s += x[r * in + i] * w[o * in + i];
      y[r * out + o] = s;
    }
}

/* L = sum(g * (x W^T)), as a function of x or W. */
static double mm_loss(const double *v, void *vctx) {
  mm_ctx *c = vctx;
  double *y = malloc((size_t)c->n * c->out * sizeof *y);
  ref_matmul(y, c->wrt_w ? c->x : v, c->wrt_w ? v : c->w, c->n, c->in, c->out);
  double L = 0.0;
  for (int i = 0; i < c->n * c->out; i++) L += c->g[i] * y[i];
  free(y);
  return L;
}

static void test_forward_and_gradients(void **state) {
  (void)state;
  const int n = 7, in = 13, out = 11;
  kc_rng rng = {42};
  float x[7 * 13], w[11 * 13], g[7 * 11], y[7 * 11], dx[7 * 13], dw[11 * 13];
  kc_fill(&rng, x, sizeof x / 4, 1.0);
  kc_fill(&rng, w, sizeof w / 4, 0.5);
  kc_fill(&rng, g, sizeof g / 4, 1.0);
  double *xd = kc_to_double(x, n * in), *wd = kc_to_double(w, out * in),
         *gd = kc_to_double(g, n * out);
  double yref[7 * 11];
  ref_matmul(yref, xd, wd, n, in, out);
  matmul_forward(y, x, w, n, in, out, 0);
  /* float32 sums of 13 products of size <= 1: |error| <= 13 * 2^-24 * sum|terms|. */
  KC_ASSERT_CLOSE(y, yref, (size_t)n * out, 1e-6, 1e-6, "forward");

  matmul_backward_input(dx, g, w, n, in, out, 0);
  matmul_backward_weight(dw, g, x, n, in, out, 0);
  mm_ctx c = {n, in, out, xd, wd, gd, 0};
  double fdx[7 * 13], fdw[11 * 13];
  kc_fd_grad(mm_loss, &c, xd, (size_t)n * in, 1e-3, fdx);
  c.wrt_w = 1;
  kc_fd_grad(mm_loss, &c, wd, (size_t)out * in, 1e-3, fdw);
  /* The loss is bilinear, so central differences are exact up to float64
   * rounding; the tolerance is the float32 sums' (<= 11 or 7 terms). */
  KC_ASSERT_CLOSE(dx, fdx, (size_t)n * in, 1e-5, 1e-5, "dx");
  KC_ASSERT_CLOSE(dw, fdw, (size_t)out * in, 1e-5, 1e-5, "dw");

  /* The check catches a wrong gradient: transpose one weight element. */
  dw[3] += 1e-3f;
  assert_true(kc_worst(dw, fdw, (size_t)out * in, 1e-5, 1e-5, NULL) > 1.0);
  free(xd);
  free(wd);
  free(gd);
}

/* Sizes that exercise every edge of the blocking (tails in all three
 * dimensions, and sizes bigger than a block). */
static const int shapes[][3] = {{1, 1, 1},     {5, 3, 7},     {37, 19, 45},  {64, 64, 64},
                                {130, 70, 33}, {29, 257, 18}, {300, 96, 160}};

static void test_blocked_equals_simple_bitwise(void **state) {
  (void)state;
  for (int kernel = 0; kernel <= 2; kernel++) {
    matmul_select_kernel(kernel);
    kc_rng rng = {7};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      int n = shapes[s][0], in = shapes[s][1], out = shapes[s][2];
      float *x = malloc((size_t)n * in * 4), *w = malloc((size_t)out * in * 4);
      float *g = malloc((size_t)n * out * 4);
      kc_fill(&rng, x, (size_t)n * in, 1.0);
      kc_fill(&rng, w, (size_t)out * in, 1.0);
      kc_fill(&rng, g, (size_t)n * out, 1.0);
      int flag_sets[] = {0, KERNEL_BF16, KERNEL_ACCUMULATE, KERNEL_ACCUMULATE | KERNEL_BF16,
                         KERNEL_ACCUMULATE | KERNEL_BF16 | KERNEL_OUT_FP32,
                         KERNEL_ACCUMULATE | KERNEL_OUT_FP32};
      for (size_t f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++) {
        int fl = flag_sets[f];
        size_t ny = (size_t)n * out, nx = (size_t)n * in, nw = (size_t)out * in;
        float *a = malloc(ny * 4), *b = malloc(ny * 4), *ax = malloc(nx * 4), *bx = malloc(nx * 4);
        float *aw = malloc(nw * 4), *bw = malloc(nw * 4);
        kc_fill(&rng, a, ny, 1.0);
        kc_fill(&rng, ax, nx, 1.0);
        kc_fill(&rng, aw, nw, 1.0);
        omp_set_num_threads(1);
        matmul_forward_simple(a, x, w, n, in, out, fl);
        matmul_backward_input_simple(ax, g, w, n, in, out, fl);
        matmul_backward_weight_simple(aw, g, x, n, in, out, fl);
        for (int th = 1; th <= 3; th++) {
          omp_set_num_threads(th);
          memcpy(b, a, ny * 4);
          memcpy(bx, ax, nx * 4);
          memcpy(bw, aw, nw * 4);
          if (fl & KERNEL_ACCUMULATE) { /* redo from the same start as the simple run */
            float *sa = malloc(ny * 4), *sx = malloc(nx * 4), *sw = malloc(nw * 4);
            for (size_t i = 0; i < ny; i++) sa[i] = b[i] = (float)i * 0.25f;
            for (size_t i = 0; i < nx; i++) sx[i] = bx[i] = (float)i * -0.125f;
            for (size_t i = 0; i < nw; i++) sw[i] = bw[i] = (float)i * 0.5f;
            matmul_forward_simple(sa, x, w, n, in, out, fl);
            matmul_backward_input_simple(sx, g, w, n, in, out, fl);
            matmul_backward_weight_simple(sw, g, x, n, in, out, fl);
            matmul_forward(b, x, w, n, in, out, fl);
            matmul_backward_input(bx, g, w, n, in, out, fl);
            matmul_backward_weight(bw, g, x, n, in, out, fl);
            assert_memory_equal(sa, b, ny * 4);
            assert_memory_equal(sx, bx, nx * 4);
            assert_memory_equal(sw, bw, nw * 4);
            free(sa);
            free(sx);
            free(sw);
          } else {
            matmul_forward(b, x, w, n, in, out, fl);
            matmul_backward_input(bx, g, w, n, in, out, fl);
            matmul_backward_weight(bw, g, x, n, in, out, fl);
            assert_memory_equal(a, b, ny * 4);
            assert_memory_equal(ax, bx, nx * 4);
            assert_memory_equal(aw, bw, nw * 4);
          }
        }
        if ((fl & KERNEL_BF16) && !(fl & KERNEL_OUT_FP32))
          for (size_t i = 0; i < ny; i++) assert_true(bf16_is_exact(b[i]));
        free(a);
        free(b);
        free(ax);
        free(bx);
        free(aw);
        free(bw);
      }
      free(x);
      free(w);
      free(g);
    }
  }
  matmul_select_kernel(0);
  omp_set_num_threads(2);
}

static void test_bf16_rounds_the_float32_sum(void **state) {
  (void)state;
  /* bf16 output = bf16(float32 sum), not a sum of rounded terms. */
  float x[3] = {1.0f, 1.0f, 1.0f}, w[3] = {1.0f, 0x1p-9f, 0x1p-9f}, y;
  matmul_forward(&y, x, w, 1, 3, 1, KERNEL_BF16);
  assert_true(y == 1.0f); /* float32 sum 1 + 2^-8, a bf16 tie, goes to even */
  float y32;
  matmul_forward(&y32, x, w, 1, 3, 1, 0);
  assert_true(y32 == 1.0f + 0x1p-8f);
  assert_true(bf16_round(y32) == y);
  /* accumulate into a float32 gradient: the sum is not rounded */
  float acc = 0x1p-12f;
  matmul_forward(&acc, x, w, 1, 3, 1, KERNEL_BF16 | KERNEL_ACCUMULATE | KERNEL_OUT_FP32);
  assert_true(acc == bf16_round(y32) + 0x1p-12f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_forward_and_gradients),
      cmocka_unit_test(test_blocked_equals_simple_bitwise),
      cmocka_unit_test(test_bf16_rounds_the_float32_sum),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
