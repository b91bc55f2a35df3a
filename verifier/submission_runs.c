/* Runs, not files: the logs of a folder grouped by seed, and the claims of
 * submission.json linked to the runs whose final metrics they use.
 *
 * Folders hold more than one log per run: a training log and a separate
 * evaluation log of its artifact (train_seed0.log + ttt_seed0.log), a copy
 * (train.log beside train_seed1337.log), reruns (train_seed42_original.log
 * + train_seed42_rerun.log) and re-evaluations of one trained seed with
 * other settings. Counting files would call these duplicate seeds, logs
 * without a final metric, or claims that are "not the mean of the logs";
 * counting runs does not. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/submission.h"

/* Mean enumeration limits: options tried per run, combinations per set,
 * and the largest run count whose subsets are tried. */
#define MAX_OPTS 8
#define MAX_COMBOS (1u << 16)
#define MAX_SUBSET_RUNS 6
/* Subsets of the runs are tried only for claims printed with at least this
 * many decimals: with fewer, some subset agrees by chance. */
#define SUBSET_MIN_DECIMALS 5

int decimals_of(double x) {
  char buf[64];
  for (int d = 0; d < 17; d++) {
    snprintf(buf, sizeof buf, "%.*f", d, x);
    if (strtod(buf, NULL) == x) return d;
  }
  return 17;
}

int claim_agrees(double c, int c_dec, double v, int v_dec) {
  int k = c_dec < v_dec ? c_dec : v_dec;
  return fabs(c - v) < pow(10.0, -k) * (1 - 1e-9);
}

/* ---- grouping ---- */

static void find_copies(submission *s) {
  for (size_t i = 0; i < s->n_logs; i++)
    for (size_t j = 0; j < i && s->logs[i].copy_of < 0; j++)
      if (s->logs[j].copy_of < 0 && !memcmp(s->logs[i].digest, s->logs[j].digest, 32))
        s->logs[i].copy_of = (long)j;
}

/* Can log lg join run r? Same known seed: for a training log the seed it
 * prints (train_seed2025.log printing seed 42 is a run of seed 42), for an
 * evaluation the seed its file name gives (see submission.c). */
static int joins(const sub_run *r, const sub_log *lg) {
  return lg->seed >= 0 && r->seed == lg->seed;
}

/* Append log to run r; -1 if memory runs out. */
static int add_to_run(sub_run *r, size_t log) {
  size_t *v = realloc(r->logs, (r->n_logs + 1) * sizeof *v);
  if (!v) return -1;
  r->logs = v;
  r->logs[r->n_logs++] = log;
  return 0;
}

/* Put every log in a run: a copy in its original's, else the first run of
 * its seed, else a new run. -1 if memory runs out. */
static int group_runs(submission *s) {
  s->runs = calloc(s->n_logs + 1, sizeof *s->runs);
  if (!s->runs) return -1;
  for (size_t i = 0; i < s->n_logs; i++) {
    sub_log *lg = &s->logs[i];
    size_t r = s->n_runs;
    if (lg->copy_of >= 0) r = s->logs[lg->copy_of].run;
    for (size_t k = 0; k < s->n_runs && r == s->n_runs; k++)
      if (joins(&s->runs[k], lg)) r = k;
    if (r == s->n_runs) s->runs[s->n_runs++].seed = lg->seed;
    if (add_to_run(&s->runs[r], i)) return -1;
    lg->run = r;
    if (lg->copy_of < 0 && lg->trains) s->runs[r].n_trainings += (int)lg->log.n_segs;
  }
  return 0;
}

/* ---- evaluations ---- */

/* Any segment (see log_evals). */
#define ANY_SEGMENT UINT32_MAX

/* The final metric lines of base in l (in one segment, or any): its
 * `_exact` twins if it prints any, else the plain lines (one evaluation
 * prints both twins). */
static size_t log_evals(const pg_log *l, const char *base, uint32_t segment,
                        const log_metric **out, size_t cap) {
  int exact = 0;
  for (size_t i = 0; i < l->n_metrics; i++)
    exact |= l->metrics[i].kind == METRIC_FINAL && l->metrics[i].exact &&
             !strcmp(l->metrics[i].base, base);
  size_t n = 0;
  for (size_t i = 0; i < l->n_metrics; i++) {
    const log_metric *m = &l->metrics[i];
    if (m->kind != METRIC_FINAL || m->exact != exact || strcmp(m->base, base)) continue;
    if (segment != ANY_SEGMENT && m->segment != segment) continue;
    if (n < cap) out[n] = m;
    n++;
  }
  return n;
}

