/* Token shards: every way the header or size can be wrong, the vocabulary
 * check, reading through mmap, and listing a split in name order. */
#include "tests/test_util.h"

#include <sys/stat.h>

#include "formats/shard.h"

static void put_i32le(uint8_t *p, int32_t v) {
  uint32_t u = (uint32_t)v;
  p[0] = (uint8_t)u;
  p[1] = (uint8_t)(u >> 8);
  p[2] = (uint8_t)(u >> 16);
  p[3] = (uint8_t)(u >> 24);
}

/* A valid shard of n tokens (token i = (i * 7) % 1000) in a fresh buffer. */
static uint8_t *make_shard(uint32_t n, size_t *len) {
  *len = SHARD_HEADER_BYTES + 2 * (size_t)n;
  uint8_t *b = calloc(1, *len);
  assert_non_null(b);
  put_i32le(b, SHARD_MAGIC);
  put_i32le(b + 4, SHARD_VERSION);
  put_i32le(b + 8, (int32_t)n);
  for (uint32_t i = 0; i < n; i++) {
    uint16_t t = (uint16_t)((i * 7) % 1000);
    b[SHARD_HEADER_BYTES + 2 * i] = (uint8_t)t;
    b[SHARD_HEADER_BYTES + 2 * i + 1] = (uint8_t)(t >> 8);
  }
  return b;
}

static void test_valid_shard(void **state) {
  (void)state;
  size_t len;
  uint8_t *b = make_shard(300, &len);
  shard s;
  pg_error err;
  assert_int_equal(shard_parse(b, len, "x.bin", 1000, &s, &err), 0);
  assert_int_equal(s.magic, SHARD_MAGIC);
  assert_int_equal(s.version, 1);
  assert_int_equal(s.n_tokens, 300);
  assert_ptr_equal((const void *)s.tokens, b + SHARD_HEADER_BYTES);
  for (uint32_t i = 0; i < 300; i++) assert_int_equal(shard_token(&s, i), (i * 7) % 1000);
  free(b);
}

/* Known bytes, not produced by our own writer: the header says 2 tokens,
 * 0x0102 and 0xfffe, so the decoding must be little-endian. */
static void test_little_endian_decoding(void **state) {
  (void)state;
  uint8_t b[SHARD_HEADER_BYTES + 4] = {0};
  /* magic 20240520 = 0x0134d888, version 1, count 2 */
  const uint8_t head[12] = {0x88, 0xd8, 0x34, 0x01, 1, 0, 0, 0, 2, 0, 0, 0};
  memcpy(b, head, sizeof head);
  b[1024] = 0x02, b[1025] = 0x01, b[1026] = 0xfe, b[1027] = 0xff;
  shard s;
  assert_int_equal(shard_parse(b, sizeof b, "le", 0, &s, NULL), 0);
  assert_int_equal(s.n_tokens, 2);
  assert_int_equal(shard_token(&s, 0), 0x0102);
  assert_int_equal(shard_token(&s, 1), 0xfffe);
  /* with a vocabulary, 0xfffe is out of range at byte 1026, index 1 */
  pg_error err;
  assert_int_equal(shard_parse(b, sizeof b, "le", 50000, &s, &err), -1);
  assert_int_equal(err.pos, 1026);
  assert_non_null(strstr(err.msg, "token 65534 at index 1"));
}

static void test_empty_shard_is_valid(void **state) {
  (void)state;
  size_t len;
  uint8_t *b = make_shard(0, &len);
  shard s;
  assert_int_equal(shard_parse(b, len, "e", 5, &s, NULL), 0);
  assert_int_equal(s.n_tokens, 0);
  free(b);
}

