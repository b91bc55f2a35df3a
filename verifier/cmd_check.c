/* pgolf check DIR... [--json] [--track 10min|nonrecord]
 *
 * Static checks of submission folders against the challenge's rules (one
 * file per rule: verifier/rule_*.c). Exit 0 if every folder passes, 1 if
 * any has an error finding, 2 on usage errors or a folder that cannot be
 * read. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/challenge.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/verbs.h"
#include "verifier/check_folder.h"
#include "verifier/check_significance.h"
#include "verifier/code_count.h"
#include "verifier/rules.h"

static const char USAGE[] =
    "pgolf check DIR... [--json] [--track 10min|nonrecord] [--against RECORD]";
static const char ABOUT[] =
    "Checks submission folders (records/<track>/<date>_<name>/) against the challenge's\n"
    "rules: required files, submission.json fields, claims against the logs, "
    "the\n" CHALLENGE_SIZE_LIMIT_TEXT "-byte limit, the " CHALLENGE_TIME_LIMIT_TEXT
    " training and evaluation budgets (record track),\n"
    "seeds, configuration of the seed logs, a shipped tokenizer's byte accounting,\n"
    "whether the logs were written by the shipped code, and the data the logs name.\n"
    "Lists the counted code: the entry script and what the documented run loads.\n"
    "Every finding has a stable code, documented in SUBMISSION.md.";
static const char FOOTER[] =
    "Exit: 0 all pass, 1 an error finding, 2 usage error or unreadable folder.";

static int parse_track(const char *t) {
  if (!strcmp(t, "10min") || !strcmp(t, "record") || !strcmp(t, "10min_16mb")) return TRACK_RECORD;
  if (!strcmp(t, "nonrecord") || !strcmp(t, "non-record") || !strcmp(t, "non_record") ||
      !strcmp(t, "non_record_16mb"))
    return TRACK_NONRECORD;
  return -1;
}

void check_run_rules(const submission *s, finding_list *f) {
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
  findings_sort(f);
}

static json_t *num_or_null(double v) { return isnan(v) ? json_null() : json_real(v); }

json_t *check_summary_json(const submission *s, const finding_list *f) {
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

/* Check one folder; *failed set if it has an error. -1 if unreadable (or
 * --against unreadable). */
static int check_one(const char *dir, int track, int as_json, json_t *all, int *failed,
                     const char *against) {
  submission s;
  finding_list f = {0};
  pg_error err;
  if (submission_load(dir, track, &s, &f, &err)) {
    findings_free(&f);
    pg_error_print(&err);
    return -1;
  }
  code_count cc;
  if (code_count_build(&s, &cc, &err)) {
    findings_free(&f);
    submission_free(&s);
    pg_error_print(&err);
    return -1;
  }
  s.counted = &cc;
  check_sig sig;
  if (against && check_significance(&s, against, &f, &sig, &err)) {
    findings_free(&f);
    code_count_free(&cc);
    submission_free(&s);
    pg_error_print(&err);
    return -1;
  }
  check_run_rules(&s, &f);
  if (findings_count(&f, SEV_ERROR)) *failed = 1;
  if (as_json) {
    json_t *summary = check_summary_json(&s, &f);
    if (against) json_object_set_new(summary, "significance", check_significance_json(&sig));
    json_array_append_new(all, findings_json(dir, &f, summary));
  } else {
    findings_print_table(stdout, dir, &f);
    if (against) check_significance_print(stdout, &sig);
    code_count_print(stdout, &cc);
  }
  findings_free(&f);
  code_count_free(&cc);
  submission_free(&s);
  return 0;
}

int cmd_check(int argc, char **argv) {
  int as_json = 0, track = -1;
  const char *track_name = NULL, *against = NULL;
  cli_args dirs;
  const cli_option opts[] = {
      CLI_FLAG("json", 0, &as_json,
               "{\"folder\",\"verdict\",\"findings\",\"summary\"} (an array for several folders)"),
      CLI_STRING("track", 0, &track_name, "T",
                 "10min (record track) or nonrecord; default: submission.json \"track\",\n"
                 "else the folder path, else 10min"),
      CLI_STRING("against", 0, &against, "R",
                 "test the folder's seeds against the previous record R (a folder,\n"
                 "a run manifest or comma-separated val_bpb values): the README's\n"
                 "rule (0.005 nats at p < 0.01) and the maintainers' practice\n"
                 "(p < 0.25, no margin), each with its verdict (SIGNIFICANCE)"),
      CLI_ARGS(&dirs, "DIR...", NULL), CLI_END};
  const cli_command cmd = {
      .name = "check", .usage = USAGE, .about = ABOUT, .options = opts, .footer = FOOTER};
  pg_error err;
  int pr = cli_parse(&cmd, argc, argv, &err);
  if (pr != CLI_OK) return cli_status(pr, &err);
  if (track_name && (track = parse_track(track_name)) < 0) {
    pg_die_msg("check: unknown track '%s' (10min or nonrecord)", track_name);
    return PG_EXIT_USAGE;
  }
  if (!dirs.n) {
    cli_usage(&cmd, stderr);
    return PG_EXIT_USAGE;
  }
  json_t *all = json_array();
  int failed = 0, bad = 0;
  for (int i = 0; i < dirs.n && !bad; i++) {
    if (!as_json && i > 0) putchar('\n');
    bad = check_one(dirs.v[i], track, as_json, all, &failed, against) != 0;
  }
  if (!bad && as_json) {
    json_t *out = dirs.n == 1 ? json_array_get(all, 0) : all;
    char *text = json_dumps(out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(16));
    if (text) puts(text);
    free(text);
  }
  json_decref(all);
  if (fflush(stdout) != 0) {
    pg_die_msg("check: cannot write the report");
    return PG_EXIT_USAGE;
  }
  if (bad) return PG_EXIT_USAGE;
  return failed ? PG_EXIT_CHECK_FAILED : PG_EXIT_OK;
}
