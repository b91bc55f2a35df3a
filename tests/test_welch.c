/* Welch and one-sample margin tests: published leaderboard p-values
 * reproduced from their per-seed values, scipy cross-checks, power and
 * seeds_needed, and the input checks. Numbers are plain literals. */
#include "tests/test_util.h"

#include <math.h>

#include "verifier/noncentral_t.h"
#include "verifier/value_list.h"
#include "verifier/welch.h"

static double rel_err(double got, double want) { return fabs(got - want) / fabs(want); }

static sample_summary summary_of(const double *v, size_t n) {
  sample_summary s;
  assert_int_equal(summarize_sample(v, n, "x", &s, NULL), 0);
  return s;
}

/* records/track_10min_16mb/2026-04-09_A2_Muon097_3Seed (PR #1514, seeds
 * 0/42/1234 from its submission.json) against the record it beat,
 * records/track_10min_16mb/2026-04-09_SP8192_3LayerRecur_ParResid_QK525_LegalTTT
 * (PR #1493, seeds 42/314/999). The leaderboard README publishes p=0.020. */
static const double A2_NEW[] = {1.07928348, 1.07996676, 1.08024795};
static const double A2_REC[] = {1.08079, 1.08103, 1.08118};

/* records/track_10min_16mb/2026-04-22_SP8192_CaseOps_GatedAttn_QuantGate_Loop45_PhasedTTT_MLPClip12
 * (PR #1769, 5 seeds) against
 * records/track_10min_16mb/2026-04-19_SP8192_CaseOps_GatedAttn_QuantGate_Loop45_PhasedTTT
 * (PR #1736, 3 seeds). The leaderboard README publishes p=0.063. */
static const double CLIP_NEW[] = {1.06356801, 1.0641313, 1.06466993, 1.06509678, 1.06516558};
static const double CLIP_REC[] = {1.06610, 1.06473, 1.06563};

static void test_published_p_020(void **state) {
  (void)state;
  margin_test r;
  assert_int_equal(welch_margin_test(summary_of(A2_NEW, 3), summary_of(A2_REC, 3), 0, 0.01, &r,
                                     NULL), 0);
  assert_true(fabs(r.p_zero_margin - 0.020) < 0.0005); /* as published, 2 decimals */
  /* scipy.stats.ttest_ind(rec, new, equal_var=False, alternative="greater") */
  assert_true(rel_err(r.t, 3.788961552288752) < 1e-9);
  assert_true(rel_err(r.df, 2.614014738913333) < 1e-9);
  assert_true(rel_err(r.p_zero_margin, 0.02041677096795916) < 1e-9);
  assert_true(r.p_margin == r.p_zero_margin);
  assert_false(r.significant); /* not at alpha 0.01 */
}

static void test_published_p_063(void **state) {
  (void)state;
  margin_test r;
  assert_int_equal(welch_margin_test(summary_of(CLIP_NEW, 5), summary_of(CLIP_REC, 3), 0, 0.01,
                                     &r, NULL), 0);
  assert_true(fabs(r.p_zero_margin - 0.063) < 0.0005);
  assert_true(rel_err(r.t, 1.9092738384181722) < 1e-9);
  assert_true(rel_err(r.df, 4.227982476127837) < 1e-9);
  assert_true(rel_err(r.p_zero_margin, 0.06250171303098642) < 1e-9);
  assert_false(r.significant);
}

/* A margin shifts t by margin/se; scipy: ttest_ind(rec - 0.0005, new, ...). */
static void test_margin_and_bound(void **state) {
  (void)state;
  margin_test r;
  assert_int_equal(welch_margin_test(summary_of(A2_NEW, 3), summary_of(A2_REC, 3), 0.0005, 0.01,
                                     &r, NULL), 0);
  assert_true(rel_err(r.t, 2.165960210573811) < 1e-9);
  assert_true(rel_err(r.p_margin, 0.06604740402218301) < 1e-9);
  assert_true(rel_err(r.p_zero_margin, 0.02041677096795916) < 1e-9);
  /* diff - t.isf(0.01, df) * se */
  assert_true(rel_err(r.lower_bound, -0.00041094274114173205) < 1e-8);
  assert_true(r.lower_bound < r.diff);
}

/* Power at the observed effect is the noncentral t tail: scipy.stats.nct. */
static void test_power_noncentral(void **state) {
  (void)state;
  assert_true(fabs(noncentral_t_sf(2.5, 3.0, 1.5) - 0.28895158235312285) < 1e-10);
  assert_true(fabs(noncentral_t_sf(1.0, 0.7, 2.0) - 0.8534910754715933) < 1e-10);
  assert_true(fabs(noncentral_t_sf(6.9, 10, 3.0) - 0.016386268478473524) < 1e-10);
  margin_test r;
  assert_int_equal(welch_margin_test(summary_of(A2_NEW, 3), summary_of(A2_REC, 3), 0, 0.01, &r,
                                     NULL), 0);
  assert_true(fabs(r.power - 0.37925700870227547) < 1e-9);
}

/* seeds_needed is the smallest n per side reaching 80% power, and none
 * when the effect does not exceed the margin. */