static void test_shorter_than_header(void **state) {
  (void)state;
  size_t len;
  uint8_t *b = make_shard(10, &len);
  shard s;
  pg_error err;
  assert_int_equal(shard_parse(b, 1023, "short.bin", 0, &s, &err), -1);
  assert_string_equal(err.file, "short.bin");
  assert_int_equal(err.pos, 1023);
  assert_non_null(strstr(err.msg, "shorter than the 1024-byte"));
  assert_int_equal(shard_parse(NULL, 0, "empty.bin", 0, &s, &err), -1);
  assert_int_equal(err.pos, 0);
  free(b);
}

static void test_bad_magic_and_version(void **state) {
  (void)state;
  size_t len;
  uint8_t *b = make_shard(4, &len);
  shard s;
  pg_error err;
  put_i32le(b, 20240521);
  assert_int_equal(shard_parse(b, len, "m", 0, &s, &err), -1);
  assert_int_equal(err.pos, 0);
  assert_non_null(strstr(err.msg, "bad magic 20240521"));
  put_i32le(b, SHARD_MAGIC);
  put_i32le(b + 4, 2);
  assert_int_equal(shard_parse(b, len, "v", 0, &s, &err), -1);
  assert_int_equal(err.pos, 4);
  assert_non_null(strstr(err.msg, "version 2"));
  free(b);
}

static void test_negative_count(void **state) {
  (void)state;
  size_t len;
  uint8_t *b = make_shard(4, &len);
  put_i32le(b + 8, -1);
  shard s;
  pg_error err;
  assert_int_equal(shard_parse(b, len, "n", 0, &s, &err), -1);
  assert_int_equal(err.pos, 8);
  assert_non_null(strstr(err.msg, "negative token count -1"));
  free(b);
}

static void test_truncated_and_trailing(void **state) {
  (void)state;
  size_t len;
  uint8_t *b = make_shard(100, &len); /* 1224 bytes */
  shard s;
  pg_error err;
  assert_int_equal(shard_parse(b, len - 3, "t", 0, &s, &err), -1);
  assert_int_equal(err.pos, 1221);
  assert_non_null(strstr(err.msg, "1224 bytes expected"));
  assert_non_null(strstr(err.msg, "has 1221"));
  assert_non_null(strstr(err.msg, "truncated by 3 bytes"));
  /* header claims fewer tokens than the file holds */
  put_i32le(b + 8, 98);
  assert_int_equal(shard_parse(b, len, "t", 0, &s, &err), -1);
  assert_int_equal(err.pos, 1220);
  assert_non_null(strstr(err.msg, "4 trailing bytes"));
  /* the largest count must not overflow the size computation */
  put_i32le(b + 8, INT32_MAX);
  assert_int_equal(shard_parse(b, len, "t", 0, &s, &err), -1);
  assert_non_null(strstr(err.msg, "4294968318 bytes expected"));
  free(b);
}

static void test_vocab_first_bad_token(void **state) {
  (void)state;
  size_t len;
  uint8_t *b = make_shard(50, &len);
  /* tokens 10 and 20 are out of range for vocab 1000; 10 is reported */
  b[1024 + 2 * 10] = 0xe8, b[1024 + 2 * 10 + 1] = 0x03; /* 1000 */
  b[1024 + 2 * 20] = 0xff, b[1024 + 2 * 20 + 1] = 0xff;
  shard s;
  pg_error err;
  assert_int_equal(shard_parse(b, len, "vocab.bin", 1000, &s, &err), -1);
  assert_int_equal(err.pos, 1044);
  assert_non_null(strstr(err.msg, "token 1000 at index 10"));
  assert_non_null(strstr(err.msg, "vocabulary size 1000"));
  assert_int_equal(shard_parse(b, len, "vocab.bin", 1001, &s, &err), -1);
  assert_int_equal(err.pos, 1064);
  assert_int_equal(shard_parse(b, len, "vocab.bin", 0, &s, &err), 0);
  free(b);
}

static void write_shard(const char *dir, const char *name, uint32_t n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  size_t len;
  uint8_t *b = make_shard(n, &len);
  test_write_file(path, b, len);
  free(b);
}

