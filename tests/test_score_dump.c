/* Score dumps: the writer's bytes are the documented layout, the reader
 * gives them back, and every malformation is an error naming the byte
 * offset of the field at fault. */
#include "tests/test_util.h"

#include <math.h>
#include <sys/stat.h>

#include "manifests/score_dump.h"

static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void putf64(uint8_t *p, double v) {
  uint64_t b;
  memcpy(&b, &v, 8);
  put64(p, b);
}

/* A dump built by hand, byte by byte: vocab 4, 3 records, 1 probe; in
 * version 2 (96-byte header, T = 7, chain head bytes 0xa0..0xbf) unless
 * v1 is set (64-byte header, nothing after the counts). */
#define V 4
#define HAND_T 7
#define BODY (3 * 24 + 16 + 8 * V)
#define HAND_SIZE (96 + BODY)
#define HAND_SIZE1 (64 + BODY)
static void hand_dump_v(uint8_t *b, int v1) {
  size_t h = v1 ? 64 : 96;
  memset(b, 0, h + BODY);
  memcpy(b, "PGSD", 4);
  put32(b + 4, v1 ? 1 : 2);
  put32(b + 8, V);
  put64(b + 16, 3);
  put64(b + 24, 1);
  if (!v1) {
    put32(b + 32, HAND_T);
    for (int i = 0; i < 32; i++) b[40 + i] = (uint8_t)(0xa0 + i);
  }
  for (int i = 0; i < 3; i++) {
    uint8_t *r = b + h + 24 * i;
    put64(r, (uint64_t)i + 1);
    put32(r + 8, (uint32_t)i);
    putf64(r + 16, 0.5 * (i + 1));
  }
  uint8_t *p = b + h + 72;
  put64(p, 2);
  put32(p + 8, 1);
  put32(p + 12, V);
  for (int k = 0; k < V; k++) putf64(p + 16 + 8 * k, 0.25);
}

static void hand_dump(uint8_t *b) { hand_dump_v(b, 0); }

static void expect_bad(const uint8_t *b, size_t len, long long pos, const char *what) {
  score_dump d;
  pg_error err;
  assert_int_equal(score_dump_parse(b, len, "x.pgsd", &d, &err), -1);
  assert_string_equal(err.file, "x.pgsd");
  if (err.pos != pos || !strstr(err.msg, what)) {
    fprintf(stderr, "got pos %lld msg '%s', wanted pos %lld and '%s'\n", err.pos, err.msg, pos,
            what);
    fail();
  }
}

/* Both versions read back the same records and probe; version 2 also
 * gives T and the chain head, version 1 neither. */
static void test_hand_dump_reads(void **state) {
  (void)state;
  for (int v1 = 0; v1 <= 1; v1++) {
    uint8_t b[HAND_SIZE];
    hand_dump_v(b, v1);
    score_dump d;
    pg_error err;
    assert_int_equal(score_dump_parse(b, v1 ? HAND_SIZE1 : HAND_SIZE, "x", &d, &err), 0);
    assert_int_equal(d.version, v1 ? 1 : 2);
    assert_int_equal(d.header_bytes, v1 ? 64 : 96);
    assert_int_equal(d.vocab_size, V);
    assert_int_equal(d.n_records, 3);
    assert_int_equal(d.n_probes, 1);
    assert_int_equal(d.seq_len, v1 ? 0 : HAND_T);
    assert_int_equal(d.has_chain, !v1);
    assert_int_equal(d.chain_head[31], v1 ? 0 : 0xbf);
    score_record r = score_dump_record(&d, 2);
    assert_int_equal(r.position, 3);
    assert_int_equal(r.target, 2);
    assert_true(r.nll == 1.5);
    score_probe p = score_dump_probe(&d, 0);
    assert_int_equal(p.position, 2);
    assert_int_equal(p.target, 1);
    assert_int_equal(p.vocab_size, V);
    assert_true(score_probe_prob(&p, 3) == 0.25);
    assert_int_equal(score_dump_record_offset(&d, 1), (v1 ? 64 : 96) + 24);
    assert_int_equal(score_dump_probe_offset(&d, 0), (v1 ? 64 : 96) + 72);
  }
}

