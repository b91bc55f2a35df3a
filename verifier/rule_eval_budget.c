/* EVAL_OVER_BUDGET. Challenge README, FAQ "What are the restrictions on
 * evaluation?": "We won't accept submissions that take more than 10
 * minutes on 8xH100 to evaluate (Note: This limit is in addition to the 10
 * minutes of training time allowed!)". Checked where the log gives the
 * time: total_eval_time, else the eval_time of the final metric line.
 * A warning for a log that does not back the claim (submission_runs.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/challenge.h"
#include "verifier/rules.h"

/* " (on 1 of 8 GPUs: at least 170 s on 8)" for a run on a share of the
 * GPUs, else "". */
static void on_gpus(char *buf, size_t cap, double share, double secs) {
  buf[0] = 0;
  if (share < 1.0)
    snprintf(buf, cap, " (on %.0f of %d GPUs: at least %.0f s on %d)", share * CHALLENGE_WORLD_SIZE,
             CHALLENGE_WORLD_SIZE, secs * share, CHALLENGE_WORLD_SIZE);
}

void rule_eval_budget(const submission *s, finding_list *f) {
  if (s->track != TRACK_RECORD) return;
  for (size_t i = 0; i < s->n_logs; i++) {
    const sub_log *lg = &s->logs[i];
    const pg_log *l = &lg->log;
    if (lg->copy_of >= 0) continue;
    /* On fewer GPUs than 8 (world_size printed), an error only when the
     * time at perfect scaling is still over (rule_train_budget.c). */
    double share = gpu_share(l);
    severity sev = lg->backs_claim ? SEV_ERROR : SEV_WARNING;
    const char *note = lg->backs_claim ? "" : " (this run does not back the claim)";
    if (l->total_eval_s.line) {
      double t = l->total_eval_s.v;
      char on[128];
      on_gpus(on, sizeof on, share, t);
      if (t * 1000.0 > CHALLENGE_EVAL_LIMIT_MS)
        findings_add(f, "EVAL_OVER_BUDGET",
                     t * share * 1000.0 > CHALLENGE_EVAL_LIMIT_MS ? sev : SEV_WARNING, lg->rel,
                     l->total_eval_s.line,
                     "evaluation took %.1f s, over the " CHALLENGE_TIME_LIMIT_TEXT " limit%s%s", t,
                     on, note);
      continue;
    }
    const log_metric *m = log_final_metric(l);
    /* The `_exact` twin carries no eval_time; its plain twin does. */
    for (size_t k = 0; m && isnan(m->eval_ms) && k < l->n_metrics; k++)
      if (l->metrics[k].kind == METRIC_FINAL && !isnan(l->metrics[k].eval_ms) &&
          strcmp(l->metrics[k].base, m->base) == 0)
        m = &l->metrics[k];
    if (m && !isnan(m->eval_ms) && m->eval_ms > CHALLENGE_EVAL_LIMIT_MS) {
      char on[128];
      on_gpus(on, sizeof on, share, m->eval_ms / 1000.0);
      findings_add(
          f, "EVAL_OVER_BUDGET", m->eval_ms * share > CHALLENGE_EVAL_LIMIT_MS ? sev : SEV_WARNING,
          lg->rel, m->line,
          "%s took %.0f ms to evaluate, over the " CHALLENGE_TIME_LIMIT_MS_TEXT " limit%s%s",
          m->prefix, m->eval_ms, on, note);
    }
  }
}
