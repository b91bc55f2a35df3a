/* CONFIG_MISMATCH. The runs of one claim must be runs of one
 * configuration: a claimed mean over seeds is only a mean over seeds if
 * nothing else changed (challenge README, "Submission Process": "enough
 * run logs to show at p < 0.01"). Maintainers refuse a mean whose runs
 * differ: "A leaderboard row needs a 3-seed mean from the same submitted
 * configuration" (PR #2124).
 *
 * Compared: the settings printed by the runs the claim rests on (the logs
 * whose final metrics it uses, and their runs' training logs), each key
 * that two of them print. Only settings that change training or
 * evaluation count: paths (any value with a '/'; keys ending _dir, _path,
 * _file, _root), run and test ids, dates, free text (a `hypothesis` key),
 * the seed itself (also under another name, "s:42"), values the shipped
 * code computes from the seed (a loader's stride, verifier/seed_derived.h),
 * and keys only one log prints are not compared; neither are TTT settings when the claimed
 * metric is not a TTT evaluation. An error when the claim is a mean over
 * the differing runs; a warning when it is one run's number and the
 * others are shown beside it, or when the claim links to no run, and on
 * the non-record track, which accepts a submission for what it shows, not
 * its number (rule_claims.c). One finding per set of runs compared,
 * naming every key that differs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/rules.h"
#include "verifier/seed_derived.h"
#include "verifier/shipped_text.h"

#define MAX_KEYS_SHOWN 8

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int in_list(const char *k, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(k, list[i])) return 1;
  return 0;
}

static int is_number(const char *v, double *out) {
  char *end;
  if (!*v) return 0;
  *out = strtod(v, &end);
  return *end == 0;
}

/* A number with a time unit: "546.7s", "600ms", "8.8m". */
static int is_duration(const char *v) {
  char *end;
  if (!*v) return 0;
  strtod(v, &end);
  return end != v &&
         (!strcmp(end, "s") || !strcmp(end, "ms") || !strcmp(end, "m") || !strcmp(end, "h"));
}

int hparam_incidental(const char *key, const char *a, const char *b, int64_t seed_a,
                      int64_t seed_b) {
  static const char *const per_run[] = {
      "run_id", "runid", "id", "logfile", "log_file", "log_path", "log_dir", "rank",
      "local_rank", "world_rank", "is_main_process", "master_process", "hostname", "host",
      "node", "git_commit", "git_hash", "git_sha", "commit", "date", "time", "timestamp",
      "start_time", "datetime", "hypothesis", "notes", "note", "description", "desc",
      "comment", "comments", "tag", "tags", "message", "msg", "run_name", "exp_name",
      "experiment", "experiment_name", "name", "label", "title", "test_id", "job_id"};
  if (strstr(key, "seed") || in_list(key, per_run, sizeof per_run / sizeof *per_run)) return 1;
  if (ends_with(key, "_dir") || ends_with(key, "_path") || ends_with(key, "_file") ||
      ends_with(key, "_files") || ends_with(key, "_root") || ends_with(key, "_id") ||
      !strncmp(key, "wandb", 5))
    return 1;
  if (strchr(a, '/') || strchr(b, '/')) return 1;
  if (ends_with(key, "_date") || !strcmp(key, "run_kind")) return 1;
  /* durations the run measured (inner_ttt_eval_time:546.7s); settings
   * print bare numbers (max_wallclock_seconds:600.000) */
  if (is_duration(a) && is_duration(b)) return 1;
  double x, y;
  /* the seed under another name: each log's value is its own seed */
  if (seed_a >= 0 && seed_b >= 0 && is_number(a, &x) && is_number(b, &y) && x == (double)seed_a &&
      y == (double)seed_b)
    return 1;
  return 0;
}

/* Same setting: equal text, or equal numbers written differently (600 / 600.0). */
static int same_value(const char *a, const char *b) {
  double x, y;
  return !strcmp(a, b) || (is_number(a, &x) && is_number(b, &y) && x == y);
}

static int is_ttt_key(const char *k) {
  return !strncmp(k, "ttt", 3) || strstr(k, "_ttt") != NULL;
}

/* 1 if a shipped script (a self-extracting one decoded) prints key from
 * the seed: each run's own value, as the seed is
 * (verifier/seed_derived.h). */
static int printed_from_seed(const submission *s, const char *key) {
  const shipped_texts *t = s->texts;
  for (size_t i = 0; t && i < t->n; i++)
    if (t->v[i].lexed && seed_derived_key(&t->v[i].src, key)) return 1;
  return 0;
}

typedef struct cmp_set {
  size_t logs[64];
  size_t n;
} cmp_set;

static void set_add(cmp_set *c, size_t log) {
  for (size_t i = 0; i < c->n; i++)
    if (c->logs[i] == log) return;
  if (c->n < 64) c->logs[c->n++] = log;
}

/* The logs of c (after a) that print key x with another value, appended
 * to msg as "key is V in b.log:L but R in a.log:L". Returns how many. */
