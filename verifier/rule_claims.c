/* CLAIM_MISMATCH. Challenge README, "Submission Process": the
 * submission.json "includes your name, GitHub ID, val_bpb, and related
 * metadata" and the train log is "automatically produced by your script";
 * every number claimed must be one the logs print. Records have been
 * removed for claims no log supports.
 *
 * val_bpb / val_loss: with one log, a final metric line of it; with
 * several, the mean over the logs of one final metric. A per-seed claim:
 * a final metric line of that seed's log. Bytes: a logged labelled total
 * (or labelled model + code size). When a claim fails, the message says
 * what it does match: one seed only, the mean, or a pre-quantization or
 * diagnostic line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/rules.h"

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

typedef enum { F_BPB, F_LOSS } field;

static log_num metric_value(const log_metric *m, field fl) {
  return fl == F_BPB ? m->val_bpb : m->val_loss;
}

static const char *field_name(field fl) { return fl == F_BPB ? "val_bpb" : "val_loss"; }

/* The first metric line of l of the given class agreeing with c. */
static const log_metric *find_match(const pg_log *l, double c, int dec, field fl, int final) {
  for (size_t i = 0; i < l->n_metrics; i++) {
    const log_metric *m = &l->metrics[i];
    if ((m->kind == METRIC_FINAL) != final) continue;
    log_num v = metric_value(m, fl);
    if (claim_agrees(c, dec, v.v, v.decimals)) return m;
  }
  return NULL;
}

/* The last value of the final metric `base` in l, the exact twin preferred. */
static const log_metric *last_of_base(const pg_log *l, const char *base) {
  const log_metric *best = NULL;
  for (size_t i = 0; i < l->n_metrics; i++) {
    const log_metric *m = &l->metrics[i];
    if (m->kind != METRIC_FINAL || strcmp(m->base, base)) continue;
    if (!best || m->exact || !best->exact) best = m;
  }
  return best;
}

/* Does c agree with the mean over all logs of some final metric? Fills
 * *mean with the mean of each log's score when none agrees. */
static int mean_agrees(const submission *s, double c, int dec, field fl, double *mean,
                       char *base_out, size_t base_cap) {
  const pg_log *first = &s->logs[0].log;
  for (size_t k = 0; k < first->n_metrics; k++) {
    const log_metric *m0 = &first->metrics[k];
    if (m0->kind != METRIC_FINAL) continue;
    double sum = 0;
    int vdec = 17, all = 1;
    for (size_t i = 0; i < s->n_logs && all; i++) {
      const log_metric *m = last_of_base(&s->logs[i].log, m0->base);
      if (!m) all = 0;
      else {
        log_num v = metric_value(m, fl);
        sum += v.v;
        if (v.decimals < vdec) vdec = v.decimals;
      }
    }
    if (all && claim_agrees(c, dec, sum / (double)s->n_logs, vdec)) {
      snprintf(base_out, base_cap, "%s", m0->base);
      return 1;
    }
  }
  double sum = 0;
  size_t n = 0;
  for (size_t i = 0; i < s->n_logs; i++) {
    const log_metric *m = log_final_metric(&s->logs[i].log);
    if (m) sum += metric_value(m, fl).v, n++;
  }
  *mean = n ? sum / (double)n : NAN;
  return 0;
}

