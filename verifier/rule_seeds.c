/* TOO_FEW_SEEDS and SEED_DUPLICATE. Challenge README, "Submission
 * Process": records "must provide enough run logs to show at p < 0.01 that
 * they achieved the required 0.005-nat improvement ... Most often,
 * submitting an average over 3 training runs is sufficient." Two logs of
 * one seed are one run, not two. */
#include "common/challenge.h"
#include "verifier/rules.h"

void rule_seeds(const submission *s, finding_list *f) {
  size_t distinct = 0;
  for (size_t i = 0; i < s->n_logs; i++) {
    const sub_log *a = &s->logs[i];
    int dup = 0;
    for (size_t j = 0; j < i && a->seed >= 0; j++) {
      if (s->logs[j].seed != a->seed) continue;
      findings_add(f, "SEED_DUPLICATE", SEV_ERROR, a->rel, a->seed_line,
                   "seed %lld is also the seed of %s: one seed counts as one run",
                   (long long)a->seed, s->logs[j].rel);
      dup = 1;
      break;
    }
    if (!dup && log_final_metric(&a->log)) distinct++;
  }
  const sub_json *j = submission_claims(s);
  if (j)
    for (size_t a = 0; a < j->n_seeds; a++)
      for (size_t b = 0; b < a; b++)
        if (j->seeds[a] == j->seeds[b]) {
          findings_add(f, "SEED_DUPLICATE", SEV_ERROR, j->rel, 0,
                       "seed %lld is listed twice in \"seeds\"", (long long)j->seeds[a]);
          break;
        }
  if (s->track == TRACK_RECORD && distinct < CHALLENGE_SEEDS)
    findings_add(f, "TOO_FEW_SEEDS", SEV_ERROR, NULL, 0,
                 "%zu distinct seed%s with a final metric; a record needs enough runs for p < 0.01 "
                 "(usually %d seeds; waived only for pure systems speedups)",
                 distinct, distinct == 1 ? "" : "s", CHALLENGE_SEEDS);
}
