/* Myers' diff: the edit count equals na + nb - 2 LCS (checked against a
 * dynamic-programming LCS on random sequences), the hunks rebuild b from
 * a, and the bound is honoured. */
#include "tests/test_util.h"

#include "verifier/seq_diff.h"

static size_t lcs(const uint64_t *a, size_t na, const uint64_t *b, size_t nb) {
  size_t *t = calloc((na + 1) * (nb + 1), sizeof *t);
  for (size_t i = 1; i <= na; i++)
    for (size_t j = 1; j <= nb; j++) {
      size_t *c = &t[i * (nb + 1) + j];
      if (a[i - 1] == b[j - 1]) *c = t[(i - 1) * (nb + 1) + j - 1] + 1;
      else *c = t[(i - 1) * (nb + 1) + j] > t[i * (nb + 1) + j - 1] ? t[(i - 1) * (nb + 1) + j]
                                                                    : t[i * (nb + 1) + j - 1];
    }
  size_t r = t[na * (nb + 1) + nb];
  free(t);
  return r;
}

static void test_random_against_lcs(void **st) {
  (void)st;
  srand(7);
  for (int round = 0; round < 300; round++) {
    size_t na = (size_t)(rand() % 30), nb = (size_t)(rand() % 30);
    uint64_t a[30], b[30];
    for (size_t i = 0; i < na; i++) a[i] = (uint64_t)(rand() % 4);
    for (size_t i = 0; i < nb; i++) b[i] = (uint64_t)(rand() % 4);
    diff_hunk *h;
    size_t n, d;
    assert_int_equal(seq_diff(a, na, b, nb, 100, &h, &n, &d), 0);
    assert_int_equal(d, na + nb - 2 * lcs(a, na, b, nb));
    /* Rebuild b: equal runs from a between hunks, b's side of each hunk. */
    uint64_t r[60];
    size_t k = 0, ia = 0;
    for (size_t i = 0; i < n; i++) {
      assert_true(h[i].a0 >= ia);
      while (ia < h[i].a0) r[k++] = a[ia++];
      for (size_t j = h[i].b0; j < h[i].b1; j++) r[k++] = b[j];
      ia = h[i].a1;
    }
    while (ia < na) r[k++] = a[ia++];
    assert_int_equal(k, nb);
    if (nb) assert_memory_equal(r, b, nb * sizeof *b);
    free(h);
  }
}

static void test_bound(void **st) {
  (void)st;
  uint64_t a[50], b[50];
  for (int i = 0; i < 50; i++) a[i] = (uint64_t)i, b[i] = (uint64_t)(i + 100);
  diff_hunk *h;
  size_t n, d;
  assert_int_equal(seq_diff(a, 50, b, 50, 20, &h, &n, &d), 1);
  assert_null(h);
  assert_int_equal(d, 21);
  assert_int_equal(seq_diff(a, 50, a, 50, 0, &h, &n, &d), 0);
  assert_int_equal(d, 0);
  assert_int_equal(n, 0);
  free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_random_against_lcs),
                                     cmocka_unit_test(test_bound)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
