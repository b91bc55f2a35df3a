/* The loss chain against values computed independently (Python hashlib:
 * sha256(b"pgolf-loss-chain-v1"), then struct.pack("<QI", step, bits)),
 * and the loss file parser on good and bad inputs. */
#include "tests/test_util.h"

#include "manifests/loss_chain.h"
#include "manifests/loss_file.h"

static void hex_of(const uint8_t d[SHA256_LEN], char out[SHA256_HEX_LEN + 1]) { sha256_hex(d, out); }

static void empty_chain_is_c0(void **state) {
  (void)state;
  uint8_t c[SHA256_LEN];
  char h[SHA256_HEX_LEN + 1];
  loss_chain_head(NULL, NULL, 0, c);
  hex_of(c, h);
  assert_string_equal(h, "cba02b6b8d61f7c92e4599365cfca968353bbcf0880825ae5f792515d14c8eca");
}

static void two_steps_match_python(void **state) {
  (void)state;
  uint64_t steps[] = {0, 1};
  uint32_t bits[] = {0x40500000u, 0x3f8ccccdu}; /* 3.25f, 1.1f */
  uint8_t c[SHA256_LEN];
  char h[SHA256_HEX_LEN + 1];
  loss_chain_head(steps, bits, 1, c);
  hex_of(c, h);
  assert_string_equal(h, "52f11fa07e6424096ec5956df45c94deccf7f55389448629b09771fc6a05e068");
  loss_chain_head(steps, bits, 2, c);
  hex_of(c, h);
  assert_string_equal(h, "5a2b47de81c9738204a9e1cd21c46e1468a37b64033acd10c4d3ecc5ffcf4c16");
}

/* The same two steps with the bytes built by hand here, so the test does
 * not share the serialisation code it checks. */
static void two_steps_match_hand_built_bytes(void **state) {
  (void)state;
  uint8_t c0[SHA256_LEN], c1[SHA256_LEN], want[SHA256_LEN], got[SHA256_LEN];
  sha256_buf("pgolf-loss-chain-v1", 19, c0);
  uint8_t b1[44] = {0};
  memcpy(b1, c0, 32);
  b1[40] = 0x00, b1[41] = 0x00, b1[42] = 0x50, b1[43] = 0x40; /* step 0, 0x40500000 LE */
  sha256_buf(b1, sizeof b1, c1);
  uint8_t b2[44] = {0};
  memcpy(b2, c1, 32);
  b2[32] = 1;                                                 /* step 1 LE */
  b2[40] = 0xcd, b2[41] = 0xcc, b2[42] = 0x8c, b2[43] = 0x3f; /* 0x3f8ccccd LE */
  sha256_buf(b2, sizeof b2, want);
  uint64_t steps[] = {0, 1};
  uint32_t bits[] = {0x40500000u, 0x3f8ccccdu};
  loss_chain_head(steps, bits, 2, got);
  assert_memory_equal(got, want, SHA256_LEN);
}

static void one_flipped_bit_changes_head(void **state) {
  (void)state;
  uint64_t steps[] = {0, 1, 2};
  uint32_t bits[] = {0x40500000u, 0x3f8ccccdu, 0x3f800000u};
  uint8_t a[SHA256_LEN], b[SHA256_LEN];
  loss_chain_head(steps, bits, 3, a);
  bits[1] ^= 1u; /* last mantissa bit of step 1 */
  loss_chain_head(steps, bits, 3, b);
  assert_memory_not_equal(a, b, SHA256_LEN);
  bits[1] ^= 1u;
  steps[2] = 3; /* the step number is bound in too */
  loss_chain_head(steps, bits, 3, b);
  assert_memory_not_equal(a, b, SHA256_LEN);
}

/* ---- loss file ---- */

static int parse(const char *text, loss_list *l, pg_error *e) {
  return loss_file_parse(text, strlen(text), "losses.txt", l, e);
}

