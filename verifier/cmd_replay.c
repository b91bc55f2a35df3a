/* pgolf replay: re-run a submission under the replay's own clock and a
 * sandbox, and judge what it printed and produced (replay_external.h). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/challenge.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/verbs.h"
#include "common/json_read.h"
#include "kernels/nvml.h"
#include "verifier/replay_run.h"
#include "verifier/replay_external.h"
#include "verifier/reproduction.h"
#include "verifier/stats_inputs.h"

static const char USAGE[] =
    "pgolf replay --record DIR --seed S [--budget-train SEC] [--budget-eval SEC]\n"
    "             [--grace SEC] [--tolerance BPB] [--out DIR] [--data DIR]\n"
    "             [--tokenizer MODEL] [--artifact FILE] [--ro-bind PATH]...\n"
    "             [--gpus N] [--allow-busy] [--json] -- CMD ARGS...\n"
    "pgolf replay MANIFEST [OPTIONS]   (see `pgolf replay MANIFEST --help`)";
static const char ABOUT[] =
    "Runs CMD in a scratch copy of the submission folder DIR under bubblewrap (no\n"
    "network, only the scratch copy writable, data and tokenizer read-only at /data\n"
    "and /tokenizer/NAME), with only SEED, DATA_PATH, TOKENIZER_PATH, RUN_ID, PATH\n"
    "and HOME set. Its output and log are timed on pgolf's own monotonic clock, the\n"
    "whole process group is killed at train + eval budget + grace seconds, and the\n"
    "log, the produced artifact and the folder's claim for seed S are checked.\n"
    "\n"
    "The hardware is attested through NVML first (pgolf gpu attest) and sampled\n"
    "about once a second during the run; both go into the manifest's \"hardware\".\n"
    "A GPU already in use stops the replay (HARDWARE_BUSY) unless --allow-busy;\n"
    "other hardware than N x H100 SXM is judged but marked HARDWARE_MISMATCH, and\n"
    "its timings do not decide the verdict (budget findings become warnings).";
static const char FOOTER[] =
    "Exit 0 pass, 1 findings (an error-severity finding), 2 usage or input error.";

typedef struct replay_cli {
  replay_request q; /* what the options ask replay_supervised.c for */
  cli_list ro_bind;
  cli_args cmd, extra;
} replay_cli;

/* An input path must exist with the right type before anything runs. */
static int need(const char *path, int want_dir, const char *opt, pg_error *err) {
  struct stat st;
  if (stat(path, &st) != 0) return pg_fail_errno(err, path, "%s", opt);
  if (want_dir && !S_ISDIR(st.st_mode)) return pg_fail(err, path, -1, "%s: not a folder", opt);
  if (!want_dir && !S_ISREG(st.st_mode)) return pg_fail(err, path, -1, "%s: not a file", opt);
  return 0;
}

static int check_cli(replay_cli *c, const cli_command *cmd, pg_error *err) {
  replay_ext_opts *o = &c->q.o;
  if (c->extra.n)
    return cli_fail(err, cmd,
                    "unexpected argument '%s' before `--` (a manifest replay takes only MANIFEST)",
                    c->extra.v[0]);
  o->cmd = c->cmd.v;
  o->n_ro_extra = c->ro_bind.n;
  for (size_t i = 0; i < o->n_ro_extra; i++)
    if (o->ro_extra[i][0] != '/')
      return cli_fail(err, cmd, "--ro-bind: '%s' is not an absolute path", o->ro_extra[i]);
  if (!o->record_dir) return cli_fail(err, cmd, "--record is required");
  if (c->q.fresh_seeds && c->q.seed_given)
    return cli_fail(err, cmd, "--seed and --fresh-seeds exclude each other");
  if (c->q.fresh_seeds && !c->q.salt)
    return cli_fail(err, cmd, "--fresh-seeds needs --salt (the maintainer's value, published "
                              "after the replay)");
  if (!c->q.fresh_seeds && !c->q.seed_given) return cli_fail(err, cmd, "--seed is required");
  if (!c->cmd.n) return cli_fail(err, cmd, "no command after `--`");
  if (need(o->record_dir, 1, "--record", err)) return -1;
  if (o->data_dir && need(o->data_dir, 1, "--data", err)) return -1;
  if (o->tokenizer && need(o->tokenizer, 0, "--tokenizer", err)) return -1;
  if (o->artifact && (o->artifact[0] == '/' || strstr(o->artifact, "..")))
    return cli_fail(err, cmd, "--artifact: '%s' must be a path inside the folder", o->artifact);
  return 0;
}

