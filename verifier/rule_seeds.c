/* TOO_FEW_SEEDS and SEED_DUPLICATE. Challenge README, "Submission
 * Process": records "must provide enough run logs to show at p < 0.01 that
 * they achieved the required 0.005-nat improvement ... Most often,
 * submitting an average over 3 training runs is sufficient."
 *
 * The rule is the p-value, not a count: early records were accepted with
 * one log (2026-03-17_NaiveBaseline, 2026-03-18_LowerLR), so fewer than
 * three runs is a warning that points at `pgolf stats`.
 *
 * Runs are counted, not files (submission_runs.c): a copy, a separate
 * evaluation log or a rerun of a seed is part of that seed's run, so one
 * seed is never two runs; the seed a training log prints is its run's,
 * whatever the file is named. SEED_DUPLICATE is an error when the claimed
 * number is a mean over logs that counts one seed twice: the evidence is
 * then smaller than it looks. A seed listed twice in "seeds", or training
 * logs named for different seeds that print one seed, are warnings. */
#include <stdio.h>

#include "common/challenge.h"
#include "verifier/rules.h"

/* The runs that count as evidence: the claimed runs for a claim that is a
 * mean, else every run with a final metric. */
static size_t evidence_runs(const submission *s, char *seeds, size_t cap) {
  size_t n = 0, len = 0;
  seeds[0] = 0;
  int mean = s->link.fit == FIT_MEAN;
  for (size_t r = 0; r < s->n_runs; r++) {
    const sub_run *run = &s->runs[r];
    if ((mean && !run->claimed) || !sub_run_has_final(s, run)) continue;
    if (len < cap) {
      if (run->seed >= 0)
        len += (size_t)snprintf(seeds + len, cap - len, "%s%lld", n ? ", " : "", (long long)run->seed);
      else
        len += (size_t)snprintf(seeds + len, cap - len, "%sunknown", n ? ", " : "");
    }
    n++;
  }
  return n;
}

/* Training logs of one run whose file names give different seeds: the
 * names suggest several seeds, the logs show one. */
static void named_apart(const submission *s, finding_list *f) {
  for (size_t r = 0; r < s->n_runs; r++) {
    const sub_run *run = &s->runs[r];
    int apart = 0;
    int64_t first = -1;
    for (size_t k = 0; k < run->n_logs; k++) {
      const sub_log *lg = &s->logs[run->logs[k]];
      if (lg->copy_of >= 0 || !lg->trains || lg->name_seed < 0) continue;
      if (first < 0) first = lg->name_seed;
      else apart |= lg->name_seed != first;
    }
    if (!apart) continue;
    char head[200];
    snprintf(head, sizeof head,
             "training logs print seed %lld while their file names give other seeds: they are "
             "runs of one seed, not of several",
             (long long)run->seed);
    for (size_t k = 0; k < run->n_logs; k++) {
      const sub_log *lg = &s->logs[run->logs[k]];
      if (lg->copy_of < 0 && lg->trains && lg->name_seed >= 0)
        findings_group(f, "SEED_DUPLICATE", SEV_WARNING, head, lg->rel, lg->seed_line,
                       "named %lld", (long long)lg->name_seed);
    }
  }
}

void rule_seeds(const submission *s, finding_list *f) {
  const sub_json *j = submission_claims(s);
  if (j && s->link.seeds_twice) {
    char head[200];
    snprintf(head, sizeof head,
             "%s %.*f is the mean of the logs' final metrics counting a seed twice (one seed "
             "is one run)",
             j->val_bpb_key, j->val_bpb_dec, j->val_bpb);
    for (size_t r = 0; r < s->n_runs; r++) {
      const sub_run *run = &s->runs[r];
      size_t with_final = 0;
      for (size_t k = 0; k < run->n_logs; k++) {
        const sub_log *lg = &s->logs[run->logs[k]];
        with_final += lg->copy_of < 0 && log_final_metric(&lg->log) != NULL;
      }
      for (size_t k = 0; with_final > 1 && k < run->n_logs; k++) {
        const sub_log *lg = &s->logs[run->logs[k]];
        if (lg->copy_of < 0 && log_final_metric(&lg->log))
          findings_group(f, "SEED_DUPLICATE", SEV_ERROR, head, lg->rel, lg->seed_line,
                         "seed %lld", (long long)run->seed);
      }
    }
  }
  if (j)
    for (size_t a = 0; a < j->n_seeds; a++)
      for (size_t b = 0; b < a; b++)
        if (j->seeds[a] == j->seeds[b]) {
          findings_add(f, "SEED_DUPLICATE", SEV_WARNING, j->rel, 0,
                       "seed %lld is listed twice in \"seeds\"", (long long)j->seeds[a]);
          break;
        }
  named_apart(s, f);
  char seeds[200];
  size_t n = evidence_runs(s, seeds, sizeof seeds);
  if (s->track == TRACK_RECORD && n < CHALLENGE_SEEDS)
    findings_add(f, "TOO_FEW_SEEDS", SEV_WARNING, NULL, 0,
                 "%zu run%s with a final metric (seed%s %s); a record must show p < 0.01 for its "
                 "improvement, \"most often ... an average over %d training runs\" (pgolf stats "
                 "gives the p-value)",
                 n, n == 1 ? "" : "s", n == 1 ? "" : "s", n ? seeds : "-", CHALLENGE_SEEDS);
}
