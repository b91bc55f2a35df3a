/* Judging a supervised run: events on the replay's clock, the artifact
 * measured from the files, the claim, and the findings. See
 * replay_external.h. */
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/challenge.h"
#include "common/json_read.h"
#include "verifier/replay_external.h"

/* The stream the log was parsed from: the log file if the program wrote
 * one, else its standard output. */
static const replay_stream *log_source(const replay_run *r, const char **name) {
  if (*r->log_rel && r->log.n_lines) {
    *name = r->log_rel;
    return &r->log;
  }
  *name = "stdout";
  return &r->out;
}

/* Training is over once the log shows anything that follows it. */
static int training_ended(const pg_log *l) {
  if (l->stop.line || l->n_models || l->n_totals || l->n_metrics) return 1;
  if (l->n_train && l->train[l->n_train - 1].step == l->train[l->n_train - 1].total) return 1;
  return l->n_val && l->val[l->n_val - 1].step == l->val[l->n_val - 1].total;
}

/* Validation during training stops the official clock, so the replay
 * does not count it either: for each validation line up to the end of
 * training, the time since the line before it. */
static double validation_pauses(const pg_log *l, const replay_stream *s, uint32_t from, uint32_t to) {
  double sum = 0;
  for (size_t i = 0; i < l->n_val; i++) {
    uint32_t ln = l->val[i].line;
    if (ln <= from || ln > to) continue;
    double gap = replay_stream_line_ms(s, ln) - replay_stream_line_ms(s, ln - 1);
    if (isfinite(gap) && gap > 0) sum += gap;
  }
  return sum;
}

static void derive_timings(const replay_run *r, const replay_stream *s, replay_timings *t) {
  const pg_log *l = &r->parsed;
  memset(t, 0, sizeof *t);
  t->first_step_ms = t->end_train_ms = t->end_eval_ms = NAN;
  t->train_external_ms = t->train_logged_ms = t->step_ms = t->eval_external_ms = NAN;
  t->training_ended = training_ended(l);
  if (l->n_train) {
    t->first_step_line = l->train[0].line;
    t->first_step_ms = replay_stream_line_ms(s, t->first_step_line);
    t->end_train_line = l->train[l->n_train - 1].line;
  }
  if (l->stop.line > t->end_train_line) t->end_train_line = l->stop.line;
  if (t->end_train_line) t->end_train_ms = replay_stream_line_ms(s, t->end_train_line);
  double logged, res, step_ms;
  uint32_t line;
  if (log_train_end(l, &logged, &res, &line, &step_ms) == 0) {
    t->train_logged_ms = logged;
    t->step_ms = step_ms;
  }
  if (t->first_step_line && t->end_train_line) {
    double own = l->train[0].train_ms;
    t->val_pause_ms = validation_pauses(l, s, t->first_step_line, t->end_train_line);
    t->train_external_ms =
        t->end_train_ms - t->first_step_ms + (isfinite(own) ? own : 0) - t->val_pause_ms;
    if (!isfinite(t->step_ms) && l->train[l->n_train - 1].step > 0)
      t->step_ms = t->train_external_ms / (double)l->train[l->n_train - 1].step;
  }
  const log_metric *m = log_final_metric(l);
  if (m) {
    t->end_eval_line = m->line;
    t->end_eval_ms = replay_stream_line_ms(s, m->line);
    if (isfinite(t->end_train_ms)) t->eval_external_ms = t->end_eval_ms - t->end_train_ms;
  }
}

/* ---- artifact and code ---- */

/* The artifact: the file named by --artifact, else the produced file
 * whose size is what the log's last labelled `Serialized model` line
 * reports (the unlabelled line is the raw model). */
static const replay_file *pick_artifact(const replay_ext_opts *o, const replay_run *r,
                                        const log_bytes **logged) {
  *logged = NULL;
  for (size_t i = r->parsed.n_models; i-- > 0;)
    if (r->parsed.models[i].label[0]) {
      *logged = &r->parsed.models[i];
      break;
    }
  for (size_t i = 0; i < r->produced.n; i++) {
    const replay_file *f = &r->produced.v[i];
    if (!strcmp(f->rel, r->log_rel)) continue;
    if (o->artifact ? !strcmp(f->rel, o->artifact)
                    : (*logged && (int64_t)f->bytes == (*logged)->bytes))
      return f;
  }
  return NULL;
}