/* The writer produces exactly the hand-made bytes, whatever the order in
 * which probes and records are added. */
static void test_writer_matches_layout(void **state) {
  (void)state;
  char *dir = test_tmpdir();
  char path[600];
  snprintf(path, sizeof path, "%s/d.pgsd", dir);
  score_dump_writer *w;
  pg_error err;
  double probs[V] = {0.25, 0.25, 0.25, 0.25};
  uint8_t chain[32];
  for (int i = 0; i < 32; i++) chain[i] = (uint8_t)(0xa0 + i);
  assert_int_equal(score_dump_writer_open(&w, path, V, HAND_T, &err), 0);
  assert_int_equal(score_dump_writer_add(w, 1, 0, 0.5, &err), 0);
  assert_int_equal(score_dump_writer_add_probe(w, 2, 1, probs, &err), 0);
  assert_int_equal(score_dump_writer_add(w, 2, 1, 1.0, &err), 0);
  assert_int_equal(score_dump_writer_add(w, 3, 2, 1.5, &err), 0);
  assert_int_equal(score_dump_writer_records(w), 3);
  struct stat st;
  assert_int_equal(stat(path, &st), -1); /* nothing at the name before close */
  assert_int_equal(score_dump_writer_close(w, chain, &err), 0);

  uint8_t want[HAND_SIZE];
  hand_dump(want);
  uint8_t *got;
  size_t len;
  assert_int_equal(file_read_all(path, 1 << 20, &got, &len, &err), 0);
  assert_int_equal(len, HAND_SIZE);
  assert_memory_equal(got, want, HAND_SIZE);
  free(got);

  score_dump d;
  assert_int_equal(score_dump_open(path, &d, &err), 0);
  assert_int_equal(d.n_records, 3);
  score_dump_close(&d);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "ls '%s' | wc -l | grep -qx 1", dir); /* no temp file left */
  assert_int_equal(system(cmd), 0);
  test_rmdir(dir);
}

/* Round trip of many records with awkward doubles (bit for bit). */
static void test_round_trip_bits(void **state) {
  (void)state;
  char *dir = test_tmpdir();
  char path[600];
  snprintf(path, sizeof path, "%s/big.pgsd", dir);
  score_dump_writer *w;
  pg_error err;
  const uint32_t vocab = 1024;
  const uint64_t n = 100000;
  assert_int_equal(score_dump_writer_open(&w, path, vocab, 1024, &err), 0);
  for (uint64_t i = 0; i < n; i++) {
    double nll = (double)i * 1e-3 + 1.0 / 3.0 + (i % 7 == 0 ? 5e-324 : 0);
    if (i == 5) nll = -0.0;
    assert_int_equal(score_dump_writer_add(w, i + 1, (uint32_t)(i * 37 % vocab), nll, &err), 0);
  }
  double *probs = calloc(vocab, sizeof *probs);
  probs[7] = 1.0;
  assert_int_equal(score_dump_writer_add_probe(w, 8, 7, probs, &err), 0);
  free(probs);
  assert_int_equal(score_dump_writer_close(w, NULL, &err), 0); /* no event log */
  score_dump d;
  assert_int_equal(score_dump_open(path, &d, &err), 0);
  assert_int_equal(d.n_records, n);
  assert_int_equal(d.seq_len, 1024);
  assert_int_equal(d.has_chain, 0);
  for (uint64_t i = 0; i < n; i++) {
    score_record r = score_dump_record(&d, i);
    double nll = (double)i * 1e-3 + 1.0 / 3.0 + (i % 7 == 0 ? 5e-324 : 0);
    if (i == 5) nll = -0.0;
    assert_int_equal(r.position, i + 1);
    assert_int_equal(r.target, i * 37 % vocab);
    assert_memory_equal(&r.nll, &nll, 8);
  }
  score_probe p = score_dump_probe(&d, 0);
  assert_true(score_probe_prob(&p, 7) == 1.0 && score_probe_prob(&p, 6) == 0.0);
  score_dump_close(&d);
  test_rmdir(dir);
}

