/* NO_FINAL_METRIC. A train log must show the score it claims: the
 * challenge scores "val_bpb" of the exported artifact (the baseline prints
 * `final_int8_zlib_roundtrip val_loss:X val_bpb:Y`), and the README asks
 * for "A train log, automatically produced by your script" [Submission
 * Process]. A run without such a line crashed or was cut before
 * evaluation.
 *
 * Judged per run, not per file: a training log whose evaluation lives in
 * another file of its seed (train_seed0.log + ttt_seed0.log) is complete.
 * An error when a run the claim names (a seed submission.json lists) has
 * no final metric, or when no run of the folder has one; otherwise the
 * run is an extra the claim does not rest on, and a warning. One finding
 * per severity lists the files.
 *
 * On the non-record track every finding is a warning: the track's
 * leaderboard took DGAttention's in-training 1.1898 (its log has no
 * metric of the exported model), since such a submission is accepted for
 * what it shows, not its number. */
#include "verifier/rules.h"

void rule_final_metric(const submission *s, finding_list *f) {
  const sub_json *j = submission_claims(s);
  int any = 0;
  for (size_t r = 0; r < s->n_runs && !any; r++) any = sub_run_has_final(s, &s->runs[r]);
  for (size_t r = 0; r < s->n_runs; r++) {
    const sub_run *run = &s->runs[r];
    if (sub_run_has_final(s, run)) continue;
    severity sev = (!any || sub_json_lists_seed(j, run->seed)) && s->track == TRACK_RECORD
                       ? SEV_ERROR
                       : SEV_WARNING;
    const char *head =
        !any || sub_json_lists_seed(j, run->seed)
            ? "no final metric line (PREFIX val_loss:X val_bpb:Y of the exported model) in the run"
            : "a run without a final metric line (it crashed or was cut): the claim does not "
              "rest on it";
    for (size_t k = 0; k < run->n_logs; k++) {
      const sub_log *lg = &s->logs[run->logs[k]];
      if (lg->copy_of >= 0) continue;
      size_t pre = 0;
      for (size_t i = 0; i < lg->log.n_metrics; i++) pre += lg->log.metrics[i].kind != METRIC_FINAL;
      findings_group(f, "NO_FINAL_METRIC", sev, head, lg->rel, lg->log.n_lines, "%s",
                     pre ? "only pre-quantization or diagnostic metrics" : "");
    }
  }
}
