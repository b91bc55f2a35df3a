/* pgolf verify DIR: the maintainer's one command. The static check, the
 * replay when asked, the score-first audit of every score dump the folder
 * holds or the replay produced, the significance test against the record,
 * then one HTML report and one Markdown summary sized for a pull-request
 * comment (verifier/verify_report.h). Everything runs in this process:
 * check_folder, replay_supervised/replay_fresh, audit_load, the report. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/challenge.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/json_read.h"
#include "common/verbs.h"
#include "kernels/nvml.h"
#include "verifier/replay_external.h"
#include "verifier/reproduction.h"
#include "verifier/verify_report.h"

static const char USAGE[] =
    "pgolf verify DIR [--against RECORD] [--track T] [--tokenizer MODEL] [--val DIR]\n"
    "             [-o OUT_DIR | --html FILE --markdown FILE] [--markdown-max BYTES]\n"
    "             [--replay (--seed S | --fresh-seeds K --salt S) [--data DIR]\n"
    "              [--gpus N] [--allow-busy] [--ro-bind PATH]... [--budget-train SEC]\n"
    "              [--budget-eval SEC] [--grace SEC] -- CMD ARGS...]";
static const char ABOUT[] =
    "Verifies one submission folder in four steps, each pass, fail or not run (with\n"
    "why): the static check (pgolf check); the replay, when --replay is given (pgolf\n"
    "replay, on the GPUs it finds); the score-first audit (pgolf audit) of every score\n"
    "dump in the folder or produced by the replay, with --tokenizer (default: the\n"
    "folder's only *.model) and --val (default: --data); the significance test\n"
    "against --against (the README's rule, 0.005 nats at p < 0.01, and the\n"
    "maintainers' practice, p < 0.25, side by side). Writes one self-contained HTML\n"
    "report and one Markdown summary for a pull-request comment, capped at\n"
    "--markdown-max bytes (findings past the cap are counted, not listed).";
static const char FOOTER[] =
    "Exit: 0 every step passes or did not run, 1 a step fails, 2 usage or input error.";

typedef struct verify_cli {
  verify_opts v;
  const char *track_name, *out_dir, *html, *markdown;
  size_t markdown_max;
  int replay;
  replay_request q;
  cli_list ro_bind;
  cli_args dirs, cmd;
} verify_cli;

/* The combinations the table cannot express. */
static int check_cli(verify_cli *c, const cli_command *cmd, pg_error *err) {
  if (c->dirs.n != 1)
    return cli_fail(err, cmd, c->dirs.n ? "one folder at a time" : "no folder given");
  if (c->track_name && (c->v.track = check_parse_track(c->track_name)) < 0)
    return cli_fail(err, cmd, "unknown track '%s' (10min or nonrecord)", c->track_name);
  if (c->out_dir && (c->html || c->markdown))
    return cli_fail(err, cmd, "-o and --html/--markdown exclude each other");
  if (!c->out_dir && !c->html && !c->markdown) c->out_dir = "verify-out";
  if (c->markdown_max < VERIFY_MARKDOWN_MIN)
    return cli_fail(err, cmd, "--markdown-max: at least %d bytes", VERIFY_MARKDOWN_MIN);
  if (!c->v.val) c->v.val = c->q.o.data_dir;
  if (!c->replay) {
    if (c->cmd.n) return cli_fail(err, cmd, "a command after `--` needs --replay");
    if (c->q.seed_given || c->q.fresh_seeds)
      return cli_fail(err, cmd, "--seed and --fresh-seeds are the replay's: add --replay");
    return 0;
  }
  if (!c->cmd.n) return cli_fail(err, cmd, "--replay: no command after `--`");
  if (c->q.seed_given == !!c->q.fresh_seeds)
    return cli_fail(err, cmd, "--replay needs --seed S or --fresh-seeds K (not both)");
  if (c->q.fresh_seeds && !c->q.salt) return cli_fail(err, cmd, "--fresh-seeds needs --salt");
  c->q.o.cmd = c->cmd.v;
  c->q.o.record_dir = c->dirs.v[0];
  c->q.o.n_ro_extra = c->ro_bind.n;
  for (size_t i = 0; i < c->ro_bind.n; i++)
    if (c->q.o.ro_extra[i][0] != '/')
      return cli_fail(err, cmd, "--ro-bind: '%s' is not an absolute path", c->q.o.ro_extra[i]);
  struct stat st;
  if (c->q.o.data_dir && (stat(c->q.o.data_dir, &st) != 0 || !S_ISDIR(st.st_mode)))
    return cli_fail(err, cmd, "--data: '%s' is not a folder", c->q.o.data_dir);
  if (c->q.o.tokenizer && (stat(c->q.o.tokenizer, &st) != 0 || !S_ISREG(st.st_mode)))
    return cli_fail(err, cmd, "--tokenizer: '%s' is not a file", c->q.o.tokenizer);
  return 0;
}

