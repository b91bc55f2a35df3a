/* det_expf_fast_hd (kernels/det_expf_fast.h) against det_expf_hd on every
 * one of the 2^32 float bit patterns: the contract is equality, so the
 * proof is exhaustive (each float is one input; nothing is sampled). Also
 * that the fast path is taken (a fallback on most inputs would prove
 * nothing about the fast arithmetic) and that the fallback is exercised,
 * that det_expf_fast_try_hd, the fast half alone, is exact wherever it
 * does not ask for the fallback, and falls back outside [-87, 88],
 * and a negative check: the fast path's double made 2^-40 wrong differs
 * from det_expf_hd on some inputs, so the comparison is not blind. */
#include "tests/test_util.h"

#include <stdint.h>

#include "kernels/det_expf_fast.h"

/* The negative check: the fast path's double off by 2^-40 (relative),
 * rounded with no midpoint test. An error of that size must show. */
static float perturbed(float x) {
  if (!(x >= DET_EXPF_FAST_LO && x <= DET_EXPF_FAST_HI)) return det_expf_hd(x);
  return (float)(det_exp_fast_core((double)x) * (1.0 + 0x1p-40));
}

static void test_every_float(void **state) {
  (void)state;
  unsigned long long differ = 0, fallback = 0, fast = 0, perturbed_differ = 0, out_fast = 0;
  uint32_t first_bad = 0;
  int have_bad = 0;
#pragma omp parallel for schedule(static, 1 << 16) reduction(+ : differ, fallback, fast, perturbed_differ, out_fast)
  for (long long i = 0; i < (1LL << 32); i++) {
    const uint32_t u = (uint32_t)i;
    const float x = hd_bits_float(u);
    const float want = det_expf_hd(x), got = det_expf_fast_hd(x);
    /* The fast half alone (what det_expf_fast_group runs first): where it
     * does not ask for the fallback, its value is det_expf's. */
    unsigned slow;
    const float tried = det_expf_fast_try_hd(x, &slow);
    if (hd_float_bits(got) != hd_float_bits(want) ||
        (!slow && hd_float_bits(tried) != hd_float_bits(want))) {
      differ++;
#pragma omp critical
      if (!have_bad) have_bad = 1, first_bad = u;
    }
    if (x >= DET_EXPF_FAST_LO && x <= DET_EXPF_FAST_HI) {
      if (slow)
        fallback++;
      else fast++;
      if (hd_float_bits(perturbed(x)) != hd_float_bits(want)) perturbed_differ++;
    } else if (!slow) {
      out_fast++; /* out of range (NaN included): the fast half's e^0 must not stand */
    }
  }
  fprintf(stderr, "det_expf_fast: %llu fast, %llu fall back, %llu differ; off by 2^-40: %llu differ\n",
          fast, fallback, differ, perturbed_differ);
  if (differ)
    fail_msg("det_expf_fast_hd(%a) = %a, det_expf_hd = %a (%llu inputs differ)",
             (double)hd_bits_float(first_bad), (double)det_expf_fast_hd(hd_bits_float(first_bad)),
             (double)det_expf_hd(hd_bits_float(first_bad)), differ);
  /* [-87, 88] holds about 2.2e9 bit patterns; the fast path takes nearly
   * all of them, and the fallback some. */
  assert_true(fast > 2000000000ull);
  assert_int_equal(out_fast, 0);
  assert_true(fallback > 0 && fallback < fast / 10000);
  assert_true(perturbed_differ > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_float)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
