/* det_expf32_hd (kernels/det_expf32.h) at the ends of its range, exactly
 * (0 and +0, infinity, the subnormals near -104, NaN's own bits), and a
 * negative check of the bound: the polynomial without its degree-7 term
 * is more than a unit from det_expf on a sample of floats. The bound
 * itself, within one unit of det_expf on every float, is checked by the
 * exhaustive sweep of tests/test_det_expf_fast.c, which computes det_expf
 * of every float anyway. */
#include "tests/test_util.h"

#include <math.h>
#include <stdint.h>

#include "kernels/det_expf32.h"
#include "kernels/det_expf_fast.h"

struct sweep {
  unsigned long long seen, cut_over;
};

enum { CHUNK = 1 << 16 };

/* Units in the last place between two non-negative floats (+0 to +inf):
 * their bit patterns are ordered as their values. */
static inline uint32_t ulps(float a, float b) {
  const uint32_t x = hd_float_bits(a), y = hd_float_bits(b);
  return x > y ? x - y : y - x;
}

/* Floats [c CHUNK, (c + 1) CHUNK) into all, with cut as the polynomial's
 * c7. */
static inline __attribute__((always_inline)) void sweep_chunk(long long c, float cut,
                                                              struct sweep *all) {
  struct sweep s = {0};
  for (long long i = c * CHUNK; i < (c + 1) * CHUNK; i++) {
    const float x = hd_bits_float((uint32_t)i);
    if (x != x) continue;
    s.seen++;
    if (ulps(det_expf32_poly_hd(x, cut), det_expf_fast_hd(x)) > 1) s.cut_over++;
  }
#pragma omp critical
  { all->seen += s.seen, all->cut_over += s.cut_over; }
}

/* With an FMA unit det_expf_fast_hd's fma() calls are one instruction
 * each (the same correctly rounded operation as glibc's); det_expf32 has
 * no fma, and contraction stays off (-ffp-contract=off), so its bits are
 * the same in both sweeps. */
__attribute__((target("fma"))) static void sweep_fma(float cut, long long chunks, long long step,
                                                     struct sweep *all) {
#pragma omp parallel for schedule(dynamic, 16)
  for (long long c = 0; c < chunks; c += step) sweep_chunk(c, cut, all);
}

static void sweep_plain(float cut, long long chunks, long long step, struct sweep *all) {
#pragma omp parallel for schedule(dynamic, 16)
  for (long long c = 0; c < chunks; c += step) sweep_chunk(c, cut, all);
}

static void sweep(float cut, long long step, struct sweep *all) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("fma"))
    sweep_fma(cut, (1LL << 32) / CHUNK, step, all);
  else
    sweep_plain(cut, (1LL << 32) / CHUNK, step, all);
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
 * is more than a unit from det_expf on some floats of a sample. */
static void test_cut_polynomial_fails(void **state) {
  (void)state;
  struct sweep all = {0};
  sweep(DET_EXPF32_C7 * 1e-3f, 97, &all);
  fprintf(stderr, "det_expf32 cut to degree 6: %llu sampled floats over a unit\n", all.cut_over);
  assert_true(all.cut_over > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_specials),
                                     cmocka_unit_test(test_cut_polynomial_fails)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
