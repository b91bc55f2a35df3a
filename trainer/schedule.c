#include "trainer/schedule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double schedule_lr_mult(int64_t step, int64_t iterations, int64_t warmdown_iters) {
  if (warmdown_iters <= 0) return 1.0;
  int64_t start = iterations - warmdown_iters > 0 ? iterations - warmdown_iters : 0;
  if (step < start || step >= iterations) return 1.0;
  /* Python: (iterations - step) / max(warmdown_iters, 1), true division of
   * two ints, which is the correctly rounded quotient: the same as this
   * double division while both are below 2^53. */
  double m = (double)(iterations - step) / (double)warmdown_iters;
  return m > 0.0 ? m : 0.0;
}

double schedule_muon_momentum(int64_t step, double start, double momentum, int warmup_steps) {
  double frac = 1.0;
  if (warmup_steps > 0) {
    frac = (double)step / (double)warmup_steps;
    if (frac > 1.0) frac = 1.0;
  }
  return (1.0 - frac) * start + frac * momentum;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int schedule_step_ms(const double *ms, int n, double *out, pg_error *err) {
  if (n < 1) return pg_fail(err, "schedule", -1, "no step timings to plan from");
  if (n > SCHEDULE_MAX_SAMPLES)
    return pg_fail(err, "schedule", -1, "%d step timings, at most %d", n, SCHEDULE_MAX_SAMPLES);
  for (int i = 0; i < n; i++)
    if (!isfinite(ms[i]) || !(ms[i] > 0.0))
      return pg_fail(err, "schedule", -1, "step timing %d is %g ms, must be finite and > 0", i,
                     ms[i]);
  if (n == 1) {
    *out = ms[0];
    return 0;
  }
  double s[SCHEDULE_MAX_SAMPLES];
  int m = n - 1;
  memcpy(s, ms + 1, (size_t)m * sizeof *s);
  qsort(s, (size_t)m, sizeof *s, cmp_double);
  *out = m % 2 ? s[m / 2] : 0.5 * (s[m / 2 - 1] + s[m / 2]);
  return 0;
}

int schedule_plan_steps(double budget_seconds, const double *step_ms, int n,
                        int64_t max_iterations, schedule_plan *out, pg_error *err) {
  if (!isfinite(budget_seconds) || !(budget_seconds > 0.0))
    return pg_fail(err, "schedule", -1, "budget %g s must be finite and > 0", budget_seconds);
  if (max_iterations < 1) return pg_fail(err, "schedule", -1, "max_iterations must be >= 1");
  double ms;
  if (schedule_step_ms(step_ms, n, &ms, err)) return -1;
  double steps = floor(budget_seconds * 1000.0 * SCHEDULE_SAFETY / ms);
  if (steps < 1.0)
    return pg_fail(err, "schedule", -1,
                   "budget %g s is too small for one step of %.3f ms with a %.0f%% margin",
                   budget_seconds, ms, 100.0 * (1.0 - SCHEDULE_SAFETY));
  *out = (schedule_plan){
      .budget_seconds = budget_seconds,
      .measured_step_ms = ms,
      .measured_samples = n,
      .safety = SCHEDULE_SAFETY,
      .max_iterations = max_iterations,
      .planned_steps = steps >= (double)max_iterations ? max_iterations : (int64_t)steps,
  };
  return 0;
}

json_t *schedule_plan_to_json(const schedule_plan *p) {
  return json_pack("{s:f, s:f, s:i, s:f, s:I, s:I, s:s}", "budget_seconds", p->budget_seconds,
                   "measured_step_ms", p->measured_step_ms, "measured_samples",
                   p->measured_samples, "safety", p->safety, "max_iterations",
                   (json_int_t)p->max_iterations, "planned_steps", (json_int_t)p->planned_steps,
                   "rule",
                   "planned_steps = min(max_iterations, floor(budget_seconds * 1000 * safety / "
                   "measured_step_ms)); measured_step_ms = median of the step timings after "
                   "the first");
}