/* The code counted against the limit: the entry script, i.e. the first
 * word of the command that names a file of the folder (train_gpt.py for
 * `python3 train_gpt.py`), else train_gpt.py. */
static void count_code(const replay_ext_opts *o, const replay_run *r, replay_verdict_in *v) {
  v->code_bytes = -1;
  v->code_file = NULL;
  for (size_t i = 0; o->cmd[i]; i++) {
    const char *w = o->cmd[i];
    if (!strncmp(w, "./", 2)) w += 2;
    for (size_t k = 0; k < r->code.n; k++)
      if (!strcmp(r->code.v[k].rel, w)) {
        v->code_file = r->code.v[k].rel;
        v->code_bytes = (int64_t)r->code.v[k].bytes;
        return;
      }
  }
  for (size_t k = 0; k < r->code.n; k++)
    if (!strcmp(r->code.v[k].rel, "train_gpt.py")) {
      v->code_file = r->code.v[k].rel;
      v->code_bytes = (int64_t)r->code.v[k].bytes;
    }
}

/* ---- the claim ---- */

static double number_at(json_t *j) { return json_is_number(j) ? json_number_value(j) : NAN; }

/* The claim for this seed, in the shapes records use: seed_results
 * {"S": {"val_bpb": X}}, parallel seeds / seed_scores arrays, a single
 * "seed", or a headline val_bpb when the folder names no seeds. */
static double claim_for_seed(json_t *root, uint64_t seed, char *src, size_t cap) {
  char key[32];
  snprintf(key, sizeof key, "%llu", (unsigned long long)seed);
  json_t *per = json_object_get(json_object_get(root, "seed_results"), key);
  if (per) {
    snprintf(src, cap, "seed_results.%s.val_bpb", key);
    return number_at(json_object_get(per, "val_bpb"));
  }
  json_t *seeds = json_object_get(root, "seeds");
  const char *lists[] = {"seed_scores", "seed_val_bpbs", "val_bpbs", NULL};
  for (size_t i = 0; json_is_array(seeds) && i < json_array_size(seeds); i++) {
    json_t *s = json_array_get(seeds, i);
    if (!json_is_integer(s) || (uint64_t)json_integer_value(s) != seed) continue;
    for (const char **k = lists; *k; k++) {
      json_t *arr = json_object_get(root, *k);
      if (json_is_array(arr) && json_array_size(arr) == json_array_size(seeds)) {
        snprintf(src, cap, "%s[%zu]", *k, i);
        return number_at(json_array_get(arr, i));
      }
    }
  }
  json_t *one = json_object_get(root, "seed");
  if (json_is_integer(one) && (uint64_t)json_integer_value(one) == seed) {
    snprintf(src, cap, "val_bpb (the folder's single seed)");
    return number_at(json_object_get(root, "val_bpb"));
  }
  if (!one && !seeds && !json_object_get(root, "seed_results")) {
    snprintf(src, cap, "val_bpb (no per-seed claims)");
    return number_at(json_object_get(root, "val_bpb"));
  }
  *src = 0;
  return NAN;
}

static void read_claim(const replay_ext_opts *o, replay_verdict_in *v, finding_list *f) {
  char pat[4096];
  snprintf(pat, sizeof pat, "%s/submission*.json", o->record_dir);
  glob_t g;
  v->claim_bpb = NAN;
  if (glob(pat, 0, NULL, &g) != 0) {
    findings_add(f, "NO_CLAIM", SEV_WARNING, "submission.json", 0,
                 "the folder has no submission*.json; nothing to compare the result with");
    return;
  }
  const char *base = strrchr(g.gl_pathv[0], '/') + 1;
  json_t *root = NULL;
  pg_error e;
  if (json_read_file(g.gl_pathv[0], REPLAY_CLAIM_MAX_BYTES, &root, &e)) {
    findings_add(f, "JSON_INVALID", SEV_ERROR, base, e.pos_is_line ? (uint32_t)e.pos : 0, "%s",
                 e.msg);
  } else {
    v->claim_bpb = claim_for_seed(root, o->seed, v->claim_source, sizeof v->claim_source);
    if (!isfinite(v->claim_bpb))
      findings_add(f, "NO_CLAIM", SEV_WARNING, base, 0, "no val_bpb claim for seed %llu",
                   (unsigned long long)o->seed);
    json_decref(root);
  }
  globfree(&g);
}

/* ---- findings ---- */

