/* det_expf32_hd (kernels/det_expf32.h) at the ends of its range, exactly
 * (1 at zero, +0 below -104, +inf above the overflow threshold, the
 * smallest subnormal, NaN's own bits), and a negative check of the
 * bound: the polynomial without its degree-7 term is more than a unit
 * from det_expf on a sample of floats. The bound itself, within one unit
 * of det_expf on every float, is checked by the exhaustive sweep of
 * tests/test_det_expf_fast.c, which computes det_expf of every float
 * anyway. */
#include "tests/test_util.h"

#include <math.h>
#include <stdint.h>

#include "kernels/det_expf32.h"
#include "kernels/det_expf_fast.h"
#include "kernels/det_math.h"

/* Units in the last place between two non-negative floats (+0 to +inf):
 * their bit patterns are ordered as their values. */
static uint32_t ulps(float a, float b) {
  const uint32_t x = hd_float_bits(a), y = hd_float_bits(b);
  return x > y ? x - y : y - x;
}

/* The ends of the range, exactly. */
static void test_specials(void **state) {
  (void)state;
  assert_true(det_expf32_hd(0.0f) == 1.0f && det_expf32_hd(-0.0f) == 1.0f);
  assert_int_equal(hd_float_bits(det_expf32_hd(-INFINITY)), 0); /* +0, not -0 */
  assert_int_equal(hd_float_bits(det_expf32_hd(-104.0f)), 0);
  assert_int_equal(hd_float_bits(det_expf32_hd(-1e30f)), 0);
  assert_true(isinf(det_expf32_hd(INFINITY)) && det_expf32_hd(INFINITY) > 0);
  assert_true(isinf(det_expf32_hd(89.0f)) && isinf(det_expf32_hd(1e30f)));
  /* The largest float whose e^x is finite, and the next one up. */
  const float top = 88.72283172607421875f;
  assert_int_equal(hd_float_bits(det_expf32_hd(top)), hd_float_bits(det_expf_fast_hd(top)));
  assert_true(isfinite(det_expf32_hd(top)));
  assert_true(isinf(det_expf32_hd(nextafterf(top, INFINITY))));
  /* The smallest subnormal result, and NaN's own bits back. */
  assert_int_equal(hd_float_bits(det_expf32_hd(-103.2789f)), 1);
  assert_int_equal(hd_float_bits(det_expf32_hd(hd_bits_float(0x7fc01234u))), 0x7fc01234u);
  assert_int_equal(hd_float_bits(det_expf32_hd(hd_bits_float(0xffc00001u))), 0xffc00001u);
}

/* Negative: the polynomial cut to degree 6 (c7 a thousandth of itself)
 * is more than a unit from det_expf on some floats of a sample (every
 * 4099th bit pattern, about a million floats). */
static void test_cut_polynomial_fails(void **state) {
  (void)state;
  unsigned long long seen = 0, over = 0;
  for (uint64_t u = 0; u < 0x100000000ull; u += 4099) {
    const float x = hd_bits_float((uint32_t)u);
    if (x != x) continue;
    seen++;
    if (ulps(det_expf32_poly_hd(x, DET_EXPF32_C7 * 1e-3f), det_expf_fast_hd(x)) > 1) over++;
    assert_true(ulps(det_expf32_hd(x), det_expf_fast_hd(x)) <= 1); /* the uncut one is not */
  }
  fprintf(stderr, "det_expf32 cut to degree 6: %llu of %llu sampled floats over a unit\n", over,
          seen);
  assert_true(over > 0);
}

/* det_expf32_shift_array, the CPU's vector twin (kernels/det_math.c),
 * against the scalar function on x - sub: a million sampled floats and
 * the specials, with two shifts, in place and not, and every tail length
 * (its last n % 8 values take the scalar path). Every float with sub 0
 * is test_det_expf_fast's. */
static void test_shift_array(void **state) {
  (void)state;
  const float specials[] = {0.0f,     -0.0f,     -104.0f,  -103.2789f, 88.72283172607421875f,
                            89.0f,    INFINITY,  -INFINITY, 1e-30f,     -87.5f,
                            hd_bits_float(0x7fc01234u), hd_bits_float(0xff800001u)};
  const size_t ns = sizeof specials / sizeof *specials, n = ns + (0x100000000ull / 4099) + 1;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *w = malloc(n * sizeof *w);
  assert_true(x && y && w);
  size_t m = 0;
  for (size_t i = 0; i < ns; i++) x[m++] = specials[i];
  for (uint64_t u = 0; u < 0x100000000ull; u += 4099) x[m++] = hd_bits_float((uint32_t)u);
  assert_true(m <= n);
  const float subs[] = {0.75f, -3.5f};
  for (int k = 0; k < 2; k++) {
    const float sub = subs[k];
    for (size_t i = 0; i < m; i++) w[i] = det_expf32_hd(x[i] - sub);
    det_expf32_shift_array(y, x, sub, m);
    for (size_t i = 0; i < m; i++)
      if (hd_float_bits(y[i]) != hd_float_bits(w[i]))
        fail_msg("det_expf32_shift_array(%a - %a) = %a, det_expf32_hd gives %a", (double)x[i],
                 (double)sub, (double)y[i], (double)w[i]);
    /* every tail length, from offsets that leave any alignment */
    for (size_t len = 0; len <= 17; len++)
      for (size_t off = 0; off < 3; off++) {
        memcpy(y, x + off, len * sizeof *y);
        det_expf32_shift_array(y, y, sub, len); /* in place */
        assert_memory_equal(y, w + off, len * sizeof *y);
      }
  }
  free(x), free(y), free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_specials),
                                     cmocka_unit_test(test_cut_polynomial_fails),
                                     cmocka_unit_test(test_shift_array)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
