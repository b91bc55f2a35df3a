/* Checkpoint container: a write/read round trip keeps every value bit
 * for bit (NaN payloads, -0.0 included), the byte layout is the
 * documented little-endian one, and every kind of damage is refused. */
#include "tests/test_util.h"

#include <math.h>

#include "common/fileio.h"
#include "common/sha256.h"
#include "trainer/checkpoint.h"

static void build(checkpoint *c) {
  pg_error e;
  float f[4] = {1.0f, -0.0f, NAN, 3.5e-40f};
  uint32_t nanbits = 0x7fc01234u;
  memcpy(&f[2], &nanbits, 4);
  uint64_t u[2] = {0, UINT64_MAX};
  uint32_t w[3] = {1, 0xdeadbeefu, 7};
  double d[1] = {0.1};
  memset(c, 0, sizeof *c);
  assert_int_equal(ckpt_add(c, "params", CKPT_F32, f, 4, &e), 0);
  assert_int_equal(ckpt_add(c, "step", CKPT_U64, u, 2, &e), 0);
  assert_int_equal(ckpt_add(c, "loss.bits", CKPT_U32, w, 3, &e), 0);
  assert_int_equal(ckpt_add(c, "wall", CKPT_F64, d, 1, &e), 0);
  assert_int_equal(ckpt_add(c, "config", CKPT_BYTES, "{}", 2, &e), 0);
  assert_int_equal(ckpt_add(c, "empty", CKPT_F32, NULL, 0, &e), 0);
}

static void roundtrip(void **state) {
  (void)state;
  checkpoint a, b;
  pg_error e;
  build(&a);
  char *dir = test_tmpdir(), path[600];
  snprintf(path, sizeof path, "%s/ckpt", dir);
  assert_int_equal(ckpt_write(&a, path, &e), 0);
  assert_int_equal(ckpt_read(path, &b, &e), 0);
  assert_int_equal(b.n, a.n);
  for (size_t i = 0; i < a.n; i++) {
    assert_string_equal(a.entries[i].name, b.entries[i].name);
    assert_int_equal(a.entries[i].type, b.entries[i].type);
    assert_int_equal(a.entries[i].count, b.entries[i].count);
    assert_memory_equal(a.entries[i].data, b.entries[i].data,
                        a.entries[i].count * ckpt_type_size(a.entries[i].type));
  }
  float f[4];
  assert_int_equal(ckpt_get(&b, path, "params", CKPT_F32, 4, f, &e), 0);
  uint32_t bits;
  memcpy(&bits, &f[2], 4);
  assert_int_equal(bits, 0x7fc01234u);
  memcpy(&bits, &f[1], 4);
  assert_int_equal(bits, 0x80000000u);
  /* wrong count, wrong type, missing: each named */
  assert_int_equal(ckpt_get(&b, path, "params", CKPT_F32, 5, f, &e), -1);
  assert_non_null(strstr(e.msg, "params"));
  assert_int_equal(ckpt_get(&b, path, "params", CKPT_U32, 4, f, &e), -1);
  assert_int_equal(ckpt_get(&b, path, "absent", CKPT_U32, 1, f, &e), -1);
  assert_non_null(strstr(e.msg, "absent"));
  ckpt_free(&a);
  ckpt_free(&b);
  test_rmdir(dir);
}

/* The documented layout, checked on the bytes. */
static void layout(void **state) {
  (void)state;
  checkpoint c = {0};
  pg_error e;
  uint32_t v = 0x01020304u;
  assert_int_equal(ckpt_add(&c, "ab", CKPT_U32, &v, 1, &e), 0);
  uint8_t *buf;
  size_t len;
  assert_int_equal(ckpt_serialize(&c, &buf, &len, &e), 0);
  static const uint8_t want[] = {'P', 'G', 'O', 'L', 'F', 'C', 'K', 'P', 1, 0, 0, 0, 1, 0, 0, 0,
                                 2,   0,   'a', 'b', 2,   0,   1,   0,   0, 0, 0, 0, 0, 0, 4, 3, 2, 1};
  assert_int_equal(len, sizeof want + 32);
  assert_memory_equal(buf, want, sizeof want);
  uint8_t d[32];
  sha256_buf(buf, sizeof want, d);
  assert_memory_equal(buf + sizeof want, d, 32);
  free(buf);
  ckpt_free(&c);
}

