/* The bounded protobuf reader: varints at their limits, every wire type,
 * skipping, and each way a hostile buffer can try to read out of bounds. */
#include "tests/test_util.h"

#include "tests/pb_writer.h"
#include "formats/protobuf.h"

static void put_fixed(wbuf *b, uint32_t field, uint64_t v, int nbytes) {
  put_tag(b, field, nbytes == 4 ? PB_FIXED32 : PB_FIXED64);
  for (int i = 0; i < nbytes; i++) put_byte(b, (uint8_t)(v >> (8 * i)));
}

/* ------------------------------------------------------------- varints */

static void roundtrip(uint64_t v, size_t want_len) {
  wbuf b = {0};
  put_varint(&b, v);
  assert_int_equal(b.n, want_len);
  size_t pos = 0;
  uint64_t got = 0;
  assert_int_equal(pb_decode_varint(b.d, b.n, &pos, &got), 0);
  assert_int_equal(pos, want_len);
  assert_true(got == v);
  free(b.d);
}

static void test_varint_roundtrip(void **state) {
  (void)state;
  roundtrip(0, 1);
  roundtrip(1, 1);
  roundtrip(127, 1);
  roundtrip(128, 2);
  roundtrip(300, 2);
  roundtrip(UINT32_MAX, 5);
  roundtrip((uint64_t)1 << 63, 10);
  roundtrip(UINT64_MAX, 10);
}

