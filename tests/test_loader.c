/* The training loader against the official DistributedTokenLoader
 * (golden/loader.json): the demo shard for world 1 and 2, a wrap-around
 * over small shards with an empty one, exact resume from a saved state,
 * and every argument check. */
#include "tests/test_util.h"

#include <jansson.h>

#include "common/sha256.h"
#include "trainer/loader.h"

#define GOLDEN "golden/loader.json"
#define DEMO_TRAIN "data/demo/fineweb_train_000000.bin"

static json_t *load_golden(void) {
  json_error_t je;
  json_t *j = json_load_file(GOLDEN, 0, &je);
  if (!j) fail_msg("%s: %s", GOLDEN, je.text);
  return j;
}

static void sha_hex_of(const uint16_t *t, size_t n, char hex[SHA256_HEX_LEN + 1]) {
  /* uint16 little-endian, as the golden hashes numpy "<u2" bytes */
  uint8_t *b = malloc(2 * n + 1);
  assert_non_null(b);
  for (size_t i = 0; i < n; i++) b[2 * i] = (uint8_t)t[i], b[2 * i + 1] = (uint8_t)(t[i] >> 8);
  uint8_t d[SHA256_LEN];
  sha256_buf(b, 2 * n, d);
  sha256_hex(d, hex);
  free(b);
}

/* Run one golden "run" (rank, world, batches) against a loader. */
static void check_run(token_loader *L, json_t *run, uint64_t global, int seq, int accum) {
  int rank = (int)json_integer_value(json_object_get(run, "rank"));
  int world = (int)json_integer_value(json_object_get(run, "world"));
  json_t *bs = json_object_get(run, "batches");
  size_t local = global / (size_t)(world * accum);
  uint16_t *x = malloc(local * 2), *y = malloc(local * 2);
  assert_true(x && y);
  for (size_t i = 0; i < json_array_size(bs); i++) {
    json_t *b = json_array_get(bs, i);
    pg_error err;
    if (loader_next_batch(L, global, seq, accum, rank, world, x, y, &err))
      fail_msg("batch %zu: %s", i, err.msg);
    assert_int_equal(json_integer_value(json_object_get(b, "rows")), local / (size_t)seq);
    json_t *xf = json_object_get(b, "x_first"), *yf = json_object_get(b, "y_first");
    for (size_t k = 0; k < json_array_size(xf); k++) {
      assert_int_equal(x[k], json_integer_value(json_array_get(xf, k)));
      assert_int_equal(y[k], json_integer_value(json_array_get(yf, k)));
    }
    char hx[SHA256_HEX_LEN + 1], hy[SHA256_HEX_LEN + 1];
    sha_hex_of(x, local, hx);
    sha_hex_of(y, local, hy);
    assert_string_equal(hx, json_string_value(json_object_get(b, "x_sha256")));
    assert_string_equal(hy, json_string_value(json_object_get(b, "y_sha256")));
  }
  json_t *es = json_object_get(run, "end_state");
  loader_state st;
  loader_get_state(L, &st);
  assert_int_equal(st.file_idx, json_integer_value(json_object_get(es, "file_idx")));
  assert_int_equal(st.pos, json_integer_value(json_object_get(es, "pos")));
  assert_int_equal(st.consumed,
                   json_array_size(bs) * (size_t)world * (local + 1));
  free(x);
  free(y);
}

static void test_demo_matches_official(void **state) {
  (void)state;
  json_t *g = load_golden();
  json_t *demo = json_object_get(g, "demo");
  uint64_t global = (uint64_t)json_integer_value(json_object_get(demo, "global_tokens"));
  int seq = (int)json_integer_value(json_object_get(demo, "seq_len"));
  int accum = (int)json_integer_value(json_object_get(demo, "grad_accum"));
  json_t *runs = json_object_get(demo, "runs");
  assert_int_equal(json_array_size(runs), 3);
  for (size_t r = 0; r < json_array_size(runs); r++) {
    token_loader L;
    pg_error err;
    char *paths[] = {DEMO_TRAIN};
    if (loader_open_paths(&L, paths, 1, 1024, &err)) fail_msg("%s", err.msg);
    check_run(&L, json_array_get(runs, r), global, seq, accum);
    loader_close(&L);
  }
  json_decref(g);
}