static void test_open_maps_file(void **state) {
  (void)state;
  char *dir = test_tmpdir();
  write_shard(dir, "a.bin", 1234);
  char path[1024];
  snprintf(path, sizeof path, "%s/a.bin", dir);
  shard s;
  pg_error err;
  assert_int_equal(shard_open(path, 1000, &s, &err), 0);
  assert_int_equal(s.n_tokens, 1234);
  assert_int_equal(s.map.size, 1024 + 2 * 1234);
  assert_int_equal(shard_token(&s, 1233), (1233 * 7) % 1000);
  shard_close(&s);
  assert_null(s.map.data);
  /* a bad file is unmapped and reported with its path */
  test_write_file(path, "hello", 5);
  assert_int_equal(shard_open(path, 0, &s, &err), -1);
  assert_string_equal(err.file, path);
  assert_null(s.map.data);
  snprintf(path, sizeof path, "%s/missing.bin", dir);
  assert_int_equal(shard_open(path, 0, &s, &err), -1);
  assert_non_null(strstr(err.msg, "cannot open"));
  test_rmdir(dir);
}

static void test_glob_sorted_and_filtered(void **state) {
  (void)state;
  char *dir = test_tmpdir();
  const char *names[] = {"fineweb_train_000010.bin", "fineweb_train_000002.bin",
                         "fineweb_train_000001.bin", "fineweb_val_000000.bin",
                         "fineweb_train_000003.bin.tmp", "xfineweb_train_000004.bin"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) write_shard(dir, names[i], 1);
  char sub[1024];
  snprintf(sub, sizeof sub, "%s/fineweb_train_dir.bin", dir); /* not a regular file */
  assert_int_equal(mkdir(sub, 0700), 0);
  char **paths;
  size_t n;
  pg_error err;
  assert_int_equal(shard_glob(dir, "fineweb_train_", &paths, &n, &err), 0);
  assert_int_equal(n, 3);
  const char *want[] = {"fineweb_train_000001.bin", "fineweb_train_000002.bin",
                        "fineweb_train_000010.bin"};
  for (size_t i = 0; i < n; i++) {
    char full[1024];
    snprintf(full, sizeof full, "%s/%s", dir, want[i]);
    assert_string_equal(paths[i], full);
  }
  shard_paths_free(paths, n);
  assert_int_equal(shard_glob(dir, "fineweb_val_", &paths, &n, &err), 0);
  assert_int_equal(n, 1);
  shard_paths_free(paths, n);
  test_rmdir(dir);
}

static void test_glob_errors(void **state) {
  (void)state;
  char *dir = test_tmpdir();
  char **paths;
  size_t n;
  pg_error err;
  assert_int_equal(shard_glob(dir, "fineweb_val_", &paths, &n, &err), -1);
  assert_string_equal(err.file, dir);
  assert_non_null(strstr(err.msg, "fineweb_val_*.bin"));
  assert_null(paths);
  assert_int_equal(n, 0);
  char missing[1024];
  snprintf(missing, sizeof missing, "%s/nope", dir);
  assert_int_equal(shard_glob(missing, "fineweb_val_", &paths, &n, &err), -1);
  assert_non_null(strstr(err.msg, "cannot open directory"));
  test_rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_valid_shard),
      cmocka_unit_test(test_little_endian_decoding),
      cmocka_unit_test(test_empty_shard_is_valid),
      cmocka_unit_test(test_shorter_than_header),
      cmocka_unit_test(test_bad_magic_and_version),
      cmocka_unit_test(test_negative_count),
      cmocka_unit_test(test_truncated_and_trailing),
      cmocka_unit_test(test_vocab_first_bad_token),
      cmocka_unit_test(test_open_maps_file),
      cmocka_unit_test(test_glob_sorted_and_filtered),
      cmocka_unit_test(test_glob_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
