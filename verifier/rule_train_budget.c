/* TRAIN_OVER_BUDGET. Challenge README: records "Reproducibly run in under
 * 10 minutes on 8xH100s" ("Submission Process", criterion 3).
 *
 * The official loop checks its wall-clock cap after each step, so a run
 * stops within one step past 600,000 ms: the baseline itself ends at
 * 600,038 ms with steps of about 43.5 ms. A run is over budget when its
 * printed training clock, less half its printed resolution, exceeds
 * 600,000 ms plus one step (the larger of the printed step_avg and the
 * step time between the last two clocked lines). Also checked: a record
 * log that sets max_wallclock_seconds above 600, and (as a warning) GPTQ
 * calibration that reads training data past 600 s. Non-record tracks have
 * no time limit. */
#include <math.h>
#include <stdlib.h>

#include "common/challenge.h"
#include "verifier/rules.h"

/* Step time between the last two training step lines with a clock. */
static double recent_step_ms(const pg_log *l) {
  const log_train_step *a = NULL, *b = NULL;
  for (size_t i = l->n_train; i-- > 0;) {
    if (isnan(l->train[i].train_ms)) continue;
    if (!b) b = &l->train[i];
    else if (l->train[i].step < b->step) {
      a = &l->train[i];
      break;
    }
  }
  if (!a) return NAN;
  return (b->train_ms - a->train_ms) / (double)(b->step - a->step);
}

static void check_clock(const sub_log *lg, finding_list *f) {
  const pg_log *l = &lg->log;
  double ms, res, step_ms;
  uint32_t line;
  if (log_train_end(l, &ms, &res, &line, &step_ms)) return;
  double recent = recent_step_ms(l), tol = 0;
  if (!isnan(step_ms)) tol = step_ms;
  if (!isnan(recent) && recent > tol) tol = recent;
  if (ms - res / 2 > CHALLENGE_TRAIN_LIMIT_MS + tol)
    findings_add(f, "TRAIN_OVER_BUDGET", SEV_ERROR, lg->rel, line,
                 "training clock %.0f ms is past " CHALLENGE_TIME_LIMIT_MS_TEXT " plus one step (%.2f ms)", ms, tol);
  if (l->gptq_hessian_s.line && l->gptq_hessian_s.v * 1000.0 + ms > CHALLENGE_TRAIN_LIMIT_MS)
    findings_add(f, "TRAIN_OVER_BUDGET", SEV_WARNING, lg->rel, l->gptq_hessian_s.line,
                 "GPTQ Hessian collection reads training data until %.1f s (%.0f ms of training "
                 "+ %.1f s), past " CHALLENGE_TIME_LIMIT_TEXT,
                 (ms + l->gptq_hessian_s.v * 1000.0) / 1000.0, ms, l->gptq_hessian_s.v);
}

void rule_train_budget(const submission *s, finding_list *f) {
  if (s->track != TRACK_RECORD) return;
  for (size_t i = 0; i < s->n_logs; i++) {
    const sub_log *lg = &s->logs[i];
    check_clock(lg, f);
    const log_kv *w = log_hparam(&lg->log, "max_wallclock_seconds");
    char *end;
    double v = w ? strtod(w->value, &end) : 0;
    if (w && end != w->value && v > CHALLENGE_TRAIN_LIMIT_MS / 1000.0)
      findings_add(f, "TRAIN_OVER_BUDGET", SEV_ERROR, lg->rel, w->line,
                   "max_wallclock_seconds is %s, above the " CHALLENGE_TIME_LIMIT_TEXT " of the record track", w->value);
  }
}