static int parse_cli(int argc, char **argv, verify_cli *c, pg_error *err) {
  memset(c, 0, sizeof *c);
  replay_request_defaults(&c->q);
  c->v.track = -1;
  c->markdown_max = VERIFY_MARKDOWN_MAX;
  replay_ext_opts *o = &c->q.o;
  c->ro_bind = (cli_list){o->ro_extra, 0, SANDBOX_MAX_EXTRA};
  const cli_option opts[] = {
      CLI_STRING("against", 0, &c->v.against, "RECORD",
                 "the current record: a folder, a run manifest or comma-separated\n"
                 "val_bpb values (the significance step; not run without it)"),
      CLI_STRING("track", 0, &c->track_name, "T", "10min or nonrecord (default: as pgolf check)"),
      CLI_STRING("tokenizer", 0, &c->v.tokenizer, "MODEL",
                 "for the audits (default: the folder's only *.model); also\n"
                 "bound for the replay"),
      CLI_STRING("val", 0, &c->v.val, "DIR", "validation shards for the audits (default: --data)"),
      CLI_STRING("output", 'o', &c->out_dir, "OUT_DIR",
                 "writes OUT_DIR/verify.html and OUT_DIR/verify.md, and the\n"
                 "replay's manifests in OUT_DIR/replay (default: verify-out)"),
      CLI_STRING("html", 0, &c->html, "FILE", "the HTML report (instead of -o)"),
      CLI_STRING("markdown", 0, &c->markdown, "FILE", "the Markdown summary (instead of -o)"),
      CLI_UNSIGNED("markdown-max", 0, &c->markdown_max, "BYTES", 1, 1u << 30,
                   "cap of the Markdown summary (default 60000; GitHub's\n"
                   "comments stop at 65,536 characters)"),
      CLI_FLAG("replay", 0, &c->replay, "replay the folder with the command after `--`"),
      CLI_CALLBACK("seed", 0, &c->q, "S", replay_take_seed, "the replay's seed"),
      CLI_INT("fresh-seeds", 0, &c->q.fresh_seeds, "K", 1, FRESH_SEEDS_MAX,
              "instead of --seed: K seeds derived from the folder and --salt"),
      CLI_STRING("salt", 0, &c->q.salt, "S", "the maintainer's value for --fresh-seeds"),
      CLI_STRING("data", 0, &o->data_dir, "DIR", "the data, read-only at /data in the replay"),
      CLI_INT("gpus", 0, &o->gpus, "N", 1, NVML_ATTEST_MAX_GPUS, "give the replay GPUs 0..N-1 only"),
      CLI_FLAG("allow-busy", 0, &o->allow_busy, "replay even when a process is on a GPU"),
      CLI_LIST("ro-bind", 0, &c->ro_bind, "PATH",
               "also bind PATH read-only in the replay (an interpreter\n"
               "outside /usr, such as a virtual environment's torchrun)"),
      CLI_DOUBLE_RANGE("budget-train", 0, &o->budget_train_s, "SEC", 0, 1e7,
                       "the replay's training budget (default " CHALLENGE_TIME_LIMIT_TEXT ")"),
      CLI_DOUBLE_RANGE("budget-eval", 0, &o->budget_eval_s, "SEC", 0, 1e7,
                       "the replay's evaluation budget (default " CHALLENGE_TIME_LIMIT_TEXT ")"),
      CLI_DOUBLE_RANGE("grace", 0, &o->grace_s, "SEC", 0, 1e7,
                       "added to the replay's hard limit (default 60)"),
      CLI_ARGS(&c->dirs, "DIR", NULL),
      CLI_REST(&c->cmd, "CMD ARGS...", "the submission's command (with --replay)"),
      CLI_END};
  const cli_command cmd = {.name = "verify", .usage = USAGE, .about = ABOUT, .options = opts,
                           .footer = FOOTER, .flags = CLI_ONCE};
  int r = cli_parse(&cmd, argc, argv, err);
  if (r != CLI_OK) return r;
  if (c->q.o.tokenizer == NULL) c->q.o.tokenizer = c->v.tokenizer;
  return check_cli(c, &cmd, err) ? CLI_ERROR : CLI_OK;
}

/* Run the replay (one seed or fresh seeds) into OUT/replay and add what
 * it wrote to r. PG_EXIT_USAGE when the replay could not run (printed). */