size_t submission_evals(const submission *s, size_t r, size_t log, uint32_t segment,
                        const char *base, sub_use *out, size_t cap) {
  const sub_run *run = &s->runs[r];
  size_t n = 0;
  for (size_t k = 0; k < run->n_logs; k++) {
    size_t li = run->logs[k];
    const sub_log *lg = &s->logs[li];
    if (lg->copy_of >= 0 || (run->n_trainings > 1 && li != log)) continue;
    const log_metric *m[MAX_OPTS];
    size_t got = log_evals(&lg->log, base, li == log ? segment : ANY_SEGMENT, m, MAX_OPTS);
    for (size_t i = 0; i < got && i < MAX_OPTS; i++) {
      int again = 0; /* the same score printed twice in one run of a log is one evaluation */
      for (size_t p = 0; p < i && !again; p++)
        again = m[p]->segment == m[i]->segment && m[p]->val_bpb.v == m[i]->val_bpb.v;
      if (again) continue;
      if (n < cap) out[n] = (sub_use){r, li, m[i]};
      n++;
    }
  }
  return n;
}

/* ---- the mean over runs ---- */

typedef struct run_opts {
  sub_use v[MAX_OPTS];
  size_t n;
} run_opts;

/* Every combination of one option per run, in mixed radix; the first whose
 * mean agrees with c (at the precision of the claim and of the values) is
 * copied to out. */
static int combos_agree(const run_opts *o, size_t k, double c, int dec, sub_use *out) {
  size_t total = 1;
  for (size_t i = 0; i < k; i++) {
    if (!o[i].n) return 0;
    total *= o[i].n;
    if (total > MAX_COMBOS) return 0;
  }
  for (size_t t = 0; t < total; t++) {
    size_t x = t;
    double sum = 0;
    int vdec = 17;
    for (size_t i = 0; i < k; i++) {
      const sub_use *u = &o[i].v[x % o[i].n];
      x /= o[i].n;
      sum += u->m->val_bpb.v;
      if (u->m->val_bpb.decimals < vdec) vdec = u->m->val_bpb.decimals;
    }
    if (!claim_agrees(c, dec, sum / (double)k, vdec)) continue;
    x = t;
    for (size_t i = 0; i < k; i++) {
      out[i] = o[i].v[x % o[i].n];
      x /= o[i].n;
    }
    return 1;
  }
  return 0;
}

/* The options of run r for a mean over base: every evaluation of base in
 * its logs (any segment), at most MAX_OPTS. */
static void opts_of(const submission *s, size_t r, const char *base, run_opts *o) {
  const sub_run *run = &s->runs[r];
  o->n = 0;
  for (size_t k = 0; k < run->n_logs && o->n < MAX_OPTS; k++) {
    size_t li = run->logs[k];
    if (s->logs[li].copy_of >= 0) continue;
    const log_metric *m[MAX_OPTS];
    size_t got = log_evals(&s->logs[li].log, base, ANY_SEGMENT, m, MAX_OPTS);
    for (size_t i = 0; i < got && i < MAX_OPTS && o->n < MAX_OPTS; i++)
      o->v[o->n++] = (sub_use){r, li, m[i]};
  }
}

int sub_json_lists_seed(const sub_json *j, int64_t seed) {
  for (size_t i = 0; j && seed >= 0 && i < j->n_seeds; i++)
    if (j->seeds[i] == seed) return 1;
  for (size_t i = 0; j && seed >= 0 && i < j->n_claims; i++)
    if (j->claims[i].seed == seed) return 1;
  return 0;
}

int sub_run_has_final(const submission *s, const sub_run *r) {
  for (size_t k = 0; k < r->n_logs; k++)
    if (log_final_metric(&s->logs[r->logs[k]].log)) return 1;
  return 0;
}

/* Record a fit and its uses (copied) in l; -1 if memory runs out. */
static int set_link(sub_link *l, const sub_use *v, size_t n, sub_fit fit) {
  l->uses = malloc((n + 1) * sizeof *l->uses);
  if (!l->uses) return -1;
  memcpy(l->uses, v, n * sizeof *v);
  l->n_uses = n;
  l->fit = fit;
  return 0;
}