/* Messages a denied operation leaves on stderr: the sandbox blocked a
 * network connection or a write outside the scratch folder. A program that
 * hides the error is still blocked, only not named here. Loopback
 * "Connection refused" is left out: torchrun's own rendezvous retries. */
static const char *const denied[] = {"Read-only file system", "Network is unreachable",
                                     "Temporary failure in name resolution",
                                     "Name or service not known", NULL};

static void scan_denied(const replay_stream *s, const char *name, finding_list *f) {
  uint32_t line = 1;
  for (const char *p = s->text, *end = s->text + s->len; p && p < end; line++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    for (const char *const *d = denied; *d; d++)
      if (memmem(p, len, *d, strlen(*d))) {
        int n = len > 300 ? 300 : (int)len;
        findings_add(f, "SANDBOX_VIOLATION", SEV_ERROR, name, line,
                     "the program tried something the sandbox denies: %.*s", n, p);
        return;
      }
    p = nl ? nl + 1 : NULL;
  }
}

/* The last line of a stream, for messages. */
static void last_line(const replay_stream *s, char *out, size_t cap) {
  size_t end = s->len;
  while (end && (s->text[end - 1] == '\n' || s->text[end - 1] == '\r')) end--;
  size_t start = end;
  while (start && s->text[start - 1] != '\n') start--;
  size_t n = end - start < cap - 1 ? end - start : cap - 1;
  memcpy(out, s->text ? s->text + start : "", n);
  out[n] = 0;
}

static void judge_process(const replay_ext_opts *o, const replay_run *r, const replay_timings *t,
                         const char *logname, finding_list *f) {
  const pg_log *l = &r->parsed;
  if (r->killed) {
    findings_add(f, "KILLED_AT_LIMIT", SEV_ERROR, NULL, 0,
                       "killed at the hard limit, %.1f s after start (train %.0f s + eval %.0f s "
                       "+ grace %.0f s)",
                       r->killed_ms / 1e3, o->budget_train_s, o->budget_eval_s, o->grace_s);
    if (!t->training_ended)
      findings_add(f, "TRAIN_OVER_BUDGET", SEV_ERROR, logname, t->end_train_line,
                         "training had not ended when the run was killed (last step seen: %lld)",
                         l->n_train ? (long long)l->train[l->n_train - 1].step : -1LL);
    else if (!t->end_eval_line)
      findings_add(f, "EVAL_OVER_BUDGET", SEV_ERROR, logname, t->end_train_line,
                         "evaluation had not printed a final metric when the run was killed");
  } else if (r->signaled || r->status != 0) {
    char tail[256];
    last_line(&r->err, tail, sizeof tail);
    findings_add(f, "NONZERO_EXIT", SEV_ERROR, NULL, 0, "the program %s %d%s%s",
                       r->signaled ? "was killed by signal" : "exited with status", r->status,
                       *tail ? "; last stderr line: " : "", tail);
  }
}

static void judge_budgets(const replay_ext_opts *o, const replay_timings *t, const char *logname,
                          finding_list *f) {
  double budget = o->budget_train_s * 1e3, tol = isfinite(t->step_ms) ? t->step_ms : 0;
  if (isfinite(t->train_external_ms) && t->train_external_ms > budget + tol)
    findings_add(f, "TRAIN_OVER_BUDGET", SEV_ERROR, logname, t->end_train_line,
                       "training took %.0f ms on the replay's clock (validation pauses of %.0f ms "
                       "excluded), over %.0f ms plus one step (%.0f ms)",
                       t->train_external_ms, t->val_pause_ms, budget, tol);
  if (isfinite(t->train_logged_ms) && t->train_logged_ms > budget + tol)
    findings_add(f, "TRAIN_OVER_BUDGET", SEV_ERROR, logname, t->end_train_line,
                       "the log's own training clock reads %.0f ms, over %.0f ms plus one step "
                       "(%.0f ms)",
                       t->train_logged_ms, budget, tol);
  if (isfinite(t->eval_external_ms) && t->eval_external_ms > o->budget_eval_s * 1e3)
    findings_add(f, "EVAL_OVER_BUDGET", SEV_ERROR, logname, t->end_eval_line,
                       "evaluation took %.0f ms on the replay's clock (end of training to the "
                       "final metric), over %.0f ms",
                       t->eval_external_ms, o->budget_eval_s * 1e3);
}

