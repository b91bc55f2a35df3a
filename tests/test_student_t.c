/* Student's t against scipy's golden values (golden/student_t.json): relative
 * error of sf and cdf at most 1e-9 wherever p > 1e-300, agreement on
 * "underflows" below that, and quantiles to 1e-9. */
#include "tests/test_util.h"

#include <float.h>
#include <jansson.h>
#include <math.h>

#include "verifier/incomplete_beta.h"
#include "verifier/student_t.h"

#define GOLDEN "golden/student_t.json"
#define REL_TOL 1e-9
#define TINY_P 1e-300

static json_t *golden;

static int load_golden(void **state) {
  (void)state;
  json_error_t je;
  golden = json_load_file(GOLDEN, 0, &je);
  if (!golden) fprintf(stderr, "%s:%d: %s\n", GOLDEN, je.line, je.text);
  return golden ? 0 : -1;
}

static int free_golden(void **state) {
  (void)state;
  json_decref(golden);
  return 0;
}

static double num(json_t *obj, const char *key) {
  const char *s = json_string_value(json_object_get(obj, key));
  assert_non_null(s);
  char *end;
  double v = strtod(s, &end);
  assert_true(end != s && *end == 0);
  return v;
}

static double rel_err(double got, double want) {
  if (got == want) return 0;
  return fabs(got - want) / fabs(want);
}

/* 1 when got agrees with the golden want: relative error <= tol where want
 * is above TINY_P; below it (or exactly 0) both must be that small. */
static int p_matches(double got, double want, double tol) {
  if (isnan(got)) return 0;
  if (want <= TINY_P) return got <= TINY_P && got >= 0;
  return rel_err(got, want) <= tol;
}

/* Every golden sf and cdf; also prints the worst relative error seen. */
static void test_golden_sf_cdf(void **state) {
  (void)state;
  json_t *cases = json_object_get(golden, "distribution");
  assert_true(json_array_size(cases) > 600);
  double worst = 0;
  size_t i, bad = 0, tiny = 0;
  json_t *c;
  json_array_foreach(cases, i, c) {
    double df = num(c, "df"), t = num(c, "t");
    double want[2] = {num(c, "sf"), num(c, "cdf")};
    double got[2] = {student_t_sf(t, df), student_t_cdf(t, df)};
    for (int k = 0; k < 2; k++) {
      if (!p_matches(got[k], want[k], REL_TOL)) {
        bad++;
        fprintf(stderr, "df=%.17g t=%.17g %s: got %.17g want %.17g\n", df, t, k ? "cdf" : "sf",
                got[k], want[k]);
      }
      if (want[k] > TINY_P && rel_err(got[k], want[k]) > worst) worst = rel_err(got[k], want[k]);
      if (want[k] <= TINY_P) tiny++;
    }
  }
  printf("student_t: %zu sf/cdf values, %zu below 1e-300, max relative error %.3g\n",
         2 * json_array_size(cases), tiny, worst);
  assert_int_equal(bad, 0);
}

static void test_golden_quantiles(void **state) {
  (void)state;
  json_t *cases = json_object_get(golden, "quantiles");
  assert_true(json_array_size(cases) > 100);
  double worst = 0;
  size_t i, bad = 0;
  json_t *c;
  json_array_foreach(cases, i, c) {
    double df = num(c, "df"), p = num(c, "p"), want = num(c, "isf");
    double got = student_t_isf(p, df);
    double e = want == 0 ? fabs(got) : rel_err(got, want);
    if (e > worst) worst = e;
    if (!(e <= REL_TOL)) {
      bad++;
      fprintf(stderr, "isf df=%.17g p=%.17g: got %.17g want %.17g\n", df, p, got, want);
    }
  }
  printf("student_t: %zu quantiles, max relative error %.3g\n", json_array_size(cases), worst);
  assert_int_equal(bad, 0);
}

/* The comparison must be able to fail: a golden value nudged by 1e-8
 * relative, or a tail reported as 1 - (near 1), is rejected. */
static void test_comparison_rejects_perturbed(void **state) {
  (void)state;
  double want = student_t_sf(30, 10000); /* ~1e-190, deep tail */
  assert_true(want > TINY_P && want < 1e-100);
  assert_true(p_matches(want, want, REL_TOL));
  assert_false(p_matches(want * (1 + 1e-8), want, REL_TOL));
  assert_false(p_matches(want * (1 - 1e-8), want, REL_TOL));
  assert_false(p_matches(0, want, REL_TOL));
  assert_false(p_matches(NAN, want, REL_TOL));
  assert_false(p_matches(1e-290, 0, REL_TOL));
  assert_true(p_matches(0, 0, REL_TOL));
  /* The naive complement of the cdf loses the tail entirely. */
  assert_false(p_matches(1 - student_t_cdf(10, 30), student_t_sf(10, 30), REL_TOL));
}