/* The claim as a mean over runs of final metric base: over the runs of the
 * seeds submission.json lists, over every run that has base, then (for a
 * precise claim over few runs) over their subsets. */
static int mean_of_base(submission *s, const sub_json *j, const char *base, double c, int dec) {
  run_opts *o = calloc(s->n_runs + 1, sizeof *o);
  size_t *have = calloc(s->n_runs + 1, sizeof *have);
  sub_use *pick = calloc(s->n_runs + 1, sizeof *pick);
  int found = 0;
  size_t k = 0, n_listed = 0, listed_have = 0;
  if (!o || !have || !pick) goto done;
  for (size_t r = 0; r < s->n_runs; r++) {
    opts_of(s, r, base, &o[k]);
    if (o[k].n) have[k++] = r;
  }
  for (size_t r = 0; r < s->n_runs; r++)
    if (sub_json_lists_seed(j, s->runs[r].seed)) n_listed++;
  /* The listed seeds first: the runs the author says the claim is over. */
  if (n_listed) {
    run_opts *lo = calloc(k + 1, sizeof *lo);
    if (!lo) goto done;
    for (size_t i = 0; i < k; i++)
      if (sub_json_lists_seed(j, s->runs[have[i]].seed)) lo[listed_have++] = o[i];
    if (listed_have == n_listed && combos_agree(lo, listed_have, c, dec, pick))
      found = !set_link(&s->link, pick, listed_have, FIT_MEAN);
    free(lo);
  }
  if (!found && k && combos_agree(o, k, c, dec, pick)) found = !set_link(&s->link, pick, k, FIT_MEAN);
  if (!found && k > 2 && k <= MAX_SUBSET_RUNS && dec >= SUBSET_MIN_DECIMALS) {
    run_opts sub[MAX_SUBSET_RUNS];
    for (unsigned mask = 1; mask < (1u << k) - 1 && !found; mask++) {
      size_t m = 0;
      for (size_t i = 0; i < k; i++)
        if (mask & (1u << i)) sub[m++] = o[i];
      if (m >= 2 && combos_agree(sub, m, c, dec, pick)) found = !set_link(&s->link, pick, m, FIT_MEAN);
    }
  }
done:
  free(o);
  free(have);
  free(pick);
  return found;
}

/* Every distinct final metric base of the folder's logs, in order seen. */
static size_t final_bases(const submission *s, const char **out, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < s->n_logs; i++) {
    const pg_log *l = &s->logs[i].log;
    for (size_t k = 0; k < l->n_metrics; k++) {
      const log_metric *m = &l->metrics[k];
      if (m->kind != METRIC_FINAL) continue;
      size_t b = 0;
      while (b < n && strcmp(out[b], m->base)) b++;
      if (b == n && n < cap) out[n++] = m->base;
    }
  }
  return n;
}

/* Run r's value when the claim does not name one: the claim's line for
 * the run if it has one, else its last final metric in file order (an
 * evaluation log after its training log wins). */
static int run_value(const submission *s, size_t r, sub_use *out) {
  for (size_t i = 0; i < s->link.n_uses; i++)
    if (s->link.uses[i].run == r) return *out = s->link.uses[i], 1;
  int found = 0;
  const sub_run *run = &s->runs[r];
  for (size_t k = 0; k < run->n_logs; k++) {
    size_t li = run->logs[k];
    const log_metric *m = s->logs[li].copy_of < 0 ? log_final_metric(&s->logs[li].log) : NULL;
    if (m) *out = (sub_use){r, li, m}, found = 1;
  }
  return found;
}

/* The per-seed claims' lines, when every per-seed val_bpb claim is linked
 * to a distinct run; else 0. */
static size_t seed_claim_uses(const submission *s, sub_use *out) {
  const sub_json *j = submission_claims(s);
  size_t n = 0;
  for (size_t i = 0; j && i < j->n_claims; i++) {
    const sub_seed_claim *c = &j->claims[i];
    if (!c->has_bpb) continue;
    if (!c->linked) return 0;
    for (size_t k = 0; k < n; k++)
      if (out[k].run == c->use.run) return 0;
    out[n++] = c->use;
  }
  return n;
}

