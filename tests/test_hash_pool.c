/* The hashing pool: digests of known contents (FIPS 180-2 examples and the
 * empty string), input order kept with many files and many threads, and
 * per-file errors that do not stop the other files. */
#include "tests/test_util.h"

#include "common/hash_pool.h"

static const char *EMPTY_HEX = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
static const char *ABC_HEX = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
/* one million 'a' (FIPS 180-2 appendix B.3): crosses the 1 MiB read chunk */
static const char *MILLION_A_HEX =
    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

static void path_in(char *out, size_t cap, const char *dir, const char *name) {
  snprintf(out, cap, "%s/%s", dir, name);
}

static void assert_hex(const hash_result *r, const char *hex) {
  char got[SHA256_HEX_LEN + 1];
  assert_int_equal(r->failed, 0);
  sha256_hex(r->digest, got);
  assert_string_equal(got, hex);
}

static void test_known_digests(void **state) {
  (void)state;
  char *dir = test_tmpdir();
  char p[3][1024];
  path_in(p[0], sizeof p[0], dir, "empty");
  path_in(p[1], sizeof p[1], dir, "abc");
  path_in(p[2], sizeof p[2], dir, "million");
  test_write_file(p[0], "", 0);
  test_write_file(p[1], "abc", 3);
  char *m = malloc(1000000);
  assert_non_null(m);
  memset(m, 'a', 1000000);
  test_write_file(p[2], m, 1000000);
  free(m);
  const char *paths[3] = {p[0], p[1], p[2]};
  hash_result r[3];
  for (int jobs = 1; jobs <= 3; jobs++) {
    assert_int_equal(hash_pool_run(paths, 3, jobs, r), 0);
    assert_hex(&r[0], EMPTY_HEX);
    assert_int_equal(r[0].size, 0);
    assert_hex(&r[1], ABC_HEX);
    assert_int_equal(r[1].size, 3);
    assert_hex(&r[2], MILLION_A_HEX);
    assert_int_equal(r[2].size, 1000000);
  }
  test_rmdir(dir);
}

/* File i holds i bytes of value i, so every result identifies its file.
 * Sizes vary so that workers finish out of order. */
static void test_order_many_files(void **state) {
  (void)state;
  enum { N = 97 };
  char *dir = test_tmpdir();
  char *paths[N];
  uint8_t want[N][SHA256_LEN];
  uint8_t *buf = malloc(N * 3001);
  assert_non_null(buf);
  for (int i = 0; i < N; i++) {
    char name[32];
    snprintf(name, sizeof name, "f%02d", i);
    paths[i] = malloc(1024);
    path_in(paths[i], 1024, dir, name);
    size_t len = (size_t)(N - i) * 3001; /* the first files are the largest */
    memset(buf, i, len);
    test_write_file(paths[i], buf, len);
    sha256_buf(buf, len, want[i]);
  }
  free(buf);
  hash_result *r = calloc(N, sizeof *r);
  const int jobs[] = {0, 1, 2, 7, 64, 1024};
  for (size_t j = 0; j < sizeof jobs / sizeof jobs[0]; j++) {
    memset(r, 0xa5, N * sizeof *r);
    assert_int_equal(hash_pool_run((const char *const *)paths, N, jobs[j], r), 0);
    for (int i = 0; i < N; i++) {
      assert_int_equal(r[i].failed, 0);
      assert_memory_equal(r[i].digest, want[i], SHA256_LEN);
    }
  }
  free(r);
  for (int i = 0; i < N; i++) free(paths[i]);
  test_rmdir(dir);
}

static void test_missing_file_is_reported(void **state) {
  (void)state;
  char *dir = test_tmpdir();
  char a[1024], missing[1024], b[1024];
  path_in(a, sizeof a, dir, "a");
  path_in(missing, sizeof missing, dir, "missing");
  path_in(b, sizeof b, dir, "b");
  test_write_file(a, "abc", 3);
  test_write_file(b, "", 0);
  const char *paths[4] = {a, missing, b, dir};
  hash_result r[4];
  assert_int_equal(hash_pool_run(paths, 4, 4, r), 2);
  assert_hex(&r[0], ABC_HEX);
  assert_int_equal(r[1].failed, 1);
  assert_string_equal(r[1].err.file, missing);
  assert_non_null(strstr(r[1].err.msg, "No such file"));
  assert_hex(&r[2], EMPTY_HEX);
  assert_int_equal(r[3].failed, 1); /* a directory opens but cannot be read */
  assert_string_equal(r[3].err.file, dir);
  test_rmdir(dir);
}

static void test_default_jobs(void **state) {
  (void)state;
  assert_int_equal(hash_pool_default_jobs(1), 1);
  assert_int_equal(hash_pool_default_jobs(0), 1);
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int want = cpus < 1 ? 1 : cpus > 1000 ? 1000 : (int)cpus;
  assert_int_equal(hash_pool_default_jobs(1000), want);
  assert_int_equal(hash_pool_run(NULL, 0, 4, NULL), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_known_digests),
      cmocka_unit_test(test_order_many_files),
      cmocka_unit_test(test_missing_file_is_reported),
      cmocka_unit_test(test_default_jobs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