static void test_writer_refuses(void **state) {
  (void)state;
  char *dir = test_tmpdir();
  char path[600];
  snprintf(path, sizeof path, "%s/r.pgsd", dir);
  score_dump_writer *w;
  pg_error err;
  assert_int_equal(score_dump_writer_open(&w, path, 0, 1, &err), -1);
  assert_int_equal(score_dump_writer_open(&w, path, (1u << 20) + 1, 1, &err), -1);
  assert_int_equal(score_dump_writer_open(&w, path, V, 0, &err), -1);
  assert_non_null(strstr(err.msg, "sequence length 0"));
  assert_int_equal(score_dump_writer_open(&w, path, V, 1, &err), 0);
  assert_int_equal(score_dump_writer_add(w, 1, V, 1.0, &err), -1);
  assert_non_null(strstr(err.msg, "target id 4"));
  assert_int_equal(score_dump_writer_add(w, 1, 0, NAN, &err), -1);
  assert_int_equal(score_dump_writer_add(w, 1, 0, INFINITY, &err), -1);
  assert_int_equal(score_dump_writer_add(w, 1, 0, -1e-300, &err), -1);
  assert_non_null(strstr(err.msg, "non-negative"));
  score_dump_writer_abort(w);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", dir); /* abort removes the temp */
  assert_int_equal(system(cmd), 0);
  /* an unwritable place is an error, not a crash */
  assert_int_equal(score_dump_writer_open(&w, "/nonexistent-dir/x.pgsd", V, 1, &err), -1);
  test_rmdir(dir);
}

/* Header faults common to both versions, and each version's own. */
static void test_malformed_header(void **state) {
  (void)state;
  uint8_t b[HAND_SIZE + 8];
  hand_dump(b);
  expect_bad(b, 10, 10, "truncated header");
  expect_bad(b, 0, 0, "truncated header");
  expect_bad(b, 80, 80, "truncated header: 80 bytes, a version 2 score dump starts with 96");

  hand_dump(b);
  b[0] = 'X';
  expect_bad(b, HAND_SIZE, 0, "bad magic");

  for (uint32_t v = 0; v < 5; v += 3) { /* 0 and 3: unknown versions */
    hand_dump(b);
    put32(b + 4, v);
    char want[40];
    snprintf(want, sizeof want, "unsupported version %u", v);
    expect_bad(b, HAND_SIZE, 4, want);
  }

  hand_dump(b);
  put32(b + 8, 0);
  expect_bad(b, HAND_SIZE, 8, "absurd vocab size 0");
  put32(b + 8, (1u << 20) + 1);
  expect_bad(b, HAND_SIZE, 8, "absurd vocab size 1048577");
  put32(b + 8, 0xffffffffu);
  expect_bad(b, HAND_SIZE, 8, "absurd vocab size");

  hand_dump(b);
  put32(b + 12, 1);
  expect_bad(b, HAND_SIZE, 12, "unknown flags");

  /* version 2: T >= 1, reserved bytes 36..39 and 72..95 zero */
  hand_dump(b);
  put32(b + 32, 0);
  expect_bad(b, HAND_SIZE, 32, "sequence length 0");
  unsigned reserved[] = {36, 39, 72, 95};
  for (int k = 0; k < 4; k++) {
    hand_dump(b);
    b[reserved[k]] = 1;
    expect_bad(b, HAND_SIZE, reserved[k], "reserved header byte");
  }
  /* version 1: bytes 32..63 are reserved (no T, no chain head) */
  hand_dump_v(b, 1);
  b[32] = 1;
  expect_bad(b, HAND_SIZE1, 32, "reserved header byte");
  hand_dump_v(b, 1);
  b[63] = 1;
  expect_bad(b, HAND_SIZE1, 63, "reserved header byte");
}