/* Re-seal a damaged buffer (fix its digest) so the structural checks,
 * not just the digest, are exercised. */
static void reseal(uint8_t *buf, size_t len) { sha256_buf(buf, len - 32, buf + len - 32); }

static void damage_refused(void **state) {
  (void)state;
  checkpoint a, b;
  pg_error e;
  build(&a);
  uint8_t *buf;
  size_t len;
  assert_int_equal(ckpt_serialize(&a, &buf, &len, &e), 0);
  uint8_t *m = malloc(len + 8);
  /* any flipped bit breaks the digest */
  for (size_t i = 0; i < len; i += 7) {
    memcpy(m, buf, len);
    m[i] ^= 0x10;
    assert_int_equal(ckpt_parse(m, len, "c", &b, &e), -1);
  }
  memcpy(m, buf, len);
  assert_int_equal(ckpt_parse(m, len - 1, "c", &b, &e), -1); /* truncated */
  /* structural damage under a valid digest */
  memcpy(m, buf, len);
  m[8] = 2; /* version */
  reseal(m, len);
  assert_int_equal(ckpt_parse(m, len, "c", &b, &e), -1);
  assert_non_null(strstr(e.msg, "version"));
  memcpy(m, buf, len);
  m[12] = 7; /* more entries than present */
  reseal(m, len);
  assert_int_equal(ckpt_parse(m, len, "c", &b, &e), -1);
  memcpy(m, buf, len);
  m[12] = 4; /* fewer: trailing bytes */
  reseal(m, len);
  assert_int_equal(ckpt_parse(m, len, "c", &b, &e), -1);
  memcpy(m, buf, len);
  m[16 + 2 + 6] = 9; /* type of "params" */
  reseal(m, len);
  assert_int_equal(ckpt_parse(m, len, "c", &b, &e), -1);
  assert_non_null(strstr(e.msg, "type"));
  memcpy(m, buf, len);
  m[16 + 2 + 6 + 2 + 7] = 0x80; /* count of "params" huge */
  reseal(m, len);
  assert_int_equal(ckpt_parse(m, len, "c", &b, &e), -1);
  assert_non_null(strstr(e.msg, "past the end"));
  memcpy(m, buf, len);
  m[16 + 2] = '/'; /* bad name character */
  reseal(m, len);
  assert_int_equal(ckpt_parse(m, len, "c", &b, &e), -1);
  memcpy(m, buf, len);
  memcpy(m + 16 + 2, "wallxx", 6); /* "params" renamed to another unique name */
  reseal(m, len);
  assert_int_equal(ckpt_parse(m, len, "c", &b, &e), 0); /* a fresh unique name is fine */
  ckpt_free(&b);
  free(m);
  free(buf);
  /* duplicates and bad names refused when adding */
  assert_int_equal(ckpt_add(&a, "params", CKPT_F32, NULL, 0, &e), -1);
  assert_int_equal(ckpt_add(&a, "a b", CKPT_F32, NULL, 0, &e), -1);
  assert_int_equal(ckpt_add(&a, "", CKPT_F32, NULL, 0, &e), -1);
  ckpt_free(&a);
}

static void duplicate_in_file(void **state) {
  (void)state;
  checkpoint c = {0};
  pg_error e;
  uint32_t v = 1;
  assert_int_equal(ckpt_add(&c, "aa", CKPT_U32, &v, 1, &e), 0);
  assert_int_equal(ckpt_add(&c, "ab", CKPT_U32, &v, 1, &e), 0);
  uint8_t *buf;
  size_t len;
  assert_int_equal(ckpt_serialize(&c, &buf, &len, &e), 0);
  buf[16 + 2 + 2 + 10 + 4 + 2 + 1] = 'a'; /* "ab" -> "aa" */
  reseal(buf, len);
  checkpoint b;
  assert_int_equal(ckpt_parse(buf, len, "c", &b, &e), -1);
  assert_non_null(strstr(e.msg, "duplicate"));
  free(buf);
  ckpt_free(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(roundtrip),
      cmocka_unit_test(layout),
      cmocka_unit_test(damage_refused),
      cmocka_unit_test(duplicate_in_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