/* Options before `--`, the command after it. CLI_OK, CLI_HELP (printed)
 * or CLI_ERROR (in err; also a missing or bad input path). */
static int parse_cli(int argc, char **argv, replay_cli *c, pg_error *err) {
  memset(c, 0, sizeof *c);
  replay_request_defaults(&c->q);
  replay_ext_opts *o = &c->q.o;
  o->out_dir = "replay-out";
  c->ro_bind = (cli_list){o->ro_extra, 0, SANDBOX_MAX_EXTRA};
  const cli_option opts[] = {
      CLI_STRING("record", 0, &o->record_dir, "DIR", "the submission folder"),
      CLI_CALLBACK("seed", 0, &c->q, "S", replay_take_seed, "the seed whose claim is checked"),
      CLI_DOUBLE_RANGE("budget-train", 0, &o->budget_train_s, "SEC", 0, 1e7,
                       "training budget (default " CHALLENGE_TIME_LIMIT_TEXT ")"),
      CLI_DOUBLE_RANGE("budget-eval", 0, &o->budget_eval_s, "SEC", 0, 1e7,
                       "evaluation budget (default " CHALLENGE_TIME_LIMIT_TEXT ")"),
      CLI_DOUBLE_RANGE("grace", 0, &o->grace_s, "SEC", 0, 1e7,
                       "added to the hard limit (default 60)"),
      CLI_DOUBLE_RANGE("tolerance", 0, &o->tolerance_bpb, "BPB", 0, 1e7,
                       "allowed |replayed - claimed| val_bpb (default 0.002)"),
      CLI_STRING("out", 0, &o->out_dir, "DIR",
                 "where the replay manifest replay-seedS.json and the\n"
                 "scratch folder scratch-seedS/ go (default: replay-out)"),
      CLI_STRING("data", 0, &o->data_dir, "DIR", "the data, read-only at /data"),
      CLI_STRING("tokenizer", 0, &o->tokenizer, "MODEL",
                 "the tokenizer, read-only at /tokenizer/NAME"),
      CLI_STRING("artifact", 0, &o->artifact, "FILE",
                 "the produced file that is the model (default: the one whose\n"
                 "size the log's `Serialized model LABEL:` line reports)"),
      CLI_LIST("ro-bind", 0, &c->ro_bind, "PATH",
               "also bind PATH read-only (an interpreter outside /usr)"),
      CLI_INT("gpus", 0, &o->gpus, "N", 1, NVML_ATTEST_MAX_GPUS,
              "give the run GPUs 0..N-1 only (default: every GPU;\n"
              "the challenge's hardware is 8 H100 SXM)"),
      CLI_FLAG("allow-busy", 0, &o->allow_busy,
               "run even when a process is already on a GPU"),
      CLI_INT("fresh-seeds", 0, &c->q.fresh_seeds, "K", 1, FRESH_SEEDS_MAX,
              "instead of --seed: run K seeds the submitter did not choose,\n"
              "derived from the folder's content digest and --salt, and test\n"
              "the folder's claimed per-seed results against them\n"
              "(REPRODUCTION_GAP; summary in OUT/replay-fresh.json)"),
      CLI_STRING("salt", 0, &c->q.salt, "S", "the maintainer's value for --fresh-seeds"),
      CLI_FLAG("json", 0, &c->q.json, "print the replay manifest on stdout"),
      CLI_ARGS(&c->extra, "", NULL),
      CLI_REST(&c->cmd, "CMD ARGS...", "the submission's command, run in the scratch copy"),
      CLI_END};
  const cli_command cmd = {
      .name = "replay", .usage = USAGE, .about = ABOUT, .options = opts, .footer = FOOTER};
  int r = cli_parse(&cmd, argc, argv, err);
  if (r != CLI_OK) return r;
  return check_cli(c, &cmd, err) ? CLI_ERROR : CLI_OK;
}

int cmd_replay(int argc, char **argv) {
  /* `pgolf replay MANIFEST ...` re-runs a pgolf run (verifier/replay_run.c);
   * everything else is an external submission replay. */
  if (argc >= 2 && argv[1][0] != '-') return replay_run_main(argc, argv);
  replay_cli c;
  pg_error err;
  int pr = parse_cli(argc, argv, &c, &err);
  if (pr != CLI_OK) return cli_status(pr, &err);
  double bpb;
  if (c.q.fresh_seeds) return replay_fresh(&c.q);
  return replay_supervised(&c.q, c.q.o.seed, &bpb);
}