static void test_seeds_needed(void **state) {
  (void)state;
  margin_test r;
  sample_summary a = summary_of(A2_NEW, 3), b = summary_of(A2_REC, 3);
  assert_int_equal(welch_margin_test(a, b, 0, 0.01, &r, NULL), 0);
  assert_true(r.seeds_needed >= 2);
  long n = r.seeds_needed;
  /* With n per side the same observed means and sds reach 80%, with n-1 not. */
  sample_summary an = {n, a.mean, a.sd}, bn = {n, b.mean, b.sd};
  margin_test rn;
  assert_int_equal(welch_margin_test(an, bn, 0, 0.01, &rn, NULL), 0);
  assert_true(rn.power >= 0.8);
  an.n = bn.n = n - 1;
  if (n - 1 >= 2) {
    assert_int_equal(welch_margin_test(an, bn, 0, 0.01, &rn, NULL), 0);
    assert_true(rn.power < 0.8);
  }
  assert_int_equal(welch_margin_test(a, b, 0.002, 0.01, &r, NULL), 0);
  assert_int_equal(r.seeds_needed, -1);
}

/* One sample against a target: scipy ttest_1samp(new, 1.0815 - 0.0002, "less"). */
static void test_one_sample(void **state) {
  (void)state;
  margin_test r;
  assert_int_equal(one_sample_margin_test(summary_of(A2_NEW, 3), 1.0815, 0.0002, 0.01, &r, NULL),
                   0);
  assert_true(rel_err(r.t, 5.12368306639061) < 1e-9);
  assert_true(r.df == 2);
  assert_true(rel_err(r.p_margin, 0.018022595770828122) < 1e-9);
  assert_false(r.significant);
}

/* A clearly better run is significant with the 0.005-nat margin in bpb. */
static void test_significant_case(void **state) {
  (void)state;
  const double nw[] = {1.0700, 1.0702, 1.0698, 1.0701};
  const double rc[] = {1.0810, 1.0808, 1.0812};
  double margin = 0.005 * 0.4 / M_LN2; /* tokens per byte 0.4 */
  margin_test r;
  assert_int_equal(welch_margin_test(summary_of(nw, 4), summary_of(rc, 3), margin, 0.01, &r,
                                     NULL), 0);
  assert_true(r.significant && r.p_margin < 0.01 && r.lower_bound > margin);
}

static void test_invalid_inputs(void **state) {
  (void)state;
  pg_error err;
  margin_test r;
  sample_summary s;
  const double one[] = {1.0}, flat[] = {1.0, 1.0, 1.0};
  assert_int_equal(summarize_sample(one, 1, "--new", &s, &err), -1);
  assert_non_null(strstr(err.msg, "at least 2"));
  sample_summary f = summary_of(flat, 3);
  assert_int_equal(welch_margin_test(f, f, 0, 0.01, &r, &err), -1);
  assert_non_null(strstr(err.msg, "zero variance"));
  assert_int_equal(one_sample_margin_test(f, 2, 0, 0.01, &r, &err), -1);
  sample_summary a = summary_of(A2_NEW, 3);
  assert_int_equal(welch_margin_test(a, f, 0, 0.01, &r, NULL), 0); /* one flat side is fine */
  assert_true(r.df == 2);
  assert_int_equal(welch_margin_test(a, a, 0, 0, &r, &err), -1);
  assert_int_equal(welch_margin_test(a, a, 0, 1, &r, &err), -1);
  assert_int_equal(welch_margin_test(a, a, NAN, 0.01, &r, &err), -1);
}

static void test_value_list(void **state) {
  (void)state;
  double *v;
  size_t n;
  pg_error err;
  assert_int_equal(parse_value_list(" 1.5, 2,3e-1 ", "--new", &v, &n, &err), 0);
  assert_int_equal(n, 3);
  assert_true(v[0] == 1.5 && v[1] == 2 && v[2] == 0.3);
  free(v);
  const char *bad[] = {"", "1,,2", "1,", "1,abc", "1,2x", "nan,1", "1,inf", "1,1e999", ",1"};
  const char *why[] = {"item 1 is empty", "item 2 is empty", "item 2 is empty",
                       "item 2 ('abc') is not a number", "item 2 ('2x') is not a number",
                       "item 1 ('nan') is not a finite", "item 2 ('inf') is not a finite",
                       "item 2 ('1e999') is not a finite", "item 1 is empty"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(parse_value_list(bad[i], "--record", &v, &n, &err), -1);
    assert_null(v);
    assert_string_equal(err.file, "--record");
    if (!strstr(err.msg, why[i])) fail_msg("'%s': got '%s', want '%s'", bad[i], err.msg, why[i]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_published_p_020),  cmocka_unit_test(test_published_p_063),
      cmocka_unit_test(test_margin_and_bound), cmocka_unit_test(test_power_noncentral),
      cmocka_unit_test(test_seeds_needed),     cmocka_unit_test(test_one_sample),
      cmocka_unit_test(test_significant_case), cmocka_unit_test(test_invalid_inputs),
      cmocka_unit_test(test_value_list),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
