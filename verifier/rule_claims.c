/* CLAIM_MISMATCH. Challenge README, "Submission Process": the
 * submission.json "includes your name, GitHub ID, val_bpb, and related
 * metadata" and the train log is "automatically produced by your script";
 * a claimed score must be one the logs print. Records have been removed
 * for claims no log supports (PR #86: the claimed 1.15015359 was in none
 * of the folder's logs).
 *
 * The claim is linked to the runs whose final metrics it uses
 * (submission_runs.c). Severity follows what a verdict rests on:
 *  - error: a claimed val_bpb (top level or per seed) that is in no log at
 *    the claim's printed precision and is not the mean over runs of the
 *    claimed seeds: the score has no evidence;
 *  - warning: a val_bpb that is one run's final metric while the folder
 *    shows other runs beside it (early records claimed seed 1337's number
 *    and added two more seeds as evidence, PR #49): the message gives both
 *    numbers; a val_loss or byte count no log prints (the leaderboard
 *    ranks val_bpb, and sizes are judged by SIZE_OVER_LIMIT); a per-seed
 *    claim found under a file named for the seed whose log prints another.
 * When a claim fails, the message says what it matches instead: a
 * pre-quantization or diagnostic line, an in-training validation line.
 *
 * On the non-record track the errors are warnings: such a submission is
 * accepted "given [it is] sufficiently unique or interesting" [FAQ:
 * process for accepting], not for its number, and the maintainers merged
 * non-record folders whose claim no log prints (LegendreGPT: 1.2266
 * claimed, the log's 1.2353). A folder whose logs hold no final metric at
 * all has no claim to check here: MISSING_FILE, LOG_UNREADABLE or
 * NO_FINAL_METRIC says why. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/rules.h"

#define LIST_MAX 6 /* runs named in a message, then "..." */

typedef enum { F_BPB, F_LOSS } field;

static log_num metric_value(const log_metric *m, field fl) {
  return fl == F_BPB ? m->val_bpb : m->val_loss;
}

/* A line of l of the given class (final or not) agreeing with c. */
static const log_metric *find_match(const pg_log *l, double c, int dec, field fl, int final) {
  for (size_t i = 0; i < l->n_metrics; i++) {
    const log_metric *m = &l->metrics[i];
    if ((m->kind == METRIC_FINAL) != final) continue;
    log_num v = metric_value(m, fl);
    if (claim_agrees(c, dec, v.v, v.decimals)) return m;
  }
  return NULL;
}

/* A run's score: the last final metric of its last log that has one. */
static const sub_use *run_score(const submission *s, size_t r, sub_use *out) {
  const sub_run *run = &s->runs[r];
  for (size_t k = run->n_logs; k-- > 0;) {
    const sub_log *lg = &s->logs[run->logs[k]];
    const log_metric *m = lg->copy_of < 0 ? log_final_metric(&lg->log) : NULL;
    if (m) {
      *out = (sub_use){r, run->logs[k], m};
      return out;
    }
  }
  return NULL;
}

/* ":LINE" of m where lg is one of several runs of one file (so that a list
 * tells them apart), else "". */
static const char *part_line(const sub_log *lg, const log_metric *m, char *buf, size_t cap) {
  buf[0] = 0;
  if (lg->n_parts > 1) snprintf(buf, cap, ":%u", m->line);
  return buf;
}

/* "1.20637 = mean of 3 runs (a.log 1.2058, b.log 1.2062, ...)" over the
 * listed seeds' runs when submission.json lists seeds, else every run. */
static double runs_mean(const submission *s, const sub_json *j, field fl, char *buf, size_t cap,
                        size_t *n_out) {
  int only_listed = 0;
  for (size_t r = 0; r < s->n_runs; r++)
    only_listed |= s->runs[r].seed >= 0 && sub_json_lists_seed(j, s->runs[r].seed);
  double sum = 0;
  size_t n = 0, len = 0;
  char where[16];
  buf[0] = 0;
  for (size_t r = 0; r < s->n_runs; r++) {
    sub_use u;
    if (only_listed && !(s->runs[r].seed >= 0 && sub_json_lists_seed(j, s->runs[r].seed))) continue;
    if (!run_score(s, r, &u)) continue;
    log_num v = metric_value(u.m, fl);
    if (!isfinite(v.v)) continue; /* a score line without val_loss */
    sum += v.v;
    if (n < LIST_MAX && len < cap)
      len +=
          (size_t)snprintf(buf + len, cap - len, "%s%s%s %.*f", n ? ", " : "", s->logs[u.log].rel,
                           part_line(&s->logs[u.log], u.m, where, sizeof where), v.decimals, v.v);
    else if (n == LIST_MAX && len < cap)
      len += (size_t)snprintf(buf + len, cap - len, ", ...");
    n++;
  }
  *n_out = n;
  return n ? sum / (double)n : NAN;
}