static void good_file(void **state) {
  (void)state;
  loss_list l;
  pg_error e;
  const char *t =
      "# step loss lr wall\n"
      "\n"
      "0 0x40500000\n"
      "1\t1.1 0x3f800000   # decimal loss\n"
      "5 0X7FC00000 0.5 12.5\r\n"
      "  7 -0.0 1e-3 0\n"
      "9 1e-45";
  assert_int_equal(parse(t, &l, &e), 0);
  assert_int_equal(l.n, 5);
  assert_int_equal(l.recs[0].step, 0);
  assert_int_equal(l.recs[0].loss_bits, 0x40500000u);
  assert_false(l.recs[0].has_lr_mult);
  assert_int_equal(l.recs[1].loss_bits, 0x3f8ccccdu); /* strtof rounds 1.1 to float32 */
  assert_true(l.recs[1].has_lr_mult);
  assert_int_equal(l.recs[1].lr_mult_bits, 0x3f800000u);
  assert_int_equal(l.recs[2].loss_bits, 0x7fc00000u); /* NaN accepted as bits */
  assert_int_equal(l.recs[2].lr_mult_bits, 0x3f000000u);
  assert_true(l.recs[2].has_wall_ms);
  assert_true(l.recs[2].wall_ms == 12.5);
  assert_int_equal(l.recs[3].step, 7);
  assert_int_equal(l.recs[3].loss_bits, 0x80000000u);
  assert_int_equal(l.recs[4].loss_bits, 0x00000001u); /* smallest subnormal */
  loss_list_free(&l);
  assert_int_equal(parse("", &l, &e), 0);
  assert_int_equal(l.n, 0);
  loss_list_free(&l);
}

/* text must fail on line `line` with a message containing `what`. */
static void expect_bad(const char *text, size_t len, long long line, const char *what) {
  loss_list l;
  pg_error e;
  memset(&e, 0, sizeof e);
  assert_int_equal(loss_file_parse(text, len, "losses.txt", &l, &e), -1);
  assert_string_equal(e.file, "losses.txt");
  assert_true(e.pos_is_line);
  assert_int_equal(e.pos, line);
  if (!strstr(e.msg, what)) fail_msg("message '%s' lacks '%s'", e.msg, what);
  assert_null(l.recs);
}

static void bad_files(void **state) {
  (void)state;
#define BAD(t, line, what) expect_bad(t, strlen(t), line, what)
  BAD("0 0x4050000\n", 1, "8 hex digits");                /* 7 digits */
  BAD("0 1.0\n1 0x4050000g\n", 2, "8 hex digits");        /* not hex */
  BAD("0 1.0\n1 0x405000000\n", 2, "8 hex digits");       /* 9 digits */
  BAD("0 1.0\n\n# c\n3 2.0\n3 1.0\n", 5, "not greater");  /* repeated step */
  BAD("5 1.0\n4 1.0\n", 2, "not greater");                /* decreasing */
  BAD("0 1.0\nhello world\n", 2, "step 'hello'");         /* garbage */
  BAD("0 nan\n", 1, "decimal");                           /* NaN must be bits */
  BAD("0 inf\n", 1, "decimal");
  BAD("0 0x1p3\n", 1, "8 hex digits");                    /* no hex floats */
  BAD("0 1e39\n", 1, "float32 range");
  BAD("0\n", 1, "expected STEP LOSS");
  BAD("0 1 2 3 4\n", 1, "too many fields");
  BAD("-1 1.0\n", 1, "step");
  BAD("9223372036854775808 1.0\n", 1, "2^63");
  BAD("0 1.0 1.0 -3\n", 1, "wall_ms");
  BAD("0 1.0 x\n", 1, "lr_mult");
  expect_bad("0 1.0\n1 1\0.0\n", 13, 2, "NUL");
#undef BAD
  size_t n = LOSS_FILE_MAX_LINE + 10;
  char *big = malloc(n + 20);
  assert_non_null(big);
  strcpy(big, "0 1.0\n1 2.0\n");
  memset(big + 12, ' ', n);
  big[12 + n] = 0;
  expect_bad(big, strlen(big), 3, "longer than");
  free(big);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(empty_chain_is_c0),
      cmocka_unit_test(two_steps_match_python),
      cmocka_unit_test(two_steps_match_hand_built_bytes),
      cmocka_unit_test(one_flipped_bit_changes_head),
      cmocka_unit_test(good_file),
      cmocka_unit_test(bad_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
