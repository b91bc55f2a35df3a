/* pgolf check DIR... [--json] [--track 10min|nonrecord]
 *
 * Static checks of submission folders against the challenge's rules (one
 * file per rule: verifier/rule_*.c). Exit 0 if every folder passes, 1 if
 * any has an error finding, 2 on usage errors or a folder that cannot be
 * read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/challenge.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/verbs.h"
#include "verifier/check_folder.h"

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

/* Check one folder; *failed set if it has an error. -1 if unreadable (or
 * --against unreadable). */
static int check_one(const char *dir, int track, int as_json, json_t *all, int *failed,
                     const char *against) {
  check_result r;
  pg_error err;
  if (check_folder(dir, track, against, &r, &err)) {
    pg_error_print(&err);
    return -1;
  }
  if (findings_count(&r.f, SEV_ERROR)) *failed = 1;
  if (as_json) {
    json_array_append_new(all, findings_json(dir, &r.f, check_result_summary(&r)));
  } else {
    findings_print_table(stdout, dir, &r.f);
    if (r.have_sig) check_significance_print(stdout, &r.sig);
    code_count_print(stdout, &r.cc);
  }
  check_result_free(&r);
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
  if (track_name && (track = check_parse_track(track_name)) < 0) {
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