/* Say what a failed claim matches instead, in buf. */
static void describe(const submission *s, const sub_log *own, double c, int dec, field fl,
                     char *buf, size_t cap) {
  for (size_t i = 0; i < s->n_logs; i++) {
    const sub_log *lg = &s->logs[i];
    const log_metric *m = find_match(&lg->log, c, dec, fl, 1);
    if (m && lg != own) {
      snprintf(buf, cap, "it matches the final metric of one seed only (%s, seed %lld, %s:%u)",
               m->prefix, (long long)lg->seed, lg->rel, m->line);
      return;
    }
  }
  for (size_t i = 0; i < s->n_logs; i++) {
    const sub_log *lg = &s->logs[i];
    if (own && lg != own) continue;
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
  snprintf(buf, cap, "no log line has it");
}

static void check_top(const submission *s, const sub_json *j, double c, field fl,
                      finding_list *f) {
  int dec = decimals_of(c);
  char why[400], base[LOG_LABEL_MAX];
  if (s->n_logs == 1) {
    const sub_log *lg = &s->logs[0];
    const log_metric *fm = log_final_metric(&lg->log);
    if (!fm || find_match(&lg->log, c, dec, fl, 1)) return;
    describe(s, lg, c, dec, fl, why, sizeof why);
    log_num v = metric_value(fm, fl);
    findings_add(f, "CLAIM_MISMATCH", SEV_ERROR, j->rel, 0,
                 "%s %.*f is not supported by the log: its final metric is %.*f (%s:%u); %s",
                 field_name(fl), dec, c, v.decimals, v.v, lg->rel, fm->line, why);
    return;
  }
  double mean;
  if (mean_agrees(s, c, dec, fl, &mean, base, sizeof base)) return;
  describe(s, NULL, c, dec, fl, why, sizeof why);
  findings_add(f, "CLAIM_MISMATCH", SEV_ERROR, j->rel, 0,
               "%s %.*f is not the mean of the %zu seed logs (%.8f); %s", field_name(fl), dec, c,
               s->n_logs, mean, why);
}

static const sub_log *log_of_seed(const submission *s, int64_t seed) {
  for (size_t i = 0; i < s->n_logs; i++)
    if (s->logs[i].seed == seed) return &s->logs[i];
  return NULL;
}

/* Bytes b supported by log l: a labelled total, or labelled model + code. */
static int bytes_supported(const pg_log *l, int64_t b) {
  for (size_t i = 0; i < l->n_totals; i++)
    if (l->totals[i].label[0] && l->totals[i].bytes == b) return 1;
  for (size_t i = 0; i < l->n_models; i++)
    for (size_t k = 0; l->models[i].label[0] && k < l->n_code; k++)
      if (l->models[i].bytes + l->code[k].bytes == b) return 1;
  return 0;
}

static void check_seed_claims(const submission *s, const sub_json *j, finding_list *f) {
  for (size_t i = 0; i < j->n_claims; i++) {
    const sub_seed_claim *cl = &j->claims[i];
    const sub_log *lg = log_of_seed(s, cl->seed);
    if (!lg) {
      findings_add(f, "CLAIM_MISMATCH", SEV_ERROR, j->rel, 0,
                   "seed_results has seed %lld but no log is of that seed", (long long)cl->seed);
      continue;
    }
    char why[400];
    for (int fl = F_BPB; fl <= F_LOSS; fl++) {
      int has = fl == F_BPB ? cl->has_bpb : cl->has_loss;
      double c = fl == F_BPB ? cl->val_bpb : cl->val_loss;
      if (!has) continue;
      int dec = decimals_of(c);
      if (find_match(&lg->log, c, dec, (field)fl, 1)) continue;
      describe(s, lg, c, dec, (field)fl, why, sizeof why);
      findings_add(f, "CLAIM_MISMATCH", SEV_ERROR, j->rel, 0,
                   "seed %lld: %s %.*f is not a final metric of %s; %s", (long long)cl->seed,
                   field_name((field)fl), dec, c, lg->rel, why);
    }
    if (cl->has_bytes && !bytes_supported(&lg->log, cl->artifact_bytes))
      findings_add(f, "CLAIM_MISMATCH", SEV_ERROR, j->rel, 0,
                   "seed %lld: artifact_bytes %lld is not a total that %s prints",
                   (long long)cl->seed, (long long)cl->artifact_bytes, lg->rel);
  }
  for (size_t i = 0; i < j->n_seeds; i++)
    if (!log_of_seed(s, j->seeds[i]))
      findings_add(f, "CLAIM_MISMATCH", SEV_ERROR, j->rel, 0,
                   "seeds lists %lld but no log is of that seed", (long long)j->seeds[i]);
}

static void check_bytes(const submission *s, const sub_json *j, finding_list *f) {
  if (j->has_bytes_total) {
    int ok = 0;
    for (size_t i = 0; i < s->n_logs && !ok; i++) ok = bytes_supported(&s->logs[i].log, j->bytes_total);
    if (!ok)
      findings_add(f, "CLAIM_MISMATCH", SEV_ERROR, j->rel, 0,
                   "bytes_total %lld is not a total any log prints (Total submission size LABEL: "
                   "N bytes)",
                   (long long)j->bytes_total);
  }
  if (j->has_bytes_code) {
    int ok = s->entry.rel && s->entry.size == j->bytes_code;
    for (size_t i = 0; i < s->n_logs && !ok; i++)
      for (size_t k = 0; k < s->logs[i].log.n_code && !ok; k++)
        ok = s->logs[i].log.code[k].bytes == j->bytes_code;
    if (!ok)
      findings_add(f, "CLAIM_MISMATCH", SEV_ERROR, j->rel, 0,
                   "bytes_code %lld is neither a code size a log prints nor the size of "
                   "train_gpt.py",
                   (long long)j->bytes_code);
  }
}

void rule_claims(const submission *s, finding_list *f) {
  const sub_json *j = submission_claims(s);
  if (!j) return;
  size_t scored = 0;
  for (size_t i = 0; i < s->n_logs; i++) scored += log_final_metric(&s->logs[i].log) != NULL;
  if (scored) {
    if (j->has_val_bpb) check_top(s, j, j->val_bpb, F_BPB, f);
    if (j->has_val_loss) check_top(s, j, j->val_loss, F_LOSS, f);
  }
  check_seed_claims(s, j, f);
  check_bytes(s, j, f);
}