/* Say what a claim that no final metric supports matches instead. */
static void describe(const submission *s, double c, int dec, field fl, char *buf, size_t cap) {
  for (size_t i = 0; i < s->n_logs; i++) {
    const sub_log *lg = &s->logs[i];
    const log_metric *m = find_match(&lg->log, c, dec, fl, 0);
    if (m) {
      snprintf(buf, cap, "it matches a %s line, not a final metric (%s, %s:%u)",
               log_metric_kind_name(m->kind), m->prefix, lg->rel, m->line);
      return;
    }
    for (size_t k = 0; fl == F_BPB && k < lg->log.n_val; k++) {
      const log_val_step *v = &lg->log.val[k];
      if (claim_agrees(c, dec, v->val_bpb.v, v->val_bpb.decimals)) {
        snprintf(buf, cap, "it matches an in-training validation line (step %lld, %s:%u)",
                 (long long)v->step, lg->rel, v->line);
        return;
      }
    }
  }
  snprintf(buf, cap, "no metric line of the logs has it");
}

/* Seeds submission.json lists that no run has (a seed whose claim was
 * found under a file named for it, or in a log that gives no seed, is
 * reported with that claim). */
static void missing_seeds(const submission *s, const sub_json *j, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = 0;
  for (size_t i = 0; i < j->n_seeds && len < cap; i++) {
    int have = 0;
    for (size_t r = 0; r < s->n_runs && !have; r++) have = s->runs[r].seed == j->seeds[i];
    for (size_t k = 0; k < j->n_claims && !have; k++)
      have = j->claims[k].seed == j->seeds[i] &&
             (j->claims[k].by_file_name || j->claims[k].by_unseeded);
    if (!have)
      len += (size_t)snprintf(buf + len, cap - len, "%s%lld", len ? ", " : "; seeds listed without a log: ",
                              (long long)j->seeds[i]);
  }
}

/* The mean over runs of final metric base (each run's last line of it,
 * the exact twin preferred), for a claim that is one run's value. */
static double base_mean(const submission *s, const char *base, size_t *n_out) {
  double sum = 0;
  size_t n = 0;
  for (size_t r = 0; r < s->n_runs; r++) {
    const sub_run *run = &s->runs[r];
    const log_metric *best = NULL;
    for (size_t k = 0; k < run->n_logs; k++) {
      const sub_log *lg = &s->logs[run->logs[k]];
      for (size_t i = 0; lg->copy_of < 0 && i < lg->log.n_metrics; i++) {
        const log_metric *m = &lg->log.metrics[i];
        if (m->kind == METRIC_FINAL && !strcmp(m->base, base) && (!best || m->exact || !best->exact))
          best = m;
      }
    }
    if (best) sum += best->val_bpb.v, n++;
  }
  *n_out = n;
  return n ? sum / (double)n : NAN;
}

/* A top-level mean this close to the mean of per-seed claims the logs all
 * support, or to the mean of the claimed runs, is an arithmetic or
 * rounding slip (PR #1784: 1.07080923 against 1.07080613; PR #1050's
 * 1.1193666666666668, the mean of the runs' 4-digit lines, against
 * 1.11937967), not a score without evidence: two orders of magnitude
 * below the 0.005 nats a record must gain. */
#define MEAN_SLIP 1e-4

/* The mean of the logged values behind the per-seed val_bpb claims, in
 * *n, when every such claim is linked to a final metric; else *n = 0. */
