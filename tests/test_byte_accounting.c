/* The challenge's byte rule on hand-built tables, with hand-counted answers. */
#include "tests/test_util.h"

#include <math.h>

#include "formats/byte_accounting.h"

/* A 6-id vocabulary:
 *   0 <s>   control  (boundary, 0 bytes)
 *   1 <unk> unknown  (boundary, 0 bytes)
 *   2 <0x41> byte    (1 byte)
 *   3 "▁the"         (3 bytes + leading space)
 *   4 "é"            (2 bytes)
 *   5 "▁"            (0 bytes + leading space) */
static uint16_t base[6] = {0, 0, 1, 3, 2, 0};
static bool space[6] = {false, false, false, true, false, true};
static bool boundary[6] = {true, true, false, false, false, false};
static const byte_luts L = {6, base, space, boundary};

static void test_target_bytes_previous_token_rule(void **state) {
  (void)state;
  assert_int_equal(target_bytes(&L, 0, 3), 3); /* after BOS: the space is the dummy prefix */
  assert_int_equal(target_bytes(&L, 1, 3), 3); /* after <unk>, also a boundary */
  assert_int_equal(target_bytes(&L, 4, 3), 4); /* mid-text: the space is a real byte */
  assert_int_equal(target_bytes(&L, 3, 2), 1); /* byte piece */
  assert_int_equal(target_bytes(&L, 3, 4), 2); /* two-byte UTF-8 */
  assert_int_equal(target_bytes(&L, 4, 5), 1); /* a lone space piece */
  assert_int_equal(target_bytes(&L, 0, 5), 0);
  assert_int_equal(target_bytes(&L, 4, 0), 0); /* boundaries have no bytes */
}

static void test_stream_counts_targets_only(void **state) {
  (void)state;
  /* <s> ▁the é ▁the <s> ▁the <0x41>: the first token is not a target. */
  const uint16_t t[] = {0, 3, 4, 3, 0, 3, 2};
  uint32_t per[6];
  assert_int_equal(stream_target_bytes(&L, t, 7, per, "t", NULL), 0);
  const uint32_t want[6] = {3, 2, 4, 0, 3, 1};
  assert_memory_equal(per, want, sizeof want);
  uint64_t total = 0;
  assert_int_equal(stream_total_bytes(&L, t, 7, &total, "t", NULL), 0);
  assert_int_equal(total, 13);
  assert_int_equal(stream_total_bytes(&L, t, 1, &total, "t", NULL), 0);
  assert_int_equal(total, 0);
}

static void test_out_of_range_id_is_an_error(void **state) {
  (void)state;
  const uint16_t t[] = {0, 3, 6, 3};
  uint64_t total = 0;
  pg_error err;
  assert_int_equal(stream_total_bytes(&L, t, 4, &total, "val.bin", &err), -1);
  assert_string_equal(err.file, "val.bin");
  assert_non_null(strstr(err.msg, "token 2 is id 6"));
}

/* Split a stream at every point: the counter must give the same total,
 * because the first token of a shard is a target of the shard before. */
static void test_counter_spans_shards(void **state) {
  (void)state;
  const uint16_t t[] = {0, 3, 4, 3, 0, 3, 2, 5, 3};
  const size_t n = sizeof t / sizeof t[0];
  uint64_t whole = 0;
  assert_int_equal(stream_total_bytes(&L, t, n, &whole, "t", NULL), 0);
  for (size_t cut = 0; cut <= n; cut++) {
    byte_counter c;
    byte_counter_init(&c, UINT64_MAX);
    assert_int_equal(byte_counter_add(&c, &L, t, cut, "a", NULL), 0);
    assert_int_equal(byte_counter_add(&c, &L, t + cut, n - cut, "b", NULL), 0);
    assert_int_equal(c.bytes, whole);
    assert_int_equal(c.targets, n - 1);
    assert_int_equal(c.tokens, n);
  }
}

static void test_target_limit_counts_whole_sequences(void **state) {
  (void)state;
  assert_int_equal(scored_targets(0, 4), 0);
  assert_int_equal(scored_targets(1, 4), 0);
  assert_int_equal(scored_targets(9, 4), 8);
  assert_int_equal(scored_targets(12, 4), 8);
  assert_int_equal(scored_targets(13, 4), 12);
  assert_int_equal(scored_targets(13, 0), 12);
  /* 9 tokens, seq_len 4: 8 targets; here with seq_len 3 only 6 count. */
  const uint16_t t[] = {0, 3, 4, 3, 0, 3, 2, 5, 3};
  byte_counter c;
  byte_counter_init(&c, scored_targets(9, 3));
  assert_int_equal(byte_counter_add(&c, &L, t, 9, "t", NULL), 0);
  assert_int_equal(c.targets, 6);
  assert_int_equal(c.bytes, 3 + 2 + 4 + 0 + 3 + 1);
}

static void test_bpb_and_tokens_per_byte(void **state) {
  (void)state;
  /* 1000 bytes scored at exactly 1 bit each: nats = 1000 ln 2. */
  assert_true(fabs(bpb_from_nats(1000.0 * log(2.0), 1000) - 1.0) < 1e-15);
  assert_true(isnan(bpb_from_nats(1.0, 0)));
  /* The baseline's published numbers: val_loss 2.0727, val_bpb 1.2244. */
  double tpb = tokens_per_byte_from_loss(2.0727, 1.2244);
  assert_true(fabs(tpb - 1.2244 * log(2.0) / 2.0727) < 1e-15);
  assert_true(tpb > 0.40 && tpb < 0.41); /* sp1024: about 2.4 bytes per token */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_target_bytes_previous_token_rule),
      cmocka_unit_test(test_stream_counts_targets_only),
      cmocka_unit_test(test_out_of_range_id_is_an_error),
      cmocka_unit_test(test_counter_spans_shards),
      cmocka_unit_test(test_target_limit_counts_whole_sequences),
      cmocka_unit_test(test_bpb_and_tokens_per_byte),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
