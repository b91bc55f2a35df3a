/* pgolf replay: re-run a submission under the replay's own clock and a
 * sandbox, and judge what it printed and produced (replay_external.h). */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/challenge.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/verbs.h"
#include "common/json_read.h"
#include "verifier/replay_run.h"
#include "verifier/replay_external.h"

#define DEFAULT_GRACE_S 60.0
#define DEFAULT_TOLERANCE_BPB 0.002

static void replay_usage(FILE *out) {
  fprintf(out,
          "usage: pgolf replay --record DIR --seed S [--budget-train SEC] [--budget-eval SEC]\n"
          "                    [--grace SEC] [--tolerance BPB] [--out DIR] [--data DIR]\n"
          "                    [--tokenizer MODEL] [--artifact FILE] [--ro-bind PATH]...\n"
          "                    [--json] -- CMD ARGS...\n"
          "\n"
          "Runs CMD in a scratch copy of the submission folder DIR under bubblewrap (no\n"
          "network, only the scratch copy writable, data and tokenizer read-only at /data\n"
          "and /tokenizer/NAME), with only SEED, DATA_PATH, TOKENIZER_PATH, RUN_ID, PATH\n"
          "and HOME set. Its output and log are timed on pgolf's own monotonic clock, the\n"
          "whole process group is killed at train + eval budget + grace seconds, and the\n"
          "log, the produced artifact and the folder's claim for seed S are checked.\n"
          "  --budget-train/--budget-eval  seconds (default " CHALLENGE_TIME_LIMIT_TEXT " each)\n"
          "  --grace SEC       added to the hard limit (default 60)\n"
          "  --tolerance BPB   allowed |replayed - claimed| val_bpb (default 0.002)\n"
          "  --out DIR         where the replay manifest replay-seedS.json and the\n"
          "                    scratch folder scratch-seedS/ go (default: replay-out)\n"
          "  --artifact FILE   the produced file that is the model (default: the one whose\n"
          "                    size the log's `Serialized model LABEL:` line reports)\n"
          "  --ro-bind PATH    also bind PATH read-only (an interpreter outside /usr)\n"
          "  --json            print the replay manifest on stdout\n"
          "Exit 0 pass, 1 findings (an error-severity finding), 2 usage or input error.\n");
}

static int parse_seconds(const char *s, const char *opt, double *out, pg_error *err) {
  char *end;
  errno = 0;
  *out = strtod(s, &end);
  if (end == s || *end || errno || !isfinite(*out) || *out < 0 || *out > 1e7)
    return pg_fail(err, opt, -1, "'%s' is not a number of seconds", s);
  return 0;
}

static int parse_seed(const char *s, uint64_t *out, pg_error *err) {
  char *end;
  errno = 0;
  if (*s < '0' || *s > '9') return pg_fail(err, "--seed", -1, "'%s' is not a seed", s);
  *out = strtoull(s, &end, 10);
  if (*end || errno) return pg_fail(err, "--seed", -1, "'%s' is not a seed", s);
  return 0;
}

typedef struct replay_cli {
  replay_ext_opts o;
  int have_seed, json, help;
} replay_cli;

static int parse_opt(int ch, const char *arg, replay_cli *c, pg_error *err) {
  replay_ext_opts *o = &c->o;
  switch (ch) {
    case 'r': o->record_dir = arg; return 0;
    case 's': c->have_seed = 1; return parse_seed(arg, &o->seed, err);
    case 't': return parse_seconds(arg, "--budget-train", &o->budget_train_s, err);
    case 'e': return parse_seconds(arg, "--budget-eval", &o->budget_eval_s, err);
    case 'g': return parse_seconds(arg, "--grace", &o->grace_s, err);
    case 'T': return parse_seconds(arg, "--tolerance", &o->tolerance_bpb, err);
    case 'o': o->out_dir = arg; return 0;
    case 'd': o->data_dir = arg; return 0;
    case 'k': o->tokenizer = arg; return 0;
    case 'a': o->artifact = arg; return 0;
    case 'b':
      if (o->n_ro_extra == SANDBOX_MAX_EXTRA)
        return pg_fail(err, "--ro-bind", -1, "at most %d", SANDBOX_MAX_EXTRA);
      if (arg[0] != '/') return pg_fail(err, "--ro-bind", -1, "'%s' is not an absolute path", arg);
      o->ro_extra[o->n_ro_extra++] = arg;
      return 0;
    case 'j': c->json = 1; return 0;
    case 'h': c->help = 1; return 0;
  }
  return pg_fail(err, "", -1, "unknown option or missing value (try `pgolf replay --help`)");
}

/* An input path must exist with the right type before anything runs. */
static int need(const char *path, int want_dir, const char *opt, pg_error *err) {
  struct stat st;
  if (stat(path, &st) != 0) return pg_fail_errno(err, path, "%s", opt);
  if (want_dir && !S_ISDIR(st.st_mode)) return pg_fail(err, path, -1, "%s: not a folder", opt);
  if (!want_dir && !S_ISREG(st.st_mode)) return pg_fail(err, path, -1, "%s: not a file", opt);
  return 0;
}