static double seed_claims_mean(const sub_json *j, size_t *n) {
  double sum = 0;
  *n = 0;
  for (size_t i = 0; i < j->n_claims; i++) {
    const sub_seed_claim *cl = &j->claims[i];
    if (!cl->has_bpb) continue;
    if (!cl->linked) return *n = 0, NAN;
    sum += cl->use.m->val_bpb.v;
    (*n)++;
  }
  return *n ? sum / (double)*n : NAN;
}

/* The top-level val_bpb as linked (submission_runs.c): an error when it is
 * unsupported (unless it is a mean counting a seed twice: SEED_DUPLICATE's),
 * a warning when it is one run's number beside others or listed seeds lack
 * a log. */
/* Unsupported claims: errors on the record track only (see the top). */
static severity unsupported_sev(const submission *s) {
  return s->track == TRACK_RECORD ? SEV_ERROR : SEV_WARNING;
}

static void check_top_bpb(const submission *s, const sub_json *j, finding_list *f) {
  double c = j->val_bpb;
  int dec = j->val_bpb_dec;
  char runs[600], why[300], miss[200];
  size_t n;
  double mean = runs_mean(s, j, F_BPB, runs, sizeof runs, &n);
  const sub_link *l = &s->link;
  if (l->fit == FIT_ONE_RUN) {
    const sub_use *u = &l->uses[0];
    size_t nb;
    double bm = base_mean(s, u->m->base, &nb);
    char seed[32] = "unknown";
    if (s->runs[u->run].seed >= 0) snprintf(seed, sizeof seed, "%lld", (long long)s->runs[u->run].seed);
    findings_add(f, "CLAIM_MISMATCH", SEV_WARNING, j->rel, 0,
                 "%s %.*f is the %s of one run (seed %s, %s:%u), not a mean over the runs the "
                 "folder shows: over its %zu runs %s averages %.8f; their scores: %s",
                 j->val_bpb_key, dec, c, u->m->base, seed, s->logs[u->log].rel, u->m->line, nb,
                 u->m->base, bm, runs);
  }
  if (l->fit == FIT_MEAN || l->fit == FIT_ONE_RUN) {
    missing_seeds(s, j, miss, sizeof miss);
    if (miss[0])
      findings_add(f, "CLAIM_MISMATCH", SEV_WARNING, j->rel, 0,
                   "%s %.*f is supported by the logs, but %s", j->val_bpb_key, dec, c, miss + 2);
  } else if (l->fit == FIT_UNSUPPORTED && !l->seeds_twice) {
    size_t ns;
    double sm = seed_claims_mean(j, &ns);
    if (ns >= 2 && fabs(c - sm) <= MEAN_SLIP) {
      findings_add(f, "CLAIM_MISMATCH", SEV_WARNING, j->rel, 0,
                   "%s %.*f is not quite the mean of the %zu per-seed claims, each of which its "
                   "log prints: their mean is %.8f (%.1e apart)",
                   j->val_bpb_key, dec, c, ns, sm, fabs(c - sm));
      return;
    }
    if (n >= 2 && fabs(c - mean) <= MEAN_SLIP) {
      findings_add(f, "CLAIM_MISMATCH", SEV_WARNING, j->rel, 0,
                   "%s %.*f is not quite the mean of the claimed runs: the mean of %zu runs is "
                   "%.8f (%.1e apart: %s)",
                   j->val_bpb_key, dec, c, n, mean, fabs(c - mean), runs);
      return;
    }
    describe(s, c, dec, F_BPB, why, sizeof why);
    missing_seeds(s, j, miss, sizeof miss);
    findings_add(f, "CLAIM_MISMATCH", unsupported_sev(s), j->rel, 0,
                 "%s %.*f is in no log at %d decimals and is not the mean of the claimed runs: "
                 "the mean of %zu run%s is %.8f (%s); %s%s",
                 j->val_bpb_key, dec, c, dec, n, n == 1 ? "" : "s", mean, runs, why, miss);
  }
}

/* val_loss: a warning when neither the lines the val_bpb claim uses, nor
 * any final metric line, nor the mean over runs has it. */
