/* rope: the table against float64 cos/sin of the official float32 angles,
 * forward against float64 with the official sign convention, backward
 * against float64 central differences, bf16 rounding points. */
#include "tests/test_util.h"

#include "kernels/bf16.h"
#include "kernels/rope.h"
#include "tests/kernel_check.h"

enum { B = 2, T = 6, H = 3, HD = 8, ROWS = B * T, W = H * HD, HALF = HD / 2 };

static float cs[T * HALF], sn[T * HALF];

static void ref_rope(double *y, const double *x) {
  for (int r = 0; r < ROWS; r++)
    for (int h = 0; h < H; h++)
      for (int j = 0; j < HALF; j++) {
        double c = cs[(r % T) * HALF + j], s = sn[(r % T) * HALF + j];
        double x1 = x[r * W + h * HD + j], x2 = x[r * W + h * HD + HALF + j];
        y[r * W + h * HD + j] = x1 * c + x2 * s;
        y[r * W + h * HD + HALF + j] = -x1 * s + x2 * c;
      }
}

static const double *g_up;
static double loss(const double *x, void *ctx) {
  (void)ctx;
  double y[ROWS * W], L = 0.0;
  ref_rope(y, x);
  for (int i = 0; i < ROWS * W; i++) L += g_up[i] * y[i];
  return L;
}

static void test_table(void **state) {
  (void)state;
  rope_table(cs, sn, T, HD, 10000.0f, 0);
  for (int t = 0; t < T; t++)
    for (int j = 0; j < HALF; j++) {
      /* inv_freq as the official buffer holds it: bf16 (.bfloat16()) */
      double inv = bf16_round((float)(1.0 / pow(10000.0, 2.0 * j / HD)));
      /* the official angle is float32(t * float32(inv_freq)): relative
       * error 2^-23 of an angle below T, so |error| <= T * 2^-23 */
      assert_true(fabs(cs[t * HALF + j] - cos(t * inv)) <= T * 0x1p-23 + 0x1p-24);
      assert_true(fabs(sn[t * HALF + j] - sin(t * inv)) <= T * 0x1p-23 + 0x1p-24);
    }
  assert_true(cs[0] == 1.0f && sn[0] == 0.0f);
  /* j = 0 has inv_freq 1: position 1 rotates by exactly 1 radian */
  assert_true(cs[HALF] == (float)cos(1.0) && sn[HALF] == (float)sin(1.0));
}

static void test_forward_backward(void **state) {
  (void)state;
  rope_table(cs, sn, T, HD, 10000.0f, 0);
  kc_rng rng = {5};
  float x[ROWS * W], g[ROWS * W], y[ROWS * W], dx[ROWS * W];
  kc_fill(&rng, x, ROWS * W, 1.0);
  kc_fill(&rng, g, ROWS * W, 1.0);
  double *xd = kc_to_double(x, ROWS * W), *gd = kc_to_double(g, ROWS * W), yr[ROWS * W];
  ref_rope(yr, xd);
  rope_forward(y, x, cs, sn, ROWS, T, H, HD, 0);
  KC_ASSERT_CLOSE(y, yr, ROWS * W, 1e-6, 1e-7, "forward");
  /* The sign convention: position 1, first pair of head 0. */
  double c = cs[HALF], s = sn[HALF];
  assert_true(fabs(y[1 * W + 0] - (x[W] * c + x[W + HALF] * s)) < 1e-6);
  assert_true(fabs(y[1 * W + HALF] - (x[W + HALF] * c - x[W] * s)) < 1e-6);
  rope_backward(dx, g, cs, sn, ROWS, T, H, HD, 0);
  double fd[ROWS * W];
  g_up = gd;
  kc_fd_grad(loss, NULL, xd, ROWS * W, 1e-3, fd);
  KC_ASSERT_CLOSE(dx, fd, ROWS * W, 1e-6, 1e-6, "dx");
  free(xd);
  free(gd);
}

static void test_bf16(void **state) {
  (void)state;
  float c[T * HALF], s[T * HALF];
  rope_table(c, s, T, HD, 10000.0f, 0);
  bf16_round_array(c, T * HALF);
  bf16_round_array(s, T * HALF);
  kc_rng rng = {6};
  float x[ROWS * W], y[ROWS * W];
  kc_fill(&rng, x, ROWS * W, 1.0);
  bf16_round_array(x, ROWS * W);
  rope_forward(y, x, c, s, ROWS, T, H, HD, KERNEL_BF16);
  int r = 7, j = 2;
  float x1 = x[r * W + j], x2 = x[r * W + HALF + j], cc = c[(r % T) * HALF + j],
        ss = s[(r % T) * HALF + j];
  assert_true(y[r * W + j] == bf16_round(bf16_round(x1 * cc) + bf16_round(x2 * ss)));
  assert_true(y[r * W + HALF + j] == bf16_round(bf16_round(x1 * -ss) + bf16_round(x2 * cc)));
  for (int i = 0; i < ROWS * W; i++) assert_true(bf16_is_exact(y[i]));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table),
      cmocka_unit_test(test_forward_backward),
      cmocka_unit_test(test_bf16),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