static int check_cli(const replay_cli *c, pg_error *err) {
  const replay_ext_opts *o = &c->o;
  if (!o->record_dir) return pg_fail(err, "--record", -1, "is required");
  if (!c->have_seed) return pg_fail(err, "--seed", -1, "is required");
  if (!o->cmd || !o->cmd[0]) return pg_fail(err, "", -1, "no command after `--`");
  if (need(o->record_dir, 1, "--record", err)) return -1;
  if (o->data_dir && need(o->data_dir, 1, "--data", err)) return -1;
  if (o->tokenizer && need(o->tokenizer, 0, "--tokenizer", err)) return -1;
  if (o->artifact && (o->artifact[0] == '/' || strstr(o->artifact, "..")))
    return pg_fail(err, "--artifact", -1, "'%s' must be a path inside the folder", o->artifact);
  return 0;
}

/* Options before `--`, the command after it. */
static int parse_cli(int argc, char **argv, replay_cli *c, pg_error *err) {
  static const struct option longopts[] = {
      {"record", required_argument, 0, 'r'},  {"seed", required_argument, 0, 's'},
      {"budget-train", required_argument, 0, 't'}, {"budget-eval", required_argument, 0, 'e'},
      {"grace", required_argument, 0, 'g'},   {"tolerance", required_argument, 0, 'T'},
      {"out", required_argument, 0, 'o'},     {"data", required_argument, 0, 'd'},
      {"tokenizer", required_argument, 0, 'k'}, {"artifact", required_argument, 0, 'a'},
      {"ro-bind", required_argument, 0, 'b'}, {"json", no_argument, 0, 'j'},
      {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
  memset(c, 0, sizeof *c);
  c->o.budget_train_s = CHALLENGE_TRAIN_LIMIT_S;
  c->o.budget_eval_s = CHALLENGE_EVAL_LIMIT_S;
  c->o.grace_s = DEFAULT_GRACE_S;
  c->o.tolerance_bpb = DEFAULT_TOLERANCE_BPB;
  c->o.out_dir = "replay-out";
  int dash = argc;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--")) {
      dash = i;
      break;
    }
  optind = 1;
  opterr = 0;
  int ch;
  while ((ch = getopt_long(dash, argv, "+", longopts, NULL)) != -1)
    if (parse_opt(ch, optarg, c, err)) return -1;
  if (c->help) return 0;
  if (optind < dash)
    return pg_fail(err, argv[optind], -1, "unexpected argument before `--` (a manifest replay "
                                          "takes only MANIFEST)");
  c->o.cmd = dash < argc ? argv + dash + 1 : NULL;
  return check_cli(c, err);
}

static void print_findings(const replay_ext_opts *o, finding_list *f, const char *path) {
  char title[4200];
  snprintf(title, sizeof title, "replay of %s, seed %llu", o->record_dir, (unsigned long long)o->seed);
  findings_sort(f);
  findings_print_table(stdout, title, f);
  printf("manifest: %s\n", path);
}

static int write_manifest(json_t *m, const char *path, int to_stdout, pg_error *err) {
  char *text;
  size_t len;
  if (json_write_pretty(m, &text, &len, err)) return -1;
  int rc = file_write_atomic(path, text, len, 0644, err);
  if (!rc && to_stdout && fwrite(text, 1, len, stdout) != len) rc = pg_fail_errno(err, "stdout", "write");
  free(text);
  return rc;
}

static int replay_external(const replay_cli *c) {
  pg_error err;
  char bwrap[4096];
  if (sandbox_find_bwrap(bwrap, sizeof bwrap, &err) || sandbox_probe(bwrap, &err)) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  replay_ext_opts o = c->o;
  o.progress = isatty(2);
  replay_run r;
  replay_timings t;
  replay_verdict_in v;
  finding_list f = {0};
  int rc = replay_external_run(&o, bwrap, &r, &err);
  if (!rc) rc = replay_judge(&o, &r, &t, &v, &f, &err);
  char path[4096];
  snprintf(path, sizeof path, "%s/replay-seed%llu.json", o.out_dir, (unsigned long long)o.seed);
  if (!rc) {
    json_t *m = replay_manifest_json(&o, bwrap, &r, &t, &v, &f);
    rc = m ? write_manifest(m, path, c->json, &err) : pg_fail(&err, path, -1, "out of memory");
    json_decref(m);
  }
  int code = PG_EXIT_USAGE;
  if (rc) pg_error_print(&err);
  else {
    if (!c->json) print_findings(&o, &f, path);
    code = findings_count(&f, SEV_ERROR) ? PG_EXIT_CHECK_FAILED : PG_EXIT_OK;
  }
  findings_free(&f);
  replay_run_free(&r);
  return code;
}

int cmd_replay(int argc, char **argv) {
  /* `pgolf replay MANIFEST ...` re-runs a pgolf run (verifier/replay_run.c);
   * everything else is an external submission replay. */
  if (argc >= 2 && argv[1][0] != '-') return replay_run_main(argc, argv);
  replay_cli c;
  pg_error err;
  if (parse_cli(argc, argv, &c, &err)) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  if (c.help) {
    replay_usage(stdout);
    return PG_EXIT_OK;
  }
  return replay_external(&c);
}