static size_t differ(const submission *s, const cmp_set *c, size_t a, const log_kv *x, char *msg,
                     size_t cap, size_t *len, const char **file, uint32_t *line) {
  const sub_log *ra = &s->logs[c->logs[a]];
  size_t n = 0;
  for (size_t b = a + 1; b < c->n; b++) {
    const sub_log *rb = &s->logs[c->logs[b]];
    const log_kv *y = log_hparam(&rb->log, x->key);
    if (!y || same_value(x->value, y->value) ||
        hparam_incidental(x->key, x->value, y->value, ra->seed, rb->seed) ||
        printed_from_seed(s, x->key))
      continue;
    if (!*file) *file = rb->rel, *line = y->line;
    if (msg && *len < cap)
      *len += (size_t)snprintf(msg + *len, cap - *len, "%s%s is %.40s in %s:%u but %.40s in %s:%u",
                               *len ? "; " : "", x->key, y->value, rb->rel, y->line, x->value,
                               ra->rel, x->line);
    n++;
  }
  return n;
}

/* Compare every key the logs of c print; one finding naming the keys. */
static void compare(const submission *s, const cmp_set *c, int ttt_counts, severity sev,
                    const char *what, finding_list *f) {
  char msg[2000];
  size_t len = 0, keys = 0;
  const char *file = NULL;
  uint32_t line = 0;
  msg[0] = 0;
  for (size_t a = 0; a < c->n; a++) {
    const sub_log *ra = &s->logs[c->logs[a]];
    for (size_t k = 0; k < ra->log.n_hparams; k++) {
      const log_kv *x = &ra->log.hparams[k];
      if (log_hparam(&ra->log, x->key) != x || (!ttt_counts && is_ttt_key(x->key))) continue;
      int first = 1; /* each key from the first log that prints it */
      for (size_t p = 0; p < a && first; p++) first = !log_hparam(&s->logs[c->logs[p]].log, x->key);
      if (first &&
          differ(s, c, a, x, keys < MAX_KEYS_SHOWN ? msg : NULL, sizeof msg, &len, &file, &line))
        keys++;
    }
  }
  if (!keys) return;
  if (keys > MAX_KEYS_SHOWN && len < sizeof msg)
    snprintf(msg + len, sizeof msg - len, "; and %zu more", keys - MAX_KEYS_SHOWN);
  findings_add(f, "CONFIG_MISMATCH", sev, file, line, "%s differ in %zu setting%s: %s", what, keys,
               keys == 1 ? "" : "s", msg);
}

/* The first training log of run r that is not a copy, else its first log. */
static size_t training_log(const submission *s, size_t r) {
  const sub_run *run = &s->runs[r];
  for (size_t k = 0; k < run->n_logs; k++)
    if (s->logs[run->logs[k]].trains && s->logs[run->logs[k]].copy_of < 0) return run->logs[k];
  return run->logs[0];
}

/* The last final metric of run r's last log with one, and that log. */
static const log_metric *run_final(const submission *s, size_t r, size_t *log) {
  const sub_run *run = &s->runs[r];
  for (size_t k = run->n_logs; k-- > 0;) {
    const log_metric *m = log_final_metric(&s->logs[run->logs[k]].log);
    if (m && s->logs[run->logs[k]].copy_of < 0) {
      *log = run->logs[k];
      return m;
    }
  }
  return NULL;
}

void rule_config(const submission *s, finding_list *f) {
  const sub_json *j = submission_claims(s);
  cmp_set used = {0}, trained = {0};
  int ttt = 0, per_run[64] = {0};
  size_t n_runs = 0;
  for (size_t i = 0; i < s->link.n_uses; i++) {
    const sub_use *u = &s->link.uses[i];
    ttt |= strstr(u->m->base, "ttt") != NULL;
    if (u->run < 64 && !per_run[u->run]++) n_runs++;
    set_add(&used, u->log);
  }
  int seeds_linked = j && j->n_claims;
  for (size_t i = 0; j && i < j->n_claims; i++) {
    const sub_seed_claim *cl = &j->claims[i];
    if (!cl->has_bpb) continue;
    if (!cl->linked) {
      seeds_linked = 0;
      continue;
    }
    ttt |= strstr(cl->use.m->base, "ttt") != NULL;
    if (cl->use.run < 64 && !per_run[cl->use.run]++) n_runs++;
    set_add(&used, cl->use.log);
  }
  severity sev = SEV_WARNING;
  const char *what = "the runs shown beside the claimed one";
  if (n_runs >= 2 && (s->link.fit == FIT_MEAN || seeds_linked)) {
    sev = s->track == TRACK_RECORD ? SEV_ERROR : SEV_WARNING;
    what = "the runs the claim averages";
  } else {
    /* One claimed run (or none): the other runs of the folder are its evidence. */
    used.n = 0;
    ttt = 0;
    for (size_t r = 0; r < s->n_runs; r++) {
      size_t log;
      const log_metric *m = run_final(s, r, &log);
      if (!m) continue;
      set_add(&used, log);
      ttt |= strstr(m->base, "ttt") != NULL;
    }
    if (s->link.fit != FIT_ONE_RUN) what = "the runs of the folder";
  }
  if (used.n < 2) return;
  for (size_t i = 0; i < used.n; i++) {
    size_t u = used.logs[i]; /* a training log that holds the score is its run's training */
    set_add(&trained, s->logs[u].trains ? u : training_log(s, s->logs[u].run));
  }
  compare(s, &used, ttt, sev, what, f);
  /* The trainings behind separate evaluation logs are compared too. */
  int same = trained.n == used.n;
  for (size_t i = 0; i < trained.n && same; i++) same = trained.logs[i] == used.logs[i];
  if (!same) compare(s, &trained, ttt, sev, "the trainings of those runs", f);
}