static void check_top_loss(const submission *s, const sub_json *j, finding_list *f) {
  double c = j->val_loss;
  int dec = j->val_loss_dec;
  const sub_link *l = &s->link;
  if (l->n_uses) {
    double sum = 0;
    int vdec = 17;
    for (size_t i = 0; i < l->n_uses; i++) {
      log_num v = l->uses[i].m->val_loss;
      sum += v.v;
      if (v.decimals < vdec) vdec = v.decimals;
    }
    if (!isfinite(sum)) return; /* the scores print no val_loss to hold it to */
    if (claim_agrees(c, dec, sum / (double)l->n_uses, vdec)) return;
  }
  for (size_t i = 0; i < s->n_logs; i++)
    if (find_match(&s->logs[i].log, c, dec, F_LOSS, 1)) return;
  char runs[600];
  size_t n;
  double mean = runs_mean(s, j, F_LOSS, runs, sizeof runs, &n);
  if (!n) return;
  if (claim_agrees(c, dec, mean, 8)) return;
  double bmean = runs_mean(s, j, F_BPB, runs, sizeof runs, &n);
  int is_bpb = claim_agrees(c, dec, bmean, 8);
  for (size_t i = 0; i < s->n_logs && !is_bpb; i++)
    is_bpb = find_match(&s->logs[i].log, c, dec, F_BPB, 1) != NULL;
  if (is_bpb)
    findings_add(f, "CLAIM_MISMATCH", SEV_WARNING, j->rel, 0,
                 "val_loss %.*f is a val_bpb value of the logs, not a val_loss", dec, c);
  else
    findings_add(f, "CLAIM_MISMATCH", SEV_WARNING, j->rel, 0,
                 "val_loss %.*f is in no log; the mean over %zu run%s is %.8f (the leaderboard "
                 "ranks val_bpb)",
                 dec, c, n, n == 1 ? "" : "s", mean);
}

static int run_of_seed(const submission *s, int64_t seed) {
  for (size_t r = 0; r < s->n_runs; r++)
    if (s->runs[r].seed == seed) return 1;
  return 0;
}

/* Bytes b as log l prints them: a labelled total, a labelled model plus a
 * code size, or (model_ok) the labelled compressed model alone. */
static int bytes_supported(const pg_log *l, int64_t b, int model_ok) {
  for (size_t i = 0; i < l->n_totals; i++)
    if (l->totals[i].label[0] && l->totals[i].bytes == b) return 1;
  for (size_t i = 0; i < l->n_models; i++) {
    if (!l->models[i].label[0]) continue;
    if (model_ok && l->models[i].bytes == b) return 1;
    for (size_t k = 0; k < l->n_code; k++)
      if (l->models[i].bytes + l->code[k].bytes == b) return 1;
  }
  return 0;
}

/* Whether any run of the folder has a final metric. */
static int any_final(const submission *s) {
  for (size_t r = 0; r < s->n_runs; r++)
    if (sub_run_has_final(s, &s->runs[r])) return 1;
  return 0;
}

/* One seed_results entry: its val_bpb (an error when unlinked), val_loss
 * and artifact_bytes (warnings). */