/* The shards of the golden "wrap" case, written into dir. */
static void write_wrap_shards(const char *dir, json_t *sizes) {
  for (size_t f = 0; f < json_array_size(sizes); f++) {
    size_t n = (size_t)json_integer_value(json_array_get(sizes, f));
    size_t len = SHARD_HEADER_BYTES + 2 * n;
    uint8_t *b = calloc(1, len);
    assert_non_null(b);
    uint32_t head[3] = {SHARD_MAGIC, SHARD_VERSION, (uint32_t)n};
    for (int k = 0; k < 3; k++)
      for (int j = 0; j < 4; j++) b[4 * k + j] = (uint8_t)(head[k] >> (8 * j));
    for (size_t j = 0; j < n; j++) {
      uint16_t t = (uint16_t)((j * 31 + f * 7) % 1024);
      b[SHARD_HEADER_BYTES + 2 * j] = (uint8_t)t;
      b[SHARD_HEADER_BYTES + 2 * j + 1] = (uint8_t)(t >> 8);
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/fineweb_train_%06zu.bin", dir, f);
    test_write_file(path, b, len);
    free(b);
  }
}

static void test_wraparound_matches_official(void **state) {
  (void)state;
  json_t *g = load_golden();
  json_t *w = json_object_get(g, "wrap");
  char *dir = test_tmpdir();
  write_wrap_shards(dir, json_object_get(w, "shard_sizes"));
  /* a file that must not be picked up: wrong prefix */
  char other[1024];
  snprintf(other, sizeof other, "%s/fineweb_val_000000.bin", dir);
  test_write_file(other, "junk", 4);
  uint64_t global = (uint64_t)json_integer_value(json_object_get(w, "global_tokens"));
  int seq = (int)json_integer_value(json_object_get(w, "seq_len"));
  int accum = (int)json_integer_value(json_object_get(w, "grad_accum"));
  json_t *runs = json_object_get(w, "runs");
  for (size_t r = 0; r < json_array_size(runs); r++) {
    token_loader L;
    pg_error err;
    if (loader_open(&L, dir, "fineweb_train_", 1024, &err)) fail_msg("%s", err.msg);
    assert_int_equal(L.n_shards, 4);
    assert_int_equal(L.total_tokens, 1000 + 777 + 1500);
    check_run(&L, json_array_get(runs, r), global, seq, accum);
    loader_close(&L);
  }
  test_rmdir(dir);
  json_decref(g);
}

/* Saving the state after k batches and restoring it into a fresh loader
 * continues with exactly the batches an uninterrupted loader gives. */
static void test_resume_is_exact(void **state) {
  (void)state;
  json_t *g = load_golden();
  char *dir = test_tmpdir();
  write_wrap_shards(dir, json_object_get(json_object_get(g, "wrap"), "shard_sizes"));
  enum { LOCAL = 48, SEQ = 16, ACCUM = 2, WORLD = 2, N = 40 };
  uint64_t global = LOCAL * ACCUM * WORLD;
  uint16_t xa[LOCAL], ya[LOCAL], xb[LOCAL], yb[LOCAL];
  for (int cut = 0; cut < N; cut += 7) {
    token_loader A, B;
    pg_error err;
    assert_int_equal(loader_open(&A, dir, "fineweb_train_", 1024, &err), 0);
    assert_int_equal(loader_open(&B, dir, "fineweb_train_", 1024, &err), 0);
    for (int i = 0; i < cut; i++)
      assert_int_equal(loader_next_batch(&A, global, SEQ, ACCUM, 1, WORLD, xa, ya, &err), 0);
    loader_state s;
    loader_get_state(&A, &s);
    assert_int_equal(loader_set_state(&B, &s, &err), 0);
    for (int i = cut; i < N; i++) {
      assert_int_equal(loader_next_batch(&A, global, SEQ, ACCUM, 1, WORLD, xa, ya, &err), 0);
      assert_int_equal(loader_next_batch(&B, global, SEQ, ACCUM, 1, WORLD, xb, yb, &err), 0);
      assert_memory_equal(xa, xb, sizeof xa);
      assert_memory_equal(ya, yb, sizeof ya);
    }
    loader_state sa, sb;
    loader_get_state(&A, &sa);
    loader_get_state(&B, &sb);
    assert_memory_equal(&sa, &sb, sizeof sa);
    loader_close(&A);
    loader_close(&B);
  }
  test_rmdir(dir);
  json_decref(g);
}

/* The lazy file switch: taking exactly a whole file leaves the stream at
 * the end of that file, not at the start of the next. */
static void test_lazy_file_switch(void **state) {
  (void)state;
  json_t *g = load_golden();
  char *dir = test_tmpdir();
  write_wrap_shards(dir, json_object_get(json_object_get(g, "wrap"), "shard_sizes"));
  token_loader L;
  pg_error err;
  assert_int_equal(loader_open(&L, dir, "fineweb_train_", 1024, &err), 0);
  uint16_t *buf = malloc(4000 * 2);
  assert_non_null(buf);
  assert_int_equal(loader_take(&L, 1000, buf, &err), 0);
  assert_int_equal(L.st.file_idx, 0);
  assert_int_equal(L.st.pos, 1000);
  assert_int_equal(loader_take(&L, 1, buf, &err), 0);
  /* skipped the empty shard 1: now in shard 2, token 0 = 2*7 */
  assert_int_equal(L.st.file_idx, 2);
  assert_int_equal(L.st.pos, 1);
  assert_int_equal(buf[0], 14);
  /* 776 + 1500 more ends shard 3; one more wraps to shard 0 token 0 */
  assert_int_equal(loader_take(&L, 776 + 1500, buf, &err), 0);
  assert_int_equal(L.st.file_idx, 3);
  assert_int_equal(buf[776 + 1499], (1499 * 31 + 21) % 1024);
  assert_int_equal(loader_take(&L, 2, buf, &err), 0);
  assert_int_equal(L.st.file_idx, 0);
  assert_int_equal(buf[0], 0);
  assert_int_equal(buf[1], 31);
  assert_int_equal(L.st.consumed, 1000 + 1 + 776 + 1500 + 2);
  free(buf);
  loader_close(&L);
  test_rmdir(dir);
  json_decref(g);
}

static void expect_shape_error(uint64_t global, int seq, int accum, int rank, int world,
                               const char *needle) {
  loader_batch_shape sh;
  pg_error err;
  assert_int_equal(loader_batch_shape_for(global, seq, accum, rank, world, &sh, &err), -1);
  if (!strstr(err.msg, needle)) fail_msg("'%s' does not mention '%s'", err.msg, needle);
}

static void test_argument_checks(void **state) {
  (void)state;
  loader_batch_shape sh;
  assert_int_equal(loader_batch_shape_for(524288, 1024, 8, 0, 1, &sh, NULL), 0);
  assert_int_equal(sh.local_tokens, 65536);
  assert_int_equal(sh.rows, 64);
  assert_int_equal(sh.chunk_tokens, 65537);
  assert_int_equal(loader_batch_shape_for(524288, 1024, 1, 7, 8, &sh, NULL), 0);
  assert_int_equal(sh.chunk_tokens, 8 * 65537);
  /* integer division as the official loader: 4100/(1*8) = 512 */
  assert_int_equal(loader_batch_shape_for(4100, 128, 8, 0, 1, &sh, NULL), 0);
  assert_int_equal(sh.local_tokens, 512);
  expect_shape_error(4096, 100, 8, 0, 1, "not a multiple of seq_len 100");
  expect_shape_error(7, 1, 8, 0, 1, "no tokens per rank");
  expect_shape_error(4096, 128, 8, 2, 2, "rank 2 is outside world size 2");
  expect_shape_error(4096, 128, 8, -1, 2, "rank -1");
  expect_shape_error(4096, 128, 0, 0, 1, "grad_accum_steps must be >= 1");
  expect_shape_error(4096, 0, 1, 0, 1, "seq_len must be >= 1");
  expect_shape_error(4096, 128, 1, 0, 0, "world size must be >= 1");
}

static void test_bad_state_and_inputs(void **state) {
  (void)state;
  token_loader L;
  pg_error err;
  char *paths[] = {DEMO_TRAIN};
  assert_int_equal(loader_open_paths(&L, paths, 1, 1024, &err), 0);
  loader_state s = {.file_idx = 1, .pos = 0, .consumed = 0};
  assert_int_equal(loader_set_state(&L, &s, &err), -1);
  assert_non_null(strstr(err.msg, "file index 1, but only 1 shards"));
  s = (loader_state){.file_idx = 0, .pos = L.shards[0].n_tokens + 1};
  assert_int_equal(loader_set_state(&L, &s, &err), -1);
  assert_non_null(strstr(err.msg, "past the shard"));
  s.pos = L.shards[0].n_tokens; /* the end of the file is a valid state */
  assert_int_equal(loader_set_state(&L, &s, &err), 0);
  loader_close(&L);

  char *dir = test_tmpdir();
  assert_int_equal(loader_open(&L, dir, "fineweb_train_", 0, &err), -1);
  assert_non_null(strstr(err.msg, "no shards match"));
  /* only empty shards: the official stream would spin forever */
  uint8_t head[SHARD_HEADER_BYTES] = {0x88, 0xd8, 0x34, 0x01, 1};
  char p[1024];
  snprintf(p, sizeof p, "%s/fineweb_train_000000.bin", dir);
  test_write_file(p, head, sizeof head);
  assert_int_equal(loader_open(&L, dir, "fineweb_train_", 0, &err), -1);
  assert_non_null(strstr(err.msg, "all 1 shards are empty"));
  /* a corrupt shard names the file */
  snprintf(p, sizeof p, "%s/fineweb_train_000001.bin", dir);
  test_write_file(p, "short", 5);
  assert_int_equal(loader_open(&L, dir, "fineweb_train_", 0, &err), -1);
  assert_non_null(strstr(err.file, "fineweb_train_000001.bin"));
  test_rmdir(dir);
}

/* Ids are checked against the vocabulary when taken, with the file and
 * byte offset of the first bad one, and the stream does not move. */
static void test_vocab_check_on_take(void **state) {
  (void)state;
  token_loader L;
  pg_error err;
  char *paths[] = {DEMO_TRAIN};
  assert_int_equal(loader_open_paths(&L, paths, 1, 1024, &err), 0);
  uint16_t buf[64];
  assert_int_equal(loader_take(&L, 64, buf, &err), 0);
  uint16_t mx = 0, first_big = 0;
  for (int i = 0; i < 64; i++) mx = buf[i] > mx ? buf[i] : mx;
  loader_close(&L);
  /* a vocabulary just below the largest id in the first 64 tokens */
  assert_int_equal(loader_open_paths(&L, paths, 1, mx, &err), 0);
  int idx = 0;
  while (buf[idx] < mx) idx++;
  first_big = buf[idx];
  assert_int_equal(loader_take(&L, 64, buf, &err), -1);
  assert_int_equal(err.pos, SHARD_HEADER_BYTES + 2 * idx);
  assert_non_null(strstr(err.file, "fineweb_train_000000.bin"));
  char want[64];
  snprintf(want, sizeof want, "token %u at index %d", first_big, idx);
  assert_non_null(strstr(err.msg, want));
  assert_int_equal(L.st.pos, 0);
  assert_int_equal(L.st.consumed, 0);
  loader_close(&L);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_demo_matches_official),
      cmocka_unit_test(test_wraparound_matches_official),
      cmocka_unit_test(test_resume_is_exact),
      cmocka_unit_test(test_lazy_file_switch),
      cmocka_unit_test(test_argument_checks),
      cmocka_unit_test(test_bad_state_and_inputs),
      cmocka_unit_test(test_vocab_check_on_take),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
