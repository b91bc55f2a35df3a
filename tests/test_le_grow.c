/* common/le.h against explicit byte patterns (so a big-endian or
 * misaligned read would fail), and common/grow.h: no-op when there is
 * room, doubling from the first capacity, and overflow refused with the
 * array left as it was. */
#include "tests/test_util.h"

#include <float.h>

#include "common/grow.h"
#include "common/le.h"

static void test_le_reads(void **state) {
  (void)state;
  /* One spare byte in front: every read below is at an odd address. */
  const uint8_t b[] = {0xee, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
  const uint8_t *p = b + 1;
  assert_int_equal(le_u16(p), 0x0201);
  assert_int_equal(le_u32(p), 0x04030201u);
  assert_true(le_u64(p) == 0x0807060504030201ull);
  assert_true(le_get(p, 3) == 0x030201u);
  const uint8_t neg[] = {0xfe, 0xff, 0xff, 0xff};
  assert_int_equal(le_i32(neg), -2);
  const uint8_t one_f32[] = {0x00, 0x00, 0x80, 0x3f};   /* 1.0f */
  const uint8_t half_f64[] = {0, 0, 0, 0, 0, 0, 0xe0, 0x3f}; /* 0.5 */
  assert_true(le_f32(one_f32) == 1.0f);
  assert_true(le_f64(half_f64) == 0.5);
}

static void test_le_writes_round_trip(void **state) {
  (void)state;
  uint8_t b[9] = {0};
  le_put_u32(b + 1, 0xa1b2c3d4u);
  assert_int_equal(b[1], 0xd4);
  assert_int_equal(b[4], 0xa1);
  le_put_u64(b + 1, 0x1122334455667788ull);
  assert_int_equal(b[1], 0x88);
  assert_int_equal(b[8], 0x11);
  le_put_u16(b, 0xbeef);
  assert_int_equal(le_u16(b), 0xbeef);
  le_put_f32(b + 1, -FLT_MIN);
  assert_true(le_f32(b + 1) == -FLT_MIN);
  le_put_f64(b + 1, DBL_MAX);
  assert_true(le_f64(b + 1) == DBL_MAX);
}

static void test_grow_doubles(void **state) {
  (void)state;
  int *a = NULL;
  size_t cap = 0;
  assert_int_equal(PG_GROW(a, cap, 0, 16), 0);
  assert_null(a); /* nothing needed, nothing allocated */
  assert_int_equal(PG_GROW(a, cap, 1, 16), 0);
  assert_int_equal(cap, 16);
  for (int i = 0; i < 16; i++) a[i] = i;
  int *before = a;
  assert_int_equal(PG_GROW(a, cap, 16, 16), 0);
  assert_ptr_equal(a, before); /* enough room: untouched */
  assert_int_equal(PG_GROW(a, cap, 17, 16), 0);
  assert_int_equal(cap, 32);
  assert_int_equal(PG_GROW(a, cap, 100, 16), 0);
  assert_int_equal(cap, 128);
  for (int i = 0; i < 16; i++) assert_int_equal(a[i], i); /* contents kept */
  free(a);
}

static void test_grow_refuses_overflow(void **state) {
  (void)state;
  double *a = NULL;
  size_t cap = 0;
  assert_int_equal(PG_GROW(a, cap, 4, 4), 0);
  a[0] = 42.0;
  double *before = a;
  assert_int_equal(PG_GROW(a, cap, SIZE_MAX / 2, 4), -1); /* bytes overflow */
  assert_int_equal(PG_GROW(a, cap, SIZE_MAX, 4), -1);     /* count overflow */
  assert_ptr_equal(a, before);
  assert_int_equal(cap, 4);
  assert_true(a[0] == 42.0);
  free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_le_reads),
      cmocka_unit_test(test_le_writes_round_trip),
      cmocka_unit_test(test_grow_doubles),
      cmocka_unit_test(test_grow_refuses_overflow),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
