/* bf16 rounding: exact bit patterns for ties, carries, NaN, infinity,
 * subnormals, checked against an independent rounding written with
 * integer arithmetic on the discarded bits. */
#include "tests/test_util.h"

#include <math.h>

#include "kernels/bf16.h"

static uint32_t bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static float from_bits(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* Independent reference: compare the discarded half with 0x8000. */
static uint16_t ref_round(float x) {
  uint32_t u = bits(x);
  uint32_t hi = u >> 16, lo = u & 0xffffu;
  if (lo > 0x8000u || (lo == 0x8000u && (hi & 1u))) hi++;
  return (uint16_t)hi;
}

static void test_ties_go_to_even(void **state) {
  (void)state;
  /* 1 + 2^-8 is exactly halfway between 1 and 1 + 2^-7: the even one is 1. */
  assert_int_equal(bf16_from_float(1.0f + 0x1p-8f), 0x3f80);
  /* 1 + 3*2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6 (even). */
  assert_int_equal(bf16_from_float(1.0f + 3 * 0x1p-8f), 0x3f82);
  /* Just above the tie rounds up. */
  assert_int_equal(bf16_from_float(from_bits(0x3f808001u)), 0x3f81);
  assert_int_equal(bf16_from_float(from_bits(0x3f807fffu)), 0x3f80);
  assert_true(bf16_round(-1.0f - 0x1p-8f) == -1.0f);
}

static void test_carry_and_overflow(void **state) {
  (void)state;
  /* Mantissa all ones carries into the exponent. */
  assert_int_equal(bf16_from_float(from_bits(0x3fffffffu)), 0x4000);
  /* Largest float rounds to infinity (as PyTorch does). */
  assert_true(isinf(bf16_round(3.4028235e38f)));
  assert_int_equal(bf16_from_float(INFINITY), 0x7f80);
  assert_int_equal(bf16_from_float(-INFINITY), 0xff80);
}

static void test_nan_stays_nan(void **state) {
  (void)state;
  /* A NaN whose payload is only in the low bits must not become infinity. */
  float n = from_bits(0x7f800001u);
  assert_true(isnan(bf16_round(n)));
  assert_true(isnan(bf16_round(NAN)));
  assert_true(bf16_is_exact(NAN));
}

static void test_matches_reference_on_a_sweep(void **state) {
  (void)state;
  /* Every 196611th bit pattern over the finite range (an odd stride, so every
   * low-half value is visited in turn), both signs, subnormals included. */
  for (uint64_t u = 0; u < 0x7f7f0000u; u += 65537u * 3u) {
    for (int s = 0; s < 2; s++) {
      float x = from_bits((uint32_t)u | (s ? 0x80000000u : 0u));
      assert_int_equal(bf16_from_float(x), ref_round(x));
      float r = bf16_round(x);
      assert_true(bf16_is_exact(r));
      assert_true(bf16_to_float(bf16_from_float(x)) == r);
    }
  }
  float a[3] = {1.0f + 0x1p-8f, 0x1p-140f, 3.14159265f};
  bf16_round_array(a, 3);
  assert_true(a[0] == 1.0f);
  assert_true(bf16_is_exact(a[1]) && bf16_is_exact(a[2]));
  assert_false(bf16_is_exact(3.14159265f));
  assert_true(a[2] == 3.140625f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ties_go_to_even),
      cmocka_unit_test(test_carry_and_overflow),
      cmocka_unit_test(test_nan_stays_nan),
      cmocka_unit_test(test_matches_reference_on_a_sweep),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