static void judge_artifact(const replay_ext_opts *o, const replay_run *r, replay_verdict_in *v,
                           const char *logname, finding_list *f) {
  const log_bytes *logged;
  v->artifact = pick_artifact(o, r, &logged);
  if (!v->artifact) {
    char list[256] = "";
    for (size_t i = 0, used = 0; i < r->produced.n && used < sizeof list - 40; i++)
      used += (size_t)snprintf(list + used, sizeof list - used, "%s%s (%llu bytes)", i ? ", " : "",
                               r->produced.v[i].rel, (unsigned long long)r->produced.v[i].bytes);
    if (o->artifact)
      findings_add(f, "ARTIFACT_NOT_FOUND", SEV_ERROR, o->artifact, 0,
                         "the run did not produce %s; produced: %s", o->artifact,
                         *list ? list : "nothing");
    else if (logged)
      findings_add(f, "ARTIFACT_NOT_FOUND", SEV_ERROR, logname, logged->line,
                         "no produced file has the %lld bytes the log reports; produced: %s",
                         (long long)logged->bytes, *list ? list : "nothing");
    else
      findings_add(f, "ARTIFACT_NOT_FOUND", SEV_ERROR, logname, 0,
                         "the log names no serialized model and --artifact was not given; "
                         "produced: %s",
                         *list ? list : "nothing");
    return;
  }
  if (logged && (int64_t)v->artifact->bytes != logged->bytes)
    findings_add(f, "ARTIFACT_MISMATCH", SEV_ERROR, logname, logged->line,
                       "the log reports %lld bytes, the file %s has %llu", (long long)logged->bytes,
                       v->artifact->rel, (unsigned long long)v->artifact->bytes);
  int64_t total = (int64_t)v->artifact->bytes + (v->code_bytes > 0 ? v->code_bytes : 0);
  if (total > CHALLENGE_SIZE_LIMIT_BYTES)
    findings_add(f, "SIZE_OVER_LIMIT", SEV_ERROR, v->artifact->rel, 0,
                       "artifact %llu bytes (measured from the file) + code %lld bytes (%s) = "
                       "%lld > %lld",
                       (unsigned long long)v->artifact->bytes, (long long)v->code_bytes,
                       v->code_file ? v->code_file : "no entry script", (long long)total,
                       CHALLENGE_SIZE_LIMIT_BYTES);
}

int replay_judge(const replay_ext_opts *o, replay_run *r, replay_timings *t, replay_verdict_in *v,
                 finding_list *f, pg_error *err) {
  const char *logname;
  const replay_stream *s = log_source(r, &logname);
  memset(v, 0, sizeof *v);
  v->claim_bpb = NAN;
  if (log_parse(s->text ? s->text : "", s->len, logname, &r->parsed, err)) return -1;
  r->parsed_ok = 1;
  derive_timings(r, s, t);
  count_code(o, r, v);
  judge_process(o, r, t, logname, f);
  judge_budgets(o, t, logname, f);
  scan_denied(&r->err, "stderr", f);
  scan_denied(&r->out, "stdout", f);
  v->final = log_final_metric(&r->parsed);
  if (!v->final && !r->killed)
    findings_add(f, "NO_FINAL_METRIC", SEV_ERROR, logname, 0, "the log has no final metric line");
  judge_artifact(o, r, v, logname, f);
  read_claim(o, v, f);
  if (v->final && isfinite(v->claim_bpb) && fabs(v->final->val_bpb.v - v->claim_bpb) > o->tolerance_bpb)
    findings_add(f, "CLAIM_MISMATCH", SEV_ERROR, logname, v->final->line,
                       "the replay scored val_bpb %.8g (%s), the folder claims %.8g (%s); "
                       "difference %.3g > tolerance %.3g",
                       v->final->val_bpb.v, v->final->prefix, v->claim_bpb, v->claim_source,
                       fabs(v->final->val_bpb.v - v->claim_bpb), o->tolerance_bpb);
  if (r->watch.overflowed)
    findings_add(f, "WATCH_INCOMPLETE", SEV_WARNING, NULL, 0,
                       "inotify dropped events: some file creation times are missing");
  if (s->dropped)
    findings_add(f, "LOG_TRUNCATED", SEV_WARNING, logname, 0, "the log exceeded %u bytes; %llu dropped",
                       LOG_MAX_BYTES, (unsigned long long)s->dropped);
  return 0;
}