size_t submission_run_values(const submission *s, sub_use *out, const char **from) {
  size_t n = 0;
  *from = "claim";
  if (s->link.fit == FIT_MEAN && s->link.n_uses) {
    memcpy(out, s->link.uses, s->link.n_uses * sizeof *out);
    return s->link.n_uses;
  }
  if ((n = seed_claim_uses(s, out))) return n;
  *from = "runs";
  for (size_t r = 0; r < s->n_runs; r++) n += run_value(s, r, &out[n]);
  return n;
}

/* The top-level claim is the mean of the per-seed claims' lines. */
static int mean_of_seed_claims(submission *s, const sub_json *j, double c, int dec) {
  size_t n = 0;
  for (size_t i = 0; i < j->n_claims; i++) {
    if (!j->claims[i].has_bpb) continue;
    if (!j->claims[i].linked) return 0;
    n++;
  }
  if (!n) return 0;
  sub_use *v = calloc(n, sizeof *v);
  if (!v) return 0;
  double sum = 0;
  int vdec = 17;
  n = 0;
  for (size_t i = 0; i < j->n_claims; i++) {
    const sub_seed_claim *cl = &j->claims[i];
    if (!cl->has_bpb) continue;
    for (size_t k = 0; k < n; k++)
      if (v[k].run == cl->use.run) { /* two claimed seeds, one run: not a mean over runs */
        free(v);
        return 0;
      }
    v[n++] = cl->use;
    sum += cl->use.m->val_bpb.v;
    if (cl->use.m->val_bpb.decimals < vdec) vdec = cl->use.m->val_bpb.decimals;
  }
  int ok = claim_agrees(c, dec, sum / (double)n, vdec) && !set_link(&s->link, v, n, FIT_MEAN);
  free(v);
  return ok;
}

/* A final metric line of l agreeing with c. */
static const log_metric *final_line(const pg_log *l, double c, int dec) {
  for (size_t i = 0; i < l->n_metrics; i++) {
    const log_metric *m = &l->metrics[i];
    if (m->kind == METRIC_FINAL && claim_agrees(c, dec, m->val_bpb.v, m->val_bpb.decimals))
      return m;
  }
  return NULL;
}

/* The old reading: the mean over every log (copies once) of its last final
 * metric. If that is what the claim is, and two of those logs are one
 * seed, the claim counts a seed twice. */
static int mean_counts_seed_twice(const submission *s, double c, int dec) {
  double sum = 0;
  size_t n = 0;
  int vdec = 17, twice = 0;
  for (size_t i = 0; i < s->n_logs; i++) {
    const sub_log *lg = &s->logs[i];
    const log_metric *m = log_final_metric(&lg->log);
    if (lg->copy_of >= 0 || !m) continue;
    for (size_t k = 0; k < i; k++)
      twice |= s->logs[k].copy_of < 0 && s->logs[k].run == lg->run && s->runs[lg->run].seed >= 0 &&
               log_final_metric(&s->logs[k].log);
    sum += m->val_bpb.v;
    n++;
    if (m->val_bpb.decimals < vdec) vdec = m->val_bpb.decimals;
  }
  return twice && n > 1 && claim_agrees(c, dec, sum / (double)n, vdec);
}

static size_t runs_with_final(const submission *s) {
  size_t n = 0;
  for (size_t r = 0; r < s->n_runs; r++) n += sub_run_has_final(s, &s->runs[r]);
  return n;
}

/* Link the top-level val_bpb claim: the mean of the per-seed claims' lines,
 * else a mean over runs of some final metric, else one run's line, else
 * unsupported (and whether it is a mean over logs counting a seed twice). */
static void link_top(submission *s, const sub_json *j) {
  if (!j || !j->has_val_bpb || !runs_with_final(s)) return;
  double c = j->val_bpb;
  int dec = j->val_bpb_dec;
  if (mean_of_seed_claims(s, j, c, dec)) return;
  const char *bases[64];
  size_t nb = final_bases(s, bases, 64);
  for (size_t b = 0; b < nb; b++)
    if (mean_of_base(s, j, bases[b], c, dec)) return;
  for (size_t i = 0; i < s->n_logs; i++) {
    const sub_log *lg = &s->logs[i];
    const log_metric *m = lg->copy_of < 0 ? final_line(&lg->log, c, dec) : NULL;
    if (m) {
      sub_use u = {lg->run, i, m};
      set_link(&s->link, &u, 1, runs_with_final(s) > 1 ? FIT_ONE_RUN : FIT_MEAN);
      return;
    }
  }
  s->link.fit = FIT_UNSUPPORTED;
  s->link.seeds_twice = mean_counts_seed_twice(s, c, dec);
}