/* Body faults, at the offsets of either version's layout. */
static void test_malformed_body(void **state) {
  (void)state;
  uint8_t b[HAND_SIZE + 8];
  for (int v1 = 0; v1 <= 1; v1++) {
    const long long H = v1 ? 64 : 96, SIZE = H + BODY;
    /* truncated inside record 2 (the probe count claims more than exists) */
    hand_dump_v(b, v1);
    expect_bad(b, (size_t)(H + 2 * 24 + 10), H + 2 * 24, "truncated record 2");
    /* records whole, probe cut */
    expect_bad(b, (size_t)SIZE - 1, H + 72, "truncated probe 0");
    /* counts that would overflow */
    put64(b + 16, UINT64_MAX);
    expect_bad(b, (size_t)SIZE, H + (SIZE - H) / 24 * 24, "truncated record");
    hand_dump_v(b, v1);
    put64(b + 24, UINT64_MAX / 2);
    expect_bad(b, (size_t)SIZE, H + 72 + 48, "truncated probe 1");
    /* extra bytes */
    hand_dump_v(b, v1);
    memset(b + SIZE, 0, 8);
    expect_bad(b, (size_t)SIZE + 8, SIZE, "count mismatch: 8 bytes");
    put64(b + 24, 0); /* probe bytes now unaccounted */
    expect_bad(b, (size_t)SIZE, H + 72, "count mismatch");

    /* record fields */
    hand_dump_v(b, v1);
    putf64(b + H + 24 + 16, NAN);
    expect_bad(b, (size_t)SIZE, H + 24 + 16, "record 1: nll nan");
    putf64(b + H + 24 + 16, -INFINITY);
    expect_bad(b, (size_t)SIZE, H + 24 + 16, "record 1: nll -inf");
    putf64(b + H + 24 + 16, INFINITY);
    expect_bad(b, (size_t)SIZE, H + 24 + 16, "record 1: nll inf");
    putf64(b + H + 24 + 16, -0.25);
    expect_bad(b, (size_t)SIZE, H + 24 + 16, "not a finite non-negative");
    hand_dump_v(b, v1);
    put32(b + H + 48 + 8, V);
    expect_bad(b, (size_t)SIZE, H + 48 + 8, "record 2: target id 4 >= vocab size 4");
    hand_dump_v(b, v1);
    put32(b + H + 12, 7);
    expect_bad(b, (size_t)SIZE, H + 12, "record 0: reserved field is 7");

    /* probe head fields */
    hand_dump_v(b, v1);
    put32(b + H + 72 + 8, 9);
    expect_bad(b, (size_t)SIZE, H + 72 + 8, "probe 0: target id 9");
    hand_dump_v(b, v1);
    put32(b + H + 72 + 12, 5);
    expect_bad(b, (size_t)SIZE, H + 72 + 12, "probe 0: vocab size 5");
  }
}

/* An empty dump (no records, no probes) is well-formed in either
 * version; the audit says it covers nothing. */
static void test_empty_is_valid(void **state) {
  (void)state;
  uint8_t b[96] = {0};
  memcpy(b, "PGSD", 4);
  put32(b + 4, 1);
  put32(b + 8, 1);
  score_dump d;
  pg_error err;
  assert_int_equal(score_dump_parse(b, 64, "e", &d, &err), 0);
  assert_int_equal(d.n_records, 0);
  put32(b + 4, 2);
  put32(b + 32, 1);
  assert_int_equal(score_dump_parse(b, 96, "e", &d, &err), 0);
  assert_int_equal(d.n_records, 0);
  assert_int_equal(d.has_chain, 0);
}

static void test_open_errors_name_file(void **state) {
  (void)state;
  char *dir = test_tmpdir();
  char path[600];
  snprintf(path, sizeof path, "%s/bad.pgsd", dir);
  test_write_file(path, "PGSX", 4);
  score_dump d;
  pg_error err;
  assert_int_equal(score_dump_open(path, &d, &err), -1);
  assert_string_equal(err.file, path);
  assert_int_equal(score_dump_open("/nonexistent/x.pgsd", &d, &err), -1);
  test_rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hand_dump_reads),     cmocka_unit_test(test_writer_matches_layout),
      cmocka_unit_test(test_round_trip_bits),     cmocka_unit_test(test_writer_refuses),
      cmocka_unit_test(test_malformed_header),    cmocka_unit_test(test_malformed_body),
      cmocka_unit_test(test_empty_is_valid),
      cmocka_unit_test(test_open_errors_name_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
