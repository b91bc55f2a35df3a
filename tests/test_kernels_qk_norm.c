/* qk_norm's CPU functions (kernels/qk_norm.h): the official
 * norm -> RoPE -> gain of q and k, checked against float64 (the forward
 * against the definition, the backward against central differences of
 * the composed function), and against the three kernels called in turn
 * as gpt.c called them, bit for bit, in index order and by the GPU's
 * tree (KERNEL_TREE, which must change some row's bits, or the tree's
 * path is not taken), with F4's cast and B4's rounding, in place. */
#include "tests/test_util.h"

#include <math.h>

#include "kernels/bf16.h"
#include "kernels/q_gain.h"
#include "kernels/qk_norm.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"
#include "tests/kernel_check.h"

enum { ROWS = 12, T = 5, H = 2, HD = 64, HALF = HD / 2, W = H * HD, N = ROWS * W };

static float cs[T * HALF], sn[T * HALF], gain[H];

/* The official forward in float64: y = gain * rope(x / rms(x)). */
static void ref_forward(double *y, const double *x, int with_gain) {
  for (int r = 0; r < ROWS; r++)
    for (int h = 0; h < H; h++) {
      const double *xr = x + r * W + h * HD;
      double ss = 0.0;
      for (int j = 0; j < HD; j++) ss += xr[j] * xr[j];
      const double s = 1.0 / sqrt(ss / HD + FLT_EPSILON), g = with_gain ? gain[h] : 1.0;
      for (int j = 0; j < HALF; j++) {
        double c = cs[(r % T) * HALF + j], si = sn[(r % T) * HALF + j];
        double x1 = xr[j] * s, x2 = xr[j + HALF] * s;
        y[r * W + h * HD + j] = g * (x1 * c + x2 * si);
        y[r * W + h * HD + j + HALF] = g * (-x1 * si + x2 * c);
      }
    }
}

static const double *g_up;
static int g_with_gain;
static double loss(const double *x, void *ctx) {
  (void)ctx;
  static double y[N];
  ref_forward(y, x, g_with_gain);
  double L = 0.0;
  for (int i = 0; i < N; i++) L += g_up[i] * y[i];
  return L;
}

static void setup_tables(void) {
  rope_table(cs, sn, T, HD, 10000.0f, 0);
  kc_rng rng = {61};
  kc_fill(&rng, gain, H, 2.0);
}

static void test_against_float64(void **state) {
  (void)state;
  setup_tables();
  kc_rng rng = {62};
  static float x[N], up[N], rope[N], fin[N], rstd[ROWS * H], dx[N], scratch[N];
  kc_fill(&rng, x, N, 2.0);
  kc_fill(&rng, up, N, 1.0);
  double *xd = kc_to_double(x, N), *ud = kc_to_double(up, N);
  static double want[N], fd[N];
  for (int q = 0; q < 2; q++) {
    qk_norm_forward(rope, fin, rstd, x, q ? gain : NULL, cs, sn, ROWS, T, H, HD, 0, scratch);
    ref_forward(want, xd, q);
    KC_ASSERT_CLOSE(fin, want, N, 1e-5, 1e-6, q ? "q forward" : "k forward");
    qk_norm_backward(dx, up, x, rstd, q ? gain : NULL, cs, sn, ROWS, T, H, HD, 0, scratch);
    g_up = ud, g_with_gain = q;
    kc_fd_grad(loss, NULL, xd, N, 1e-3, fd);
    KC_ASSERT_CLOSE(dx, fd, N, 1e-4, 1e-5, q ? "q backward" : "k backward");
  }
  free(xd), free(ud);
}

/* The three kernels in turn, as gpt.c called them before qk_norm. */
static void by_parts_forward(float *rope, float *fin, float *rstd, const float *x, int q, int flags,
                             int tree, float *tmp) {
  (tree ? rmsnorm_forward_tree_ref : rmsnorm_forward)(tmp, rstd, x, ROWS * H, HD, 0);
  if (q) {
    rope_forward(rope, tmp, cs, sn, ROWS, T, H, HD, 0);
    q_gain_forward(fin, rope, gain, ROWS, H, HD, 0);
  } else {
    rope_forward(fin, tmp, cs, sn, ROWS, T, H, HD, 0);
  }
  if (flags & KERNEL_ROUND_OUT) bf16_round_array(fin, N);
}

static void by_parts_backward(float *dx, const float *dy, const float *x, const float *rstd, int q,
                              int flags, int tree, float *tmp) {
  static float dg[H];
  memcpy(tmp, dy, N * sizeof *tmp);
  if (q) q_gain_backward(tmp, dg, tmp, x, gain, ROWS, H, HD, 0);
  rope_backward(tmp, tmp, cs, sn, ROWS, T, H, HD, 0);
  (tree ? rmsnorm_backward_tree_ref : rmsnorm_backward)(dx, tmp, x, rstd, ROWS * H, HD, flags);
}

static void test_equals_the_kernels_in_turn(void **state) {
  (void)state;
  setup_tables();
  kc_rng rng = {63};
  static float x[N], dy[N], r1[N], f1[N], s1[ROWS * H], r2[N], f2[N], s2[ROWS * H], tmp[N];
  static float d1[N], d2[N], plain[N];
  kc_fill(&rng, x, N, 2.0);
  kc_fill(&rng, dy, N, 1.0);
  bf16_round_array(x, N); /* the projections' output is bf16 under mixed precision */
  int tree_moved = 0;
  for (int q = 0; q < 2; q++)
    for (int tree = 0; tree < 2; tree++) {
      const int ft = tree ? KERNEL_TREE : 0;
      for (int f = 0; f < 2; f++) {
        const int flags = f ? KERNEL_ROUND_OUT : 0;
        qk_norm_forward(r1, f1, s1, x, q ? gain : NULL, cs, sn, ROWS, T, H, HD, flags | ft, tmp);
        by_parts_forward(r2, f2, s2, x, q, flags, tree, tmp);
        assert_memory_equal(f1, f2, sizeof f1);
        assert_memory_equal(s1, s2, sizeof s1);
        if (q) assert_memory_equal(r1, r2, sizeof r1);
      }
      const int bwd[] = {0, KERNEL_BF16, KERNEL_BF16 | KERNEL_ACCUMULATE};
      for (int f = 0; f < 3; f++) {
        memcpy(d1, x, sizeof d1), memcpy(d2, x, sizeof d2);
        qk_norm_backward(d1, dy, x, s1, q ? gain : NULL, cs, sn, ROWS, T, H, HD, bwd[f] | ft, tmp);
        by_parts_backward(d2, dy, x, s1, q, bwd[f], tree, tmp);
        assert_memory_equal(d1, d2, sizeof d1);
        if (bwd[f] & KERNEL_ACCUMULATE) continue;
        memcpy(d1, dy, sizeof d1); /* in place: dx = dy = scratch */
        qk_norm_backward(d1, d1, x, s1, q ? gain : NULL, cs, sn, ROWS, T, H, HD, bwd[f] | ft, d1);
        assert_memory_equal(d1, d2, sizeof d1);
        if (!tree && f == 0) memcpy(plain, d2, sizeof plain);
        if (tree && f == 0) tree_moved += memcmp(plain, d2, sizeof plain) != 0;
      }
    }
  assert_true(tree_moved > 0); /* KERNEL_TREE reached the norms' sums */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_against_float64),
      cmocka_unit_test(test_equals_the_kernels_in_turn),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
