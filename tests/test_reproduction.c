/* Fresh seeds (recomputable from the folder and the salt, independent of
 * the submitter) and REPRODUCTION_GAP (claimed against replayed). */
#include "tests/test_util.h"

#include <math.h>
#include <sys/stat.h>

#include "verifier/reproduction.h"

static void write_text(const char *dir, const char *rel, const char *text) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", dir, rel);
  test_write_file(p, text, strlen(text));
}

static char *folder(void) {
  char *d = test_tmpdir();
  char sub[1024];
  snprintf(sub, sizeof sub, "%s/logs", d);
  assert_int_equal(mkdir(sub, 0755), 0);
  write_text(d, "train_gpt.py", "print('hello')\n");
  write_text(d, "README.md", "# a record\n");
  write_text(d, "logs/seed1337.txt", "step:1/2 train_loss:6.9\n");
  return d;
}

/* The digest is what sha256sum gives over the sorted files (an
 * independent computation through the shell). */
static void test_digest_is_sha256sum_of_sorted_files(void **state) {
  (void)state;
  char *d = folder();
  uint32_t s[3];
  char hex[SHA256_HEX_LEN + 1];
  pg_error err;
  assert_int_equal(fresh_seeds(d, "maintainer-salt", 3, s, hex, &err), 0);
  char cmd[2048], want[80] = {0};
  snprintf(cmd, sizeof cmd,
           "cd '%s' && find . -type f | sed 's|^\\./||' | LC_ALL=C sort | xargs sha256sum | "
           "sha256sum | cut -c1-64", d);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  assert_non_null(fgets(want, sizeof want, p));
  pclose(p);
  want[strcspn(want, "\n")] = 0;
  assert_string_equal(hex, want);
  test_rmdir(d);
}

static void test_seeds_depend_on_folder_and_salt(void **state) {
  (void)state;
  char *d = folder();
  uint32_t a[8], b[8], c[8], e[8];
  char h1[65], h2[65];
  pg_error err;
  assert_int_equal(fresh_seeds(d, "salt-1", 8, a, h1, &err), 0);
  assert_int_equal(fresh_seeds(d, "salt-1", 8, b, h1, &err), 0);
  assert_memory_equal(a, b, sizeof a); /* recomputable */
  for (int i = 0; i < 8; i++) {
    assert_true(a[i] < 0x80000000u);
    for (int j = 0; j < i; j++) assert_true(a[i] != a[j]);
  }
  assert_int_equal(fresh_seeds(d, "salt-2", 8, c, h1, &err), 0);
  assert_memory_not_equal(a, c, sizeof a);
  write_text(d, "train_gpt.py", "print('hello!')\n"); /* one byte more */
  assert_int_equal(fresh_seeds(d, "salt-1", 8, e, h2, &err), 0);
  assert_string_not_equal(h1, h2);
  assert_memory_not_equal(a, e, sizeof a);
  /* The first seeds do not depend on how many are asked for. */
  uint32_t two[2];
  assert_int_equal(fresh_seeds(d, "salt-1", 2, two, h2, &err), 0);
  assert_memory_equal(two, e, sizeof two);
  test_rmdir(d);
}

static void test_seed_errors(void **state) {
  (void)state;
  char *d = folder();
  uint32_t s[FRESH_SEEDS_MAX + 1];
  char h[65];
  pg_error err;
  assert_int_equal(fresh_seeds(d, "x", 0, s, h, &err), -1);
  assert_int_equal(fresh_seeds(d, "x", FRESH_SEEDS_MAX + 1, s, h, &err), -1);
  assert_int_equal(fresh_seeds(d, "", 3, s, h, &err), -1);
  assert_non_null(strstr(err.msg, "salt"));
  assert_int_equal(fresh_seeds("/nonexistent/folder", "x", 3, s, h, &err), -1);
  assert_string_equal(err.file, "/nonexistent/folder");
  test_rmdir(d);
}

/* The maintainers' rerun of a record claimed at 1.1502 gave 1.1864: three
 * claimed seeds around the claim against that one rerun. */
static void test_gap_one_rerun(void **state) {
  (void)state;
  const double claimed[] = {1.1497, 1.1502, 1.1507}, rerun = 1.1864, close = 1.1504;
  repro_result r;
  pg_error err;
  assert_int_equal(reproduction_test(claimed, 3, &rerun, 1, 0.01, &r, &err), 0);
  assert_string_equal(r.test, "one-sample");
  assert_true(r.testable && r.gap_significant && r.p < 1e-4);
  assert_true(fabs(r.gap - (1.1864 - 1.1502)) < 1e-12);
  assert_int_equal(reproduction_test(claimed, 3, &close, 1, 0.01, &r, &err), 0);
  assert_false(r.gap_significant);
  assert_true(r.p > 0.25);
}

/* p against a known quantile: claims {1, 2, 3} (mean 2, sd 1) and a rerun
 * at 2 + t/sqrt(3) with t = 2.919986, the 0.95 quantile of t with 2 df:
 * the one-sided p is 0.05. */
static void test_gap_p_matches_t_quantile(void **state) {
  (void)state;
  const double claimed[] = {1.0, 2.0, 3.0};
  double rerun = 2.0 + 2.919986 / sqrt(3.0);
  repro_result r;
  pg_error err;
  assert_int_equal(reproduction_test(claimed, 3, &rerun, 1, 0.01, &r, &err), 0);
  assert_true(fabs(r.p - 0.05) < 1e-5);
  assert_true(fabs(r.df - 2.0) < 1e-12);
  /* The same with the sides swapped in shape: one claim, three reruns. */
  const double reruns[] = {1.0, 2.0, 3.0};
  double claim = 2.0 - 2.919986 / sqrt(3.0);
  assert_int_equal(reproduction_test(&claim, 1, reruns, 3, 0.01, &r, &err), 0);
  assert_true(fabs(r.p - 0.05) < 1e-5);
  assert_true(r.gap > 0);
}

static void test_gap_welch_and_untestable(void **state) {
  (void)state;
  /* Claimed 1.08972 on average; reruns around 1.09215. */
  const double claimed[] = {1.08950, 1.08972, 1.08994}, reruns[] = {1.09200, 1.09215, 1.09230};
  repro_result r;
  pg_error err;
  assert_int_equal(reproduction_test(claimed, 3, reruns, 3, 0.01, &r, &err), 0);
  assert_string_equal(r.test, "welch");
  assert_true(r.gap_significant);
  /* Reruns better than the claims: no gap. */
  assert_int_equal(reproduction_test(reruns, 3, claimed, 3, 0.01, &r, &err), 0);
  assert_false(r.gap_significant);
  assert_true(r.p > 0.99);
  /* One run each: the gap, no test. */
  assert_int_equal(reproduction_test(claimed, 1, reruns, 1, 0.01, &r, &err), 0);
  assert_false(r.testable);
  assert_string_equal(r.test, "none");
  assert_true(isnan(r.p));
  double bad = NAN;
  assert_int_equal(reproduction_test(claimed, 3, &bad, 1, 0.01, &r, &err), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_digest_is_sha256sum_of_sorted_files),
      cmocka_unit_test(test_seeds_depend_on_folder_and_salt),
      cmocka_unit_test(test_seed_errors),
      cmocka_unit_test(test_gap_one_rerun),
      cmocka_unit_test(test_gap_p_matches_t_quantile),
      cmocka_unit_test(test_gap_welch_and_untestable),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