/* Closed forms: df = 1 is Cauchy, df = 2 has sf = (1 - t/sqrt(t^2+2))/2. */
static void test_closed_forms(void **state) {
  (void)state;
  double ts[] = {0.1, 1, 3, 30, 1e3, 1e6, 1e150, 1e200};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
    double t = ts[i];
    double cauchy = atan(1 / t) / M_PI; /* P(T > t) for t > 0 */
    assert_true(rel_err(student_t_sf(t, 1), cauchy) <= 1e-12);
    /* sf(t, 2) = (1 - t/u)/2 with u = sqrt(2+t^2), rewritten as 1/(u(u+t)): no cancellation */
    double u = sqrt(2 + t * t);
    if (isfinite(u * (u + t)))
      assert_true(rel_err(student_t_sf(t, 2), 1 / (u * (u + t))) <= 1e-12);
  }
}

static void test_symmetry_and_edges(void **state) {
  (void)state;
  assert_true(student_t_sf(0, 3.7) == 0.5);
  assert_true(student_t_cdf(INFINITY, 3) == 1 && student_t_sf(INFINITY, 3) == 0);
  assert_true(student_t_sf(-INFINITY, 3) == 1);
  assert_true(isnan(student_t_sf(NAN, 3)) && isnan(student_t_sf(1, 0)));
  assert_true(isnan(student_t_sf(1, -2)) && isnan(student_t_isf(1.5, 3)));
  assert_true(student_t_isf(0, 3) == INFINITY && student_t_isf(1, 3) == -INFINITY);
  for (double t = -7; t <= 7; t += 0.75) {
    assert_true(rel_err(student_t_sf(t, 4.2), student_t_cdf(-t, 4.2)) <= 1e-15);
    assert_true(fabs(student_t_sf(t, 4.2) + student_t_cdf(t, 4.2) - 1) <= 4 * DBL_EPSILON);
  }
  /* Normal limit. */
  assert_true(rel_err(student_t_sf(3, INFINITY), 0.5 * erfc(3 / M_SQRT2)) <= 1e-15);
  assert_true(rel_err(student_t_sf(3, 1e12), student_t_sf(3, INFINITY)) <= 1e-9);
}

/* isf inverts sf across heavy and light tails. */
static void test_isf_roundtrip(void **state) {
  (void)state;
  double dfs[] = {0.5, 1, 2.5, 9, 1e3, 1e7};
  double ps[] = {0.4, 0.05, 0.01, 1e-5, 1e-15, 1e-100, 0.95};
  for (size_t i = 0; i < sizeof dfs / sizeof dfs[0]; i++)
    for (size_t j = 0; j < sizeof ps / sizeof ps[0]; j++) {
      double t = student_t_isf(ps[j], dfs[i]);
      assert_true(isfinite(t));
      assert_true(rel_err(student_t_sf(t, dfs[i]), ps[j]) <= 1e-12);
    }
}

/* Beyond the golden grid: huge df converges (and matches the normal
 * limit's trend), and log_beta stays accurate where lgamma would cancel. */
static void test_huge_df_and_log_beta(void **state) {
  (void)state;
  double lb = log_beta(2.5e9, 0.5); /* ~ lgamma(1/2) - ln(a)/2 */
  double a = 2.5e9, approx = lgamma(0.5) - 0.5 * log(a) - 0.5 * 0.5 * (0.5 - 1) / a;
  assert_true(fabs(lb - approx) <= 1e-14);
  assert_true(fabs(log_beta(3, 4) - log(1.0 / 60)) <= 1e-15);
  double s = student_t_sf(5, 1e10), n = 0.5 * erfc(5 / M_SQRT2);
  assert_true(s > n && rel_err(s, n) < 1e-7);
  assert_true(rel_err(incbeta_lower(2, 3, beta_point_of(0.25)), 0.26171875) <= 1e-15);
  assert_true(rel_err(incbeta_upper(2, 3, beta_point_of(0.25)), 0.73828125) <= 1e-15);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_golden_sf_cdf),
      cmocka_unit_test(test_golden_quantiles),
      cmocka_unit_test(test_comparison_rejects_perturbed),
      cmocka_unit_test(test_closed_forms),
      cmocka_unit_test(test_symmetry_and_edges),
      cmocka_unit_test(test_isf_roundtrip),
      cmocka_unit_test(test_huge_df_and_log_beta),
  };
  return cmocka_run_group_tests(tests, load_golden, free_golden);
}
