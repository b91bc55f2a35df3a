/* softcap + cross-entropy: loss and per-token nll against float64, the
 * gradient against float64 central differences, bf16 rounding points. */
#include "tests/test_util.h"

#include "kernels/det_math.h"
#include "kernels/softcap_cross_entropy.h"
#include "tests/kernel_check.h"

enum { N = 5, V = 7 };
static const uint16_t Y[N] = {0, 6, 3, 3, 1};
static const double CAP = 30.0;

static double ref_loss(const double *z, void *ctx) {
  double *nll = ctx, sum = 0.0;
  for (int r = 0; r < N; r++) {
    double l[V], m = -INFINITY, s = 0.0;
    for (int i = 0; i < V; i++) {
      l[i] = CAP * tanh(z[r * V + i] / CAP);
      if (l[i] > m) m = l[i];
    }
    for (int i = 0; i < V; i++) s += exp(l[i] - m);
    double n = m + log(s) - l[Y[r]];
    if (nll) nll[r] = n;
    sum += n;
  }
  return sum / N;
}

static void test_forward_backward(void **state) {
  (void)state;
  kc_rng rng = {31};
  float z[N * V], th[N * V], lse[N], nll[N], dz[N * V];
  kc_fill(&rng, z, N * V, 60.0); /* well into the cap's curve */
  double *zd = kc_to_double(z, N * V), nref[N];
  double Lref = ref_loss(zd, nref);
  float L = softcap_cross_entropy_forward(th, lse, nll, z, Y, N, V, 30.0f, 0);
  assert_true(fabs(L - Lref) <= 1e-6 * fabs(Lref) + 1e-7);
  KC_ASSERT_CLOSE(nll, nref, N, 1e-5, 1e-6, "nll");
  double s = 0.0;
  for (int r = 0; r < N; r++) s += nll[r];
  assert_true((float)(s / N) == L);
  /* d(g * mean)/dz with g = 0.125, the official grad_scale for 8 micro-steps */
  softcap_cross_entropy_backward(dz, th, lse, Y, N, V, 30.0f, 0.125f, 0);
  double fd[N * V];
  kc_fd_grad(ref_loss, NULL, zd, N * V, 1e-4, fd);
  for (int i = 0; i < N * V; i++) fd[i] *= 0.125;
  KC_ASSERT_CLOSE(dz, fd, N * V, 1e-4, 1e-7, "dz");
  free(zd);
}

static void test_bf16(void **state) {
  (void)state;
  kc_rng rng = {32};
  float z[N * V], th[N * V], lse[N], dz[N * V], th32[N * V], lse32[N];
  kc_fill(&rng, z, N * V, 60.0);
  bf16_round_array(z, N * V);
  float Lb = softcap_cross_entropy_forward(th, lse, NULL, z, Y, N, V, 30.0f, KERNEL_BF16);
  float L = softcap_cross_entropy_forward(th32, lse32, NULL, z, Y, N, V, 30.0f, 0);
  for (int i = 0; i < N * V; i++) {
    assert_true(th[i] == bf16_round(det_tanhf(bf16_round(z[i] * (1.0f / 30.0f)))));
  }
  /* bf16 logits (|l| <= 30, spacing up to 2^-3) move the loss by < 0.1 */
  assert_true(fabs(Lb - L) < 0.1);
  softcap_cross_entropy_backward(dz, th, lse, Y, N, V, 30.0f, 1.0f, KERNEL_BF16);
  for (int i = 0; i < N * V; i++) assert_true(bf16_is_exact(dz[i]));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_forward_backward),
      cmocka_unit_test(test_bf16),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
