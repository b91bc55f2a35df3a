/* The static check of one folder (verifier/check_folder.h): every rule
 * of verifier/rules.h, the significance test, and the JSON summary. */
#include "verifier/check_folder.h"

#include <math.h>
#include <string.h>

#include "verifier/rules.h"

int check_parse_track(const char *t) {
  if (!strcmp(t, "10min") || !strcmp(t, "record") || !strcmp(t, "10min_16mb")) return TRACK_RECORD;
  if (!strcmp(t, "nonrecord") || !strcmp(t, "non-record") || !strcmp(t, "non_record") ||
      !strcmp(t, "non_record_16mb"))
    return TRACK_NONRECORD;
  return -1;
}

static void run_rules(const submission *s, finding_list *f) {
  rule_files(s, f);
  rule_final_metric(s, f);
  rule_claims(s, f);
  rule_size(s, f);
  rule_train_budget(s, f);
  rule_eval_budget(s, f);
  rule_seeds(s, f);
  rule_config(s, f);
  rule_eval_selection(s, f);
  rule_tokenizer(s, f);
  rule_log_code(s, f);
  rule_overlap(s, f);
  rule_code(s, f);
  rule_byte_count(s, f);
  rule_ngram_key(s, f);
  rule_val_train(s, f);
  rule_paid_prefix(s, f);
  findings_sort(f);
}

static json_t *num_or_null(double v) { return isnan(v) ? json_null() : json_real(v); }

static json_t *summary_json(const submission *s, const finding_list *f) {
  json_t *o = json_object();
  json_object_set_new(o, "track", json_string(sub_track_name(s->track)));
  json_object_set_new(o, "track_source", json_string(s->track_source));
  json_object_set_new(o, "errors", json_integer((json_int_t)findings_count(f, SEV_ERROR)));
  json_object_set_new(o, "warnings", json_integer((json_int_t)findings_count(f, SEV_WARNING)));
  const sub_json *j = submission_claims(s);
  json_object_set_new(o, "claimed_val_bpb", j && j->has_val_bpb ? json_real(j->val_bpb) : json_null());
  json_t *logs = json_array();
  double sum = 0;
  size_t n = 0;
  for (size_t i = 0; i < s->n_logs; i++) {
    const sub_log *lg = &s->logs[i];
    const log_metric *m = log_final_metric(&lg->log);
    json_t *x = json_object();
    json_object_set_new(x, "file", json_string(lg->rel));
    if (lg->n_parts > 1) { /* one of several runs in the file: its lines */
      json_t *lines = json_array();
      json_array_append_new(lines, json_integer(lg->log.first_line));
      json_array_append_new(lines, json_integer(lg->log.n_lines));
      json_object_set_new(x, "lines", lines);
    }
    json_object_set_new(x, "seed", lg->seed >= 0 ? json_integer(lg->seed) : json_null());
    json_object_set_new(x, "final_metric", m ? json_string(m->prefix) : json_null());
    json_object_set_new(x, "val_bpb", m ? json_real(m->val_bpb.v) : json_null());
    double ms, res, step;
    uint32_t line;
    json_object_set_new(x, "train_ms", log_train_end(&lg->log, &ms, &res, &line, &step)
                                           ? json_null() : num_or_null(ms));
    json_object_set_new(x, "run", json_integer((json_int_t)lg->run));
    json_object_set_new(x, "copy_of", lg->copy_of >= 0 ? json_string(s->logs[lg->copy_of].rel)
                                                       : json_null());
    json_object_set_new(x, "backs_claim", json_boolean(lg->backs_claim));
    json_array_append_new(logs, x);
    if (m) sum += m->val_bpb.v, n++;
  }
  json_object_set_new(o, "mean_val_bpb", n ? json_real(sum / (double)n) : json_null());
  json_object_set_new(o, "logs", logs);
  static const char *const fits[] = {"none", "mean", "one_run", "unsupported"};
  json_object_set_new(o, "claim_fit", json_string(fits[s->link.fit]));
  json_t *runs = json_array();
  for (size_t r = 0; r < s->n_runs; r++) {
    const sub_run *run = &s->runs[r];
    json_t *x = json_object(), *files = json_array();
    json_object_set_new(x, "seed", run->seed >= 0 ? json_integer(run->seed) : json_null());
    for (size_t k = 0; k < run->n_logs; k++)
      json_array_append_new(files, json_string(s->logs[run->logs[k]].rel));
    json_object_set_new(x, "files", files);
    json_object_set_new(x, "trainings", json_integer(run->n_trainings));
    json_object_set_new(x, "claimed", json_boolean(run->claimed));
    json_array_append_new(runs, x);
  }
  json_object_set_new(o, "runs", runs);
  if (s->counted) json_object_set_new(o, "code", code_count_json(s->counted));
  return o;
}

int check_folder(const char *dir, int track, const char *against, check_result *r,
                 pg_error *err) {
  memset(r, 0, sizeof *r);
  if (submission_load(dir, track, &r->s, &r->f, err)) {
    findings_free(&r->f);
    return -1;
  }
  if (code_count_build(&r->s, &r->cc, err)) {
    findings_free(&r->f);
    submission_free(&r->s);
    return -1;
  }
  r->s.counted = &r->cc;
  if (shipped_texts_load(&r->s, &r->texts) == 0) r->s.texts = &r->texts;
  if (against && check_significance(&r->s, against, &r->f, &r->sig, err)) {
    check_result_free(r);
    return -1;
  }
  r->have_sig = against != NULL;
  run_rules(&r->s, &r->f);
  return 0;
}

json_t *check_result_summary(const check_result *r) {
  json_t *summary = summary_json(&r->s, &r->f);
  if (summary && r->have_sig)
    json_object_set_new(summary, "significance", check_significance_json(&r->sig));
  return summary;
}

void check_result_free(check_result *r) {
  findings_free(&r->f);
  code_count_free(&r->cc);
  shipped_texts_free(&r->texts);
  submission_free(&r->s);
  memset(r, 0, sizeof *r);
}