static void test_varint_non_minimal_ok(void **state) {
  (void)state;
  /* Protobuf allows redundant 0x80 padding up to 10 bytes. */
  const uint8_t pad[] = {0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
  size_t pos = 0;
  uint64_t v;
  assert_int_equal(pb_decode_varint(pad, sizeof pad, &pos, &v), 0);
  assert_true(v == 1);
  assert_int_equal(pos, 10);
}

static void test_varint_overflow(void **state) {
  (void)state;
  uint8_t eleven[11];
  memset(eleven, 0xff, 10);
  eleven[10] = 0x01;
  size_t pos = 0;
  uint64_t v;
  assert_int_equal(pb_decode_varint(eleven, sizeof eleven, &pos, &v), -2);
  assert_int_equal(pos, 0); /* position untouched on failure */
  /* 10 bytes whose last holds bits 64 and up. */
  uint8_t ten[10];
  memset(ten, 0xff, 9);
  ten[9] = 0x02;
  assert_int_equal(pb_decode_varint(ten, sizeof ten, &pos, &v), -2);
  ten[9] = 0x7f;
  assert_int_equal(pb_decode_varint(ten, sizeof ten, &pos, &v), -2);
}

static void test_varint_truncated(void **state) {
  (void)state;
  const uint8_t b[] = {0x80, 0x80, 0x80};
  size_t pos = 0;
  uint64_t v;
  assert_int_equal(pb_decode_varint(b, sizeof b, &pos, &v), -1);
  assert_int_equal(pb_decode_varint(b, 0, &pos, &v), -1);
}

/* ------------------------------------------------------------- fields */

static void test_every_wire_type(void **state) {
  (void)state;
  wbuf b = {0};
  put_tag(&b, 1, PB_VARINT);
  put_varint(&b, 150);
  put_fixed(&b, 2, 0x0102030405060708ull, 8);
  put_len(&b, 3, "abc", 3);
  put_fixed(&b, 4, 0xdeadbeef, 4);
  put_tag(&b, PB_MAX_FIELD, PB_VARINT);
  put_varint(&b, 7);
  pg_error err;
  pb_reader r;
  pb_field f;
  pb_init(&r, b.d, b.n, "t.pb", &err);
  assert_int_equal(pb_next(&r, &f), 1);
  assert_int_equal(f.number, 1);
  assert_int_equal(f.wire, PB_VARINT);
  assert_true(f.u == 150);
  assert_int_equal(pb_next(&r, &f), 1);
  assert_true(f.u == 0x0102030405060708ull);
  assert_int_equal(pb_next(&r, &f), 1);
  assert_int_equal(f.wire, PB_LEN);
  assert_int_equal(f.len, 3);
  assert_memory_equal(b.d + f.off, "abc", 3);
  assert_int_equal(pb_next(&r, &f), 1);
  assert_true(f.u == 0xdeadbeef);
  assert_int_equal(pb_next(&r, &f), 1);
  assert_int_equal(f.number, PB_MAX_FIELD);
  assert_int_equal(pb_next(&r, &f), 0);
  assert_int_equal(pb_next(&r, &f), 0);
  free(b.d);
}

static int expect_fail(const uint8_t *d, size_t n, long long want_pos, const char *needle) {
  pg_error err;
  pb_reader r;
  pb_field f;
  pb_init(&r, d, n, "bad.pb", &err);
  int rc;
  while ((rc = pb_next(&r, &f)) == 1) {
  }
  assert_int_equal(rc, -1);
  assert_string_equal(err.file, "bad.pb");
  assert_int_equal(err.pos, want_pos);
  if (!strstr(err.msg, needle)) fail_msg("message '%s' lacks '%s'", err.msg, needle);
  return 0;
}

static void test_groups_rejected(void **state) {
  (void)state;
  wbuf b = {0};
  put_tag(&b, 1, PB_VARINT);
  put_varint(&b, 1);
  put_tag(&b, 5, PB_SGROUP);
  put_tag(&b, 5, PB_EGROUP);
  expect_fail(b.d, b.n, 2, "group");
  b.n = 0;
  put_tag(&b, 5, PB_EGROUP);
  expect_fail(b.d, b.n, 0, "group");
  free(b.d);
}

static void test_invalid_wire_types(void **state) {
  (void)state;
  const uint8_t w6[] = {(1 << 3) | 6, 0};
  const uint8_t w7[] = {(1 << 3) | 7, 0};
  expect_fail(w6, sizeof w6, 0, "invalid wire type 6");
  expect_fail(w7, sizeof w7, 0, "invalid wire type 7");
}

static void test_field_zero_rejected(void **state) {
  (void)state;
  const uint8_t z[] = {0x00, 0x01};
  expect_fail(z, sizeof z, 0, "invalid field number 0");
  wbuf b = {0};
  put_varint(&b, ((uint64_t)PB_MAX_FIELD + 1) << 3);
  put_varint(&b, 0);
  expect_fail(b.d, b.n, 0, "invalid field number");
  free(b.d);
}

static void test_length_past_end(void **state) {
  (void)state;
  wbuf b = {0};
  put_tag(&b, 1, PB_VARINT);
  put_varint(&b, 9);
  put_tag(&b, 2, PB_LEN);
  put_varint(&b, 5);
  put_byte(&b, 'x');
  expect_fail(b.d, b.n, 2, "runs past the end");
  /* A length near 2^64 must not wrap the bounds check. */
  b.n = 0;
  put_tag(&b, 2, PB_LEN);
  put_varint(&b, UINT64_MAX);
  expect_fail(b.d, b.n, 0, "runs past the end");
  free(b.d);
}

static void test_truncated_values(void **state) {
  (void)state;
  const uint8_t f32[] = {(1 << 3) | PB_FIXED32, 1, 2, 3};
  expect_fail(f32, sizeof f32, 1, "truncated fixed32");
  const uint8_t f64[] = {(1 << 3) | PB_FIXED64, 1, 2, 3, 4, 5, 6, 7};
  expect_fail(f64, sizeof f64, 1, "truncated fixed64");
  const uint8_t vi[] = {(1 << 3) | PB_VARINT, 0x80};
  expect_fail(vi, sizeof vi, 1, "truncated");
  const uint8_t tag[] = {0x88};
  expect_fail(tag, sizeof tag, 0, "truncated field tag");
  const uint8_t len[] = {(1 << 3) | PB_LEN};
  expect_fail(len, sizeof len, 1, "truncated field length");
}

static void test_tag_overflow(void **state) {
  (void)state;
  uint8_t b[12];
  memset(b, 0xff, sizeof b);
  expect_fail(b, sizeof b, 0, "overflows 64 bits");
}

/* ---------------------------------------------------------- submessages */

/* Descend into every length-delimited field as if it were a message. */
static int walk(pb_reader *r, int *max_depth) {
  pb_field f;
  int rc;
  if (r->depth > *max_depth) *max_depth = r->depth;
  while ((rc = pb_next(r, &f)) == 1) {
    if (f.wire != PB_LEN) continue;
    pb_reader sub;
    if (pb_enter(r, &f, &sub) || walk(&sub, max_depth)) return -1;
  }
  return rc;
}

/* depth nested messages, field 1 each, innermost holding one varint. */
static size_t nested(uint8_t *out, size_t cap, int depth) {
  wbuf inner = {0};
  put_tag(&inner, 2, PB_VARINT);
  put_varint(&inner, 1);
  for (int i = 0; i < depth; i++) {
    wbuf outer = {0};
    put_len(&outer, 1, inner.d, inner.n);
    free(inner.d);
    inner = outer;
  }
  assert_true(inner.n <= cap);
  memcpy(out, inner.d, inner.n);
  size_t n = inner.n;
  free(inner.d);
  return n;
}

static void test_nesting_limit(void **state) {
  (void)state;
  uint8_t d[512];
  pg_error err;
  pb_reader r;
  int maxd = 0;
  size_t n = nested(d, sizeof d, PB_MAX_DEPTH);
  pb_init(&r, d, n, "deep.pb", &err);
  assert_int_equal(walk(&r, &maxd), 0);
  assert_int_equal(maxd, PB_MAX_DEPTH);

  n = nested(d, sizeof d, PB_MAX_DEPTH + 1);
  pb_init(&r, d, n, "deep.pb", &err);
  assert_int_equal(walk(&r, &maxd), -1);
  assert_string_equal(err.file, "deep.pb");
  assert_non_null(strstr(err.msg, "nested deeper"));
  assert_int_equal(err.pos, 2 * PB_MAX_DEPTH); /* the tag of the 17th level */
}

static void test_sub_bounds_are_the_submessage(void **state) {
  (void)state;
  /* A submessage whose inner length would run into its parent's next
   * field must fail, even though the bytes exist in the buffer. */
  wbuf b = {0};
  const uint8_t inner[] = {(1 << 3) | PB_LEN, 4, 'a', 'b'};
  put_len(&b, 1, inner, sizeof inner);
  put_tag(&b, 2, PB_VARINT);
  put_varint(&b, 1);
  pg_error err;
  pb_reader r, sub;
  pb_field f, g;
  pb_init(&r, b.d, b.n, "s.pb", &err);
  assert_int_equal(pb_next(&r, &f), 1);
  assert_int_equal(pb_enter(&r, &f, &sub), 0);
  assert_int_equal(pb_next(&sub, &g), -1);
  assert_int_equal(err.pos, 2); /* absolute offset of the inner tag */
  assert_non_null(strstr(err.msg, "runs past"));
  free(b.d);
}

static void test_enter_needs_len(void **state) {
  (void)state;
  wbuf b = {0};
  put_tag(&b, 3, PB_VARINT);
  put_varint(&b, 1);
  pg_error err;
  pb_reader r, sub;
  pb_field f;
  pb_init(&r, b.d, b.n, "w.pb", &err);
  assert_int_equal(pb_next(&r, &f), 1);
  assert_int_equal(pb_enter(&r, &f, &sub), -1);
  assert_non_null(strstr(err.msg, "wire type varint, expected length-delimited"));
  free(b.d);
}

/* ------------------------------------------------------------ getters */

static void test_typed_getters(void **state) {
  (void)state;
  wbuf b = {0};
  put_tag(&b, 1, PB_VARINT);
  put_varint(&b, (uint64_t)(int64_t)-1); /* int32 -1: 10 bytes, sign-extended */
  put_tag(&b, 2, PB_VARINT);
  put_varint(&b, (uint64_t)1 << 40);
  float x = 1.5f;
  uint32_t bits;
  memcpy(&bits, &x, 4);
  put_fixed(&b, 3, bits, 4);
  put_tag(&b, 4, PB_VARINT);
  put_varint(&b, 2);
  pg_error err;
  pb_reader r;
  pb_field f;
  int32_t i32;
  float fl;
  int bo;
  const uint8_t *p;
  size_t n;
  pb_init(&r, b.d, b.n, "g.pb", &err);
  assert_int_equal(pb_next(&r, &f), 1);
  assert_int_equal(pb_get_int32(&r, &f, "a", &i32), 0);
  assert_int_equal(i32, -1);
  assert_int_equal(pb_get_float(&r, &f, "a", &fl), -1);
  assert_int_equal(pb_get_bytes(&r, &f, "a", &p, &n), -1);
  assert_int_equal(pb_next(&r, &f), 1);
  assert_int_equal(pb_get_int32(&r, &f, "big", &i32), -1);
  assert_non_null(strstr(err.msg, "int32 range"));
  assert_int_equal(pb_next(&r, &f), 1);
  assert_int_equal(pb_get_float(&r, &f, "f", &fl), 0);
  assert_true(fl == 1.5f);
  assert_int_equal(pb_get_bool(&r, &f, "f", &bo), -1);
  assert_int_equal(pb_next(&r, &f), 1);
  assert_int_equal(pb_get_bool(&r, &f, "b", &bo), 0);
  assert_int_equal(bo, 1);
  free(b.d);
}

static void test_null_err_is_safe(void **state) {
  (void)state;
  const uint8_t bad[] = {0x00};
  pb_reader r;
  pb_field f;
  pb_init(&r, bad, sizeof bad, "x", NULL);
  assert_int_equal(pb_next(&r, &f), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_varint_roundtrip),
      cmocka_unit_test(test_varint_non_minimal_ok),
      cmocka_unit_test(test_varint_overflow),
      cmocka_unit_test(test_varint_truncated),
      cmocka_unit_test(test_every_wire_type),
      cmocka_unit_test(test_groups_rejected),
      cmocka_unit_test(test_invalid_wire_types),
      cmocka_unit_test(test_field_zero_rejected),
      cmocka_unit_test(test_length_past_end),
      cmocka_unit_test(test_truncated_values),
      cmocka_unit_test(test_tag_overflow),
      cmocka_unit_test(test_nesting_limit),
      cmocka_unit_test(test_sub_bounds_are_the_submessage),
      cmocka_unit_test(test_enter_needs_len),
      cmocka_unit_test(test_typed_getters),
      cmocka_unit_test(test_null_err_is_safe),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
