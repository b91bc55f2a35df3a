/* EVAL_SELECTION. Selection on the validation set: one trained seed
 * evaluated several times (other test-time-training settings, other
 * strides), and the claim taking the best of those scores. The field guide
 * (issue #1017, condition C4) asks for "a single left-to-right pass ... no
 * rescoring, no best-of-k"; the README scores the model a submission
 * ships, evaluated the way its script does, and issue #677 refuses scores
 * picked after looking at the validation set.
 *
 * Evaluations of one trained seed are the final metric lines, of the
 * metric the claim uses, in the run's logs: the training log's own and
 * separate evaluation logs of its artifact (submission_runs.c).
 *  - error: a claimed run's evaluation is the best of its evaluations, and
 *    the choice was made for that run alone: it had more evaluations than
 *    another run of the folder, or three or more (a sweep);
 *  - warning: a claimed run has re-evaluations, but every run was
 *    re-evaluated alike (an evaluation update applied to all seeds, as in
 *    PR #1787, merged), or the claim is not the best of them; and the
 *    error's case on the non-record track, which accepts a submission for
 *    what it shows, not its number (rule_claims.c).
 * One finding per severity, naming each run's evaluations and the
 * settings that differ between them. */
#include <stdio.h>
#include <string.h>

#include "verifier/rules.h"

#define MAX_EVALS 8
#define SWEEP_EVALS 3

/* The settings that differ between the logs of two evaluations. */
static void settings_differ(const submission *s, const sub_use *a, const sub_use *b, char *buf,
                            size_t cap) {
  const sub_log *la = &s->logs[a->log], *lb = &s->logs[b->log];
  size_t len = 0, n = 0;
  buf[0] = 0;
  if (a->log == b->log) return;
  for (size_t k = 0; k < lb->log.n_hparams && n < 4; k++) {
    const log_kv *y = &lb->log.hparams[k];
    const log_kv *x = log_hparam(&la->log, y->key);
    if (log_hparam(&lb->log, y->key) != y || !x || !strcmp(x->value, y->value) ||
        hparam_incidental(y->key, x->value, y->value, -1, -1))
      continue;
    len += (size_t)snprintf(buf + len, cap - len, "%s%s %.24s vs %.24s", n++ ? ", " : " [",
                            y->key, y->value, x->value);
    if (len >= cap) return;
  }
  if (n && len < cap) snprintf(buf + len, cap - len, "]");
}

/* How many evaluations of base each run of the folder has; the fewest
 * among runs that have any. */
static size_t fewest_evals(const submission *s, const char *base) {
  size_t fewest = 0;
  for (size_t r = 0; r < s->n_runs; r++) {
    const sub_run *run = &s->runs[r];
    size_t log = run->logs[0];
    for (size_t k = 0; k < run->n_logs; k++)
      if (s->logs[run->logs[k]].trains) log = run->logs[k];
    uint32_t seg = (uint32_t)s->logs[log].log.n_segs - 1;
    size_t n = submission_evals(s, r, log, seg, base, NULL, 0);
    if (n && (!fewest || n < fewest)) fewest = n;
  }
  return fewest;
}

/* The evaluations of the run behind one claimed value u, and the finding
 * (see the top) when there are several. */
static void judge(const submission *s, const sub_use *u, finding_list *f) {
  sub_use ev[MAX_EVALS];
  size_t n = submission_evals(s, u->run, u->log, u->m->segment, u->m->base, ev, MAX_EVALS);
  if (n < 2) return;
  if (n > MAX_EVALS) n = MAX_EVALS;
  double best = u->m->val_bpb.v, worst = best;
  for (size_t i = 0; i < n; i++) {
    double v = ev[i].m->val_bpb.v;
    if (v < best) best = v;
    if (v > worst) worst = v;
  }
  int is_best = u->m->val_bpb.v == best && worst > best;
  size_t fewest = fewest_evals(s, u->m->base);
  int alone = n > fewest || n >= SWEEP_EVALS;
  int selected = is_best && alone;
  severity sev = selected && s->track == TRACK_RECORD ? SEV_ERROR : SEV_WARNING;
  const char *head =
      selected
          ? "the claim takes the best of several evaluations of one trained seed, a choice made "
            "on the validation set"
          : "a trained seed was evaluated more than once; the claim uses one of the evaluations";
  char list[900];
  size_t len = 0;
  list[0] = 0;
  for (size_t i = 0; i < n && len < sizeof list; i++) {
    char diff[200];
    settings_differ(s, u, &ev[i], diff, sizeof diff);
    len += (size_t)snprintf(list + len, sizeof list - len, "%s%s:%u %.8f%s%s", i ? ", " : "",
                            s->logs[ev[i].log].rel, ev[i].m->line, ev[i].m->val_bpb.v,
                            ev[i].m == u->m ? " (claimed)" : "", diff);
  }
  const sub_run *run = &s->runs[u->run];
  char seed[32] = "unknown";
  if (run->seed >= 0) snprintf(seed, sizeof seed, "%lld", (long long)run->seed);
  findings_group(f, "EVAL_SELECTION", sev, head, s->logs[u->log].rel, u->m->line,
                 "seed %s, %s: %zu evaluations%s%s: %s", seed, u->m->base, n,
                 is_best ? ", the claimed one the best" : "",
                 selected && n > fewest ? ", more than other runs had" : "", list);
}

void rule_eval_selection(const submission *s, finding_list *f) {
  const sub_json *j = submission_claims(s);
  for (size_t i = 0; i < s->link.n_uses; i++) judge(s, &s->link.uses[i], f);
  for (size_t i = 0; j && i < j->n_claims; i++) {
    const sub_seed_claim *cl = &j->claims[i];
    int seen = 0; /* judged already as part of the top-level claim */
    for (size_t k = 0; k < s->link.n_uses && !seen; k++) seen = s->link.uses[k].m == cl->use.m;
    if (cl->linked && !seen) judge(s, &cl->use, f);
  }
}