/* A per-seed claim: a final metric line of a log of that seed, else of a
 * log whose file name gives that seed. */
static void link_seed_claim(submission *s, sub_seed_claim *cl) {
  if (!cl->has_bpb) return;
  int dec = cl->bpb_dec;
  /* By the printed seed, then the file name's, then a log that says no
   * seed at all (PR #534's one train.log holds the claim for 1337). */
  for (int pass = 0; pass < 3 && !cl->linked; pass++)
    for (size_t i = 0; i < s->n_logs && !cl->linked; i++) {
      const sub_log *lg = &s->logs[i];
      int64_t seed = pass == 0      ? lg->seed
                     : pass == 1    ? lg->name_seed
                     : lg->seed < 0 ? cl->seed
                                    : -1;
      if (lg->copy_of >= 0 || seed != cl->seed) continue;
      const log_metric *m = final_line(&lg->log, cl->val_bpb, dec);
      if (!m) continue;
      cl->linked = 1;
      cl->by_file_name = pass == 1 && lg->seed != cl->seed;
      cl->by_unseeded = pass == 2;
      cl->use = (sub_use){lg->run, i, m};
    }
}

/* Mark the run of u claimed, and the logs behind the value: the log that
 * prints it and, when that log only evaluates, the run's trainings. */
static void mark(submission *s, const sub_use *u) {
  sub_run *r = &s->runs[u->run];
  r->claimed = 1;
  s->logs[u->log].backs_claim = 1;
  if (s->logs[u->log].trains) return;
  for (size_t k = 0; k < r->n_logs; k++)
    if (s->logs[r->logs[k]].trains) s->logs[r->logs[k]].backs_claim = 1;
}

/* Is log i a part of a file whose later part is a run of the same seed
 * (an attempt the file then ran again)? */
static int superseded(const submission *s, size_t i) {
  const sub_log *a = &s->logs[i];
  for (size_t k = i + 1; a->n_parts > 1 && k < s->n_logs; k++) {
    const sub_log *b = &s->logs[k];
    if (b->n_parts > 1 && b->part > a->part && !strcmp(b->rel, a->rel) && b->run == a->run)
      return 1;
  }
  return 0;
}

/* Mark the runs and logs behind every linked claim; with none, the runs
 * of the seeds submission.json names (a seed-0 rerun beside the listed
 * 42, 1337 and 2026 is not the claim's, PR #2018), else all; of the
 * attempts at one seed in one file, the last. */
static void mark_claimed(submission *s, const sub_json *j) {
  int any = s->link.n_uses > 0;
  for (size_t i = 0; i < s->link.n_uses; i++) mark(s, &s->link.uses[i]);
  for (size_t i = 0; j && i < j->n_claims; i++)
    if (j->claims[i].linked) {
      mark(s, &j->claims[i].use);
      any = 1;
    }
  if (any) {
    for (size_t i = 0; i < s->n_logs; i++) /* a copy stands with its original */
      if (s->logs[i].copy_of >= 0) s->logs[i].backs_claim = s->logs[s->logs[i].copy_of].backs_claim;
    return;
  }
  int named = 0;
  for (size_t r = 0; r < s->n_runs; r++) named |= sub_json_lists_seed(j, s->runs[r].seed);
  for (size_t r = 0; r < s->n_runs; r++)
    s->runs[r].claimed = !named || sub_json_lists_seed(j, s->runs[r].seed);
  for (size_t i = 0; i < s->n_logs; i++)
    s->logs[i].backs_claim = s->runs[s->logs[i].run].claimed && !superseded(s, i);
}

void submission_link(submission *s, finding_list *f) {
  find_copies(s);
  if (group_runs(s)) {
    f->oom = 1;
    return;
  }
  sub_json *j = NULL;
  for (size_t i = 0; i < s->n_json && !j; i++)
    if (s->json[i].root) j = &s->json[i];
  for (size_t i = 0; j && i < j->n_claims; i++) link_seed_claim(s, &j->claims[i]);
  link_top(s, j);
  mark_claimed(s, j);
}

void submission_runs_free(submission *s) {
  for (size_t r = 0; r < s->n_runs; r++) free(s->runs[r].logs);
  free(s->runs);
  free(s->link.uses);
  s->runs = NULL;
  s->n_runs = 0;
  memset(&s->link, 0, sizeof s->link);
}