static int run_replay(verify_cli *c, verify_result *r, const char *replay_dir, pg_error *err) {
  c->q.o.out_dir = replay_dir;
  printf("== replay of %s\n", r->folder);
  double bpb;
  int code = c->q.fresh_seeds ? replay_fresh(&c->q) : replay_supervised(&c->q, c->q.o.seed, &bpb);
  if (code == PG_EXIT_USAGE) return PG_EXIT_USAGE;
  char path[PATH_MAX + 64];
  if (!c->q.fresh_seeds) {
    snprintf(path, sizeof path, "%s/replay-seed%llu.json", replay_dir,
             (unsigned long long)c->q.o.seed);
    /* HARDWARE_BUSY stops a replay before it writes a manifest. */
    struct stat st;
    if (stat(path, &st) != 0) {
      r->n_replays++, r->n_replays_failed++;
      snprintf(r->steps[VERIFY_REPLAY].detail, sizeof r->steps[VERIFY_REPLAY].detail,
               "the replay did not run (a GPU is in use: HARDWARE_BUSY; --allow-busy)");
      r->steps[VERIFY_REPLAY].status = VERIFY_FAIL;
      return 0;
    }
    return verify_add_replay(r, path, err) ? PG_EXIT_USAGE : 0;
  }
  snprintf(path, sizeof path, "%s/replay-fresh.json", replay_dir);
  json_t *sum;
  if (json_read_file(path, REPORT_MAX_INPUT_BYTES, &sum, err)) return PG_EXIT_USAGE;
  size_t i;
  json_t *run;
  int rc = 0;
  json_array_foreach(json_object_get(sum, "runs"), i, run) {
    char one[PATH_MAX + 64];
    snprintf(one, sizeof one, "%s/replay-seed%lld.json", replay_dir,
             (long long)json_integer_value(json_object_get(run, "seed")));
    struct stat st;
    if (!rc && stat(one, &st) == 0) rc = verify_add_replay(r, one, err);
  }
  json_decref(sum);
  if (!rc) rc = verify_add_fresh(r, path, err);
  return rc ? PG_EXIT_USAGE : 0;
}

/* Write one rendering atomically: to a temporary file, then renamed. */
static int write_rendering(const char *path, const verify_result *r, int markdown, size_t max,
                           pg_error *err) {
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  if (!mem) return pg_fail_errno(err, path, "open_memstream");
  int rc = markdown ? verify_write_markdown(mem, r, max, err) : verify_write_html(mem, r, err);
  fclose(mem);
  if (!rc) rc = file_write_atomic(path, text, len, 0644, err);
  free(text);
  return rc;
}

static void print_steps(const verify_result *r) {
  static const char *const names[VERIFY_N_STEPS] = {"check", "replay", "audit", "significance"};
  verify_status v = verify_verdict(r);
  printf("%s: %s\n", r->folder, v == VERIFY_PASS ? "PASS" : "FAIL");
  for (int i = 0; i < VERIFY_N_STEPS; i++)
    printf("  %-13s %-8s %s\n", names[i], verify_status_name(r->steps[i].status),
           r->steps[i].detail);
}

int cmd_verify(int argc, char **argv) {
  verify_cli c;
  pg_error err = {0};
  int pr = parse_cli(argc, argv, &c, &err);
  if (pr != CLI_OK) return cli_status(pr, &err);
  char html[PATH_MAX], md[PATH_MAX], replay_dir[PATH_MAX];
  if (c.out_dir) {
    if (mkdir(c.out_dir, 0755) != 0 && errno != EEXIST) {
      pg_fail_errno(&err, c.out_dir, "cannot create the output folder");
      pg_error_print(&err);
      return PG_EXIT_USAGE;
    }
    snprintf(html, sizeof html, "%s/verify.html", c.out_dir);
    snprintf(md, sizeof md, "%s/verify.md", c.out_dir);
    snprintf(replay_dir, sizeof replay_dir, "%s/replay", c.out_dir);
  } else {
    snprintf(replay_dir, sizeof replay_dir, "%s.replay", c.html ? c.html : c.markdown);
  }
  const char *html_path = c.out_dir ? html : c.html, *md_path = c.out_dir ? md : c.markdown;
  verify_result *r = malloc(sizeof *r);
  if (!r) return pg_die_msg("verify: out of memory"), PG_EXIT_USAGE;
  int code = PG_EXIT_OK;
  if (verify_folder(c.dirs.v[0], &c.v, r, &err)) {
    pg_error_print(&err);
    free(r);
    return PG_EXIT_USAGE;
  }
  if (c.replay && (code = run_replay(&c, r, replay_dir, &err)) != 0) {
    if (err.msg[0]) pg_error_print(&err);
  } else if ((html_path && write_rendering(html_path, r, 0, 0, &err)) ||
             (md_path && write_rendering(md_path, r, 1, c.markdown_max, &err))) {
    pg_error_print(&err);
    code = PG_EXIT_USAGE;
  } else {
    print_steps(r);
    if (html_path) printf("report: %s\n", html_path);
    if (md_path) printf("summary: %s\n", md_path);
    code = verify_verdict(r) == VERIFY_PASS ? PG_EXIT_OK : PG_EXIT_CHECK_FAILED;
  }
  verify_result_free(r);
  free(r);
  return code;
}
