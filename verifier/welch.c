/* Welch's t test with a margin, its one-sample sibling, and the power and
 * sample-size figures that go with them.
 *
 * Power: under the alternative "true diff = observed diff" the statistic is
 * noncentral t with df degrees of freedom and noncentrality
 * delta = (diff - margin)/se, so power = P(T'(df, delta) > t_crit) with
 * t_crit the 1 - alpha quantile (verifier/noncentral_t.c). For Welch the df is the
 * Welch-Satterthwaite one, so the figure is approximate in the same way as
 * the test itself. It is a planning figure, not a test. */
#include "verifier/welch.h"

#include <math.h>

#include "verifier/noncentral_t.h"
#include "verifier/student_t.h"

#define MAX_SEEDS 1000000000L /* beyond this seeds_needed reports -1 */

int summarize_sample(const double *v, size_t n, const char *name, sample_summary *out,
                     pg_error *err) {
  if (n < 2) return pg_fail(err, name, -1, "needs at least 2 values, got %zu", n);
  double sum = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(v[i])) return pg_fail(err, name, -1, "item %zu is not a finite number", i + 1);
    sum += v[i];
  }
  double mean = sum / (double)n, ss = 0;
  for (size_t i = 0; i < n; i++) ss += (v[i] - mean) * (v[i] - mean);
  *out = (sample_summary){n, mean, sqrt(ss / (double)(n - 1))};
  return 0;
}

static int check_common(sample_summary s, const char *name, double margin, double alpha,
                        pg_error *err) {
  if (!(alpha > 0 && alpha < 1))
    return pg_fail(err, "--alpha", -1, "must be strictly between 0 and 1, got %g", alpha);
  if (!isfinite(margin)) return pg_fail(err, "margin", -1, "is not finite");
  if (s.n < 2) return pg_fail(err, name, -1, "needs at least 2 values, got %zu", s.n);
  if (!isfinite(s.mean) || !isfinite(s.sd) || s.sd < 0)
    return pg_fail(err, name, -1, "mean or sd is not finite");
  return 0;
}

/* Power at effect (diff - margin) with standard error se and df. */
static double t_power(double effect, double se, double df, double alpha) {
  return noncentral_t_sf(student_t_isf(alpha, df), df, effect / se);
}

/* se and df of a design with n seeds per side, sds s1 and s2 (s2 < 0: one
 * sample against a fixed target). */
static void design(double s1, double s2, double n, double *se, double *df) {
  if (s2 < 0) {
    *se = s1 / sqrt(n);
    *df = n - 1;
    return;
  }
  double v1 = s1 * s1, v2 = s2 * s2;
  *se = sqrt((v1 + v2) / n);
  *df = (n - 1) * (v1 + v2) * (v1 + v2) / (v1 * v1 + v2 * v2);
}

static double design_power(double effect, double s1, double s2, long n, double alpha) {
  double se, df;
  design(s1, s2, (double)n, &se, &df);
  return t_power(effect, se, df, alpha);
}

/* Smallest n >= 2 per side with power >= WELCH_TARGET_POWER; power grows
 * with n (se shrinks, df and so the critical value improve), so doubling
 * then bisection finds it. -1 when the effect is not positive. */
static long seeds_for_power(double effect, double s1, double s2, double alpha) {
  if (!(effect > 0)) return -1;
  long lo = 1, hi = 2; /* power(lo) < target is the invariant; lo = 1 means "none tried" */
  while (design_power(effect, s1, s2, hi, alpha) < WELCH_TARGET_POWER) {
    lo = hi;
    if (hi > MAX_SEEDS / 2) return -1;
    hi *= 2;
  }
  while (hi - lo > 1) {
    long mid = lo + (hi - lo) / 2;
    if (mid < 2 || design_power(effect, s1, s2, mid, alpha) < WELCH_TARGET_POWER)
      lo = mid;
    else
      hi = mid;
  }
  return hi;
}

long welch_seeds_needed(double effect, double sd_new, double sd_record, double alpha) {
  return seeds_for_power(effect, sd_new, sd_record, alpha);
}

/* Everything after se and df are known. */
static void finish(double diff, double margin, double se, double df, double alpha,
                   margin_test *out) {
  out->diff = diff;
  out->margin = margin;
  out->se = se;
  out->df = df;
  out->t = (diff - margin) / se;
  out->p_margin = student_t_sf(out->t, df);
  out->p_zero_margin = student_t_sf(diff / se, df);
  out->lower_bound = diff - student_t_isf(alpha, df) * se;
  out->power = t_power(diff - margin, se, df, alpha);
  out->significant = out->p_margin < alpha;
}

int welch_margin_test(sample_summary new_runs, sample_summary record, double margin,
                      double alpha, margin_test *out, pg_error *err) {
  if (check_common(new_runs, "--new", margin, alpha, err) ||
      check_common(record, "--record", margin, alpha, err))
    return -1;
  if (new_runs.sd == 0 && record.sd == 0)
    return pg_fail(err, "--new/--record", -1,
                   "both sides have zero variance: the t statistic is undefined");
  double v1 = new_runs.sd * new_runs.sd / (double)new_runs.n;
  double v2 = record.sd * record.sd / (double)record.n;
  /* Welch-Satterthwaite; a side with zero variance contributes nothing. */
  double df = (v1 + v2) * (v1 + v2) /
              (v1 * v1 / (double)(new_runs.n - 1) + v2 * v2 / (double)(record.n - 1));
  finish(record.mean - new_runs.mean, margin, sqrt(v1 + v2), df, alpha, out);
  out->seeds_needed = seeds_for_power(out->diff - margin, new_runs.sd, record.sd, alpha);
  return 0;
}

int one_sample_margin_test(sample_summary new_runs, double target, double margin, double alpha,
                           margin_test *out, pg_error *err) {
  if (check_common(new_runs, "--new", margin, alpha, err)) return -1;
  if (!isfinite(target)) return pg_fail(err, "--target", -1, "is not finite");
  if (new_runs.sd == 0)
    return pg_fail(err, "--new", -1, "has zero variance: the t statistic is undefined");
  double se = new_runs.sd / sqrt((double)new_runs.n);
  finish(target - new_runs.mean, margin, se, (double)(new_runs.n - 1), alpha, out);
  out->seeds_needed = seeds_for_power(out->diff - margin, new_runs.sd, -1, alpha);
  return 0;
}