static void check_seed_claim(const submission *s, const sub_json *j, const sub_seed_claim *cl,
                             finding_list *f) {
  char why[300];
  long long seed = (long long)cl->seed;
  if (cl->has_bpb && !cl->linked && any_final(s)) {
    int dec = cl->bpb_dec;
    describe(s, cl->val_bpb, dec, F_BPB, why, sizeof why);
    findings_add(
        f, "CLAIM_MISMATCH", unsupported_sev(s), j->rel, 0,
        "seed %lld: val_bpb %.*f is not a final metric of %s; %s", seed, dec, cl->val_bpb,
        run_of_seed(s, cl->seed) ? "any log of that seed" : "any log (no log is of that seed)",
        why);
  } else if (cl->linked && cl->by_unseeded) {
    const sub_log *lg = &s->logs[cl->use.log];
    findings_add(f, "CLAIM_MISMATCH", SEV_WARNING, j->rel, 0,
                 "seed %lld: val_bpb is the final metric of %s (%s:%u), which gives no seed: that "
                 "it is seed %lld's run rests on the claim alone",
                 seed, lg->rel, lg->rel, cl->use.m->line, seed);
  } else if (cl->linked && cl->by_file_name) {
    const sub_log *lg = &s->logs[cl->use.log];
    findings_add(f, "CLAIM_MISMATCH", SEV_WARNING, j->rel, 0,
                 "seed %lld: val_bpb is the final metric of %s (%s:%u), whose log prints seed "
                 "%lld: the file name and the printed seed disagree",
                 seed, lg->rel, lg->rel, lg->seed_line, (long long)lg->seed);
  }
  const sub_log *own = cl->linked ? &s->logs[cl->use.log] : NULL;
  if (cl->has_loss && own) {
    int dec = cl->loss_dec;
    if (!find_match(&own->log, cl->val_loss, dec, F_LOSS, 1))
      findings_add(f, "CLAIM_MISMATCH", SEV_WARNING, j->rel, 0,
                   "seed %lld: val_loss %.*f is not a final metric of %s", seed, dec, cl->val_loss,
                   own->rel);
  }
  if (cl->has_bytes && own && !bytes_supported(&own->log, cl->artifact_bytes, 1)) {
    int any = 0; /* the bytes of the run's training log, if the claim is an evaluation's */
    const sub_run *r = &s->runs[cl->use.run];
    for (size_t k = 0; k < r->n_logs && !any; k++)
      any = bytes_supported(&s->logs[r->logs[k]].log, cl->artifact_bytes, 1);
    if (!any)
      findings_add(f, "CLAIM_MISMATCH", SEV_WARNING, j->rel, 0,
                   "seed %lld: artifact_bytes %lld is not a size that %s prints", seed,
                   (long long)cl->artifact_bytes, own->rel);
  }
}

/* "15872848 (train_v0.txt:7), ..." the labelled totals the logs print. */
static void logged_totals(const submission *s, char *buf, size_t cap) {
  size_t len = 0, n = 0;
  buf[0] = 0;
  for (size_t i = 0; i < s->n_logs && len < cap; i++) {
    const sub_log *lg = &s->logs[i];
    const log_bytes *t = NULL;
    for (size_t k = 0; k < lg->log.n_totals; k++)
      if (lg->log.totals[k].label[0]) t = &lg->log.totals[k];
    if (!t || lg->copy_of >= 0) continue;
    if (n++ == LIST_MAX) {
      len += (size_t)snprintf(buf + len, cap - len, ", ...");
      break;
    }
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld (%s:%u)", len ? ", " : "",
                            (long long)t->bytes, lg->rel, t->line);
  }
}

/* bytes_total and bytes_code: warnings when no log prints them. */
static void check_bytes(const submission *s, const sub_json *j, finding_list *f) {
  char totals[600];
  logged_totals(s, totals, sizeof totals);
  if (j->has_bytes_total) {
    int ok = 0;
    for (size_t i = 0; i < s->n_logs && !ok; i++)
      ok = bytes_supported(&s->logs[i].log, j->bytes_total, 0);
    if (!ok && s->n_logs)
      findings_add(f, "CLAIM_MISMATCH", SEV_WARNING, j->rel, 0,
                   "bytes_total %lld is not a total any log prints%s%s", (long long)j->bytes_total,
                   totals[0] ? "; the logs print " : "", totals);
  }
  if (j->has_bytes_code) {
    int ok = s->entry.rel && s->entry.size == j->bytes_code;
    for (size_t i = 0; i < s->n_logs && !ok; i++)
      for (size_t k = 0; k < s->logs[i].log.n_code && !ok; k++)
        ok = s->logs[i].log.code[k].bytes == j->bytes_code;
    if (!ok)
      findings_add(f, "CLAIM_MISMATCH", SEV_WARNING, j->rel, 0,
                   "bytes_code %lld is neither a code size a log prints nor the size of "
                   "train_gpt.py",
                   (long long)j->bytes_code);
  }
}

void rule_claims(const submission *s, finding_list *f) {
  const sub_json *j = submission_claims(s);
  if (!j) return;
  if (j->has_val_bpb && s->link.fit != FIT_NONE) check_top_bpb(s, j, f);
  if (j->has_val_loss) check_top_loss(s, j, f);
  for (size_t i = 0; i < j->n_claims; i++) check_seed_claim(s, j, &j->claims[i], f);
  check_bytes(s, j, f);
}
