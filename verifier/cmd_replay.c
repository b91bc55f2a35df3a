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

#define DEFAULT_GRACE_S 60.0
#define DEFAULT_TOLERANCE_BPB 0.002

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
  replay_ext_opts o;
  cli_list ro_bind;
  cli_args cmd, extra;
  int have_seed, json;
  int fresh_seeds;  /* K, 0: one run of --seed */
  const char *salt; /* the maintainer's, for --fresh-seeds */
} replay_cli;

/* --seed S: any unsigned 64-bit integer, "not a seed" otherwise. */
static int take_seed(cli_parser *p, const cli_option *opt, const char *inline_value) {
  replay_cli *c = opt->dest;
  const char *v = cli_value(p, inline_value);
  if (!v) return -1;
  if (cli_parse_u64(v, 0, UINT64_MAX, &c->o.seed))
    return cli_error(p, "%s: '%s' is not a seed", cli_option_name(p), v);
  c->have_seed = 1;
  return 0;
}

/* An input path must exist with the right type before anything runs. */
static int need(const char *path, int want_dir, const char *opt, pg_error *err) {
  struct stat st;
  if (stat(path, &st) != 0) return pg_fail_errno(err, path, "%s", opt);
  if (want_dir && !S_ISDIR(st.st_mode)) return pg_fail(err, path, -1, "%s: not a folder", opt);
  if (!want_dir && !S_ISREG(st.st_mode)) return pg_fail(err, path, -1, "%s: not a file", opt);
  return 0;
}

static int check_cli(replay_cli *c, const cli_command *cmd, pg_error *err) {
  replay_ext_opts *o = &c->o;
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
  if (c->fresh_seeds && c->have_seed)
    return cli_fail(err, cmd, "--seed and --fresh-seeds exclude each other");
  if (c->fresh_seeds && !c->salt)
    return cli_fail(err, cmd, "--fresh-seeds needs --salt (the maintainer's value, published "
                              "after the replay)");
  if (!c->fresh_seeds && !c->have_seed) return cli_fail(err, cmd, "--seed is required");
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
  replay_ext_opts *o = &c->o;
  o->budget_train_s = CHALLENGE_TRAIN_LIMIT_S;
  o->budget_eval_s = CHALLENGE_EVAL_LIMIT_S;
  o->grace_s = DEFAULT_GRACE_S;
  o->tolerance_bpb = DEFAULT_TOLERANCE_BPB;
  o->out_dir = "replay-out";
  c->ro_bind = (cli_list){o->ro_extra, 0, SANDBOX_MAX_EXTRA};
  const cli_option opts[] = {
      CLI_STRING("record", 0, &o->record_dir, "DIR", "the submission folder"),
      CLI_CALLBACK("seed", 0, c, "S", take_seed, "the seed whose claim is checked"),
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
      CLI_INT("fresh-seeds", 0, &c->fresh_seeds, "K", 1, FRESH_SEEDS_MAX,
              "instead of --seed: run K seeds the submitter did not choose,\n"
              "derived from the folder's content digest and --salt, and test\n"
              "the folder's claimed per-seed results against them\n"
              "(REPRODUCTION_GAP; summary in OUT/replay-fresh.json)"),
      CLI_STRING("salt", 0, &c->salt, "S", "the maintainer's value for --fresh-seeds"),
      CLI_FLAG("json", 0, &c->json, "print the replay manifest on stdout"),
      CLI_ARGS(&c->extra, "", NULL),
      CLI_REST(&c->cmd, "CMD ARGS...", "the submission's command, run in the scratch copy"),
      CLI_END};
  const cli_command cmd = {
      .name = "replay", .usage = USAGE, .about = ABOUT, .options = opts, .footer = FOOTER};
  int r = cli_parse(&cmd, argc, argv, err);
  if (r != CLI_OK) return r;
  return check_cli(c, &cmd, err) ? CLI_ERROR : CLI_OK;
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

/* Other hardware than the challenge's: its timings do not decide, so the
 * budget findings become warnings that say why. */
static void timings_not_deciding(finding_list *f, const char *why) {
  static const char *const timing[] = {"TRAIN_OVER_BUDGET", "EVAL_OVER_BUDGET", "KILLED_AT_LIMIT"};
  for (size_t i = 0; i < f->n; i++)
    for (size_t k = 0; k < sizeof timing / sizeof timing[0]; k++)
      if (f->v[i].sev == SEV_ERROR && !strcmp(f->v[i].code, timing[k])) f->v[i].sev = SEV_WARNING;
  findings_add(f, "HARDWARE_MISMATCH", SEV_WARNING, NULL, 0,
               "%s: the run is judged, but its timings do not decide a 10-minute-track verdict",
               why);
}

/* "hardware": the attestation, whether it is the challenge's, the samples. */
static json_t *hardware_json(const nvml_attest *a, int matches, json_t *samples) {
  json_t *h = nvml_attest_json(a);
  if (!h) return NULL;
  json_object_set_new(h, "matches_challenge", json_boolean(matches));
  json_object_set_new(h, "samples", samples ? samples : json_null());
  return h;
}

static int replay_external(const replay_cli *c, uint64_t seed, double *bpb) {
  pg_error err;
  *bpb = NAN;
  char bwrap[4096];
  if (sandbox_find_bwrap(bwrap, sizeof bwrap, &err) || sandbox_probe(bwrap, &err)) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  replay_ext_opts o = c->o;
  o.seed = seed;
  o.progress = isatty(2);
  nvml_attest *hw = malloc(sizeof *hw);
  if (!hw) return pg_die_msg("replay: out of memory"), PG_EXIT_USAGE;
  nvml_attest_take(hw);
  char why[512];
  unsigned want = o.gpus > 0 ? (unsigned)o.gpus : CHALLENGE_WORLD_SIZE;
  int matches = nvml_matches_challenge(hw, want, why, sizeof why);
  finding_list f = {0};
  if (hw->attested && hw->n_procs > 0 && !o.allow_busy) {
    findings_add(&f, "HARDWARE_BUSY", SEV_ERROR, NULL, 0,
                 "%zu process%s already on a GPU (pid %u, %s): a stale process distorts the "
                 "timing; stop it or pass --allow-busy",
                 hw->n_procs, hw->n_procs == 1 ? "" : "es", hw->procs[0].pid,
                 hw->procs[0].comm[0] ? hw->procs[0].comm : "?");
    if (!c->json) print_findings(&o, &f, "(none: the replay did not run)");
    findings_free(&f);
    free(hw);
    return PG_EXIT_CHECK_FAILED;
  }
  nvml_sampler *sampler = NULL;
  if (hw->attested && nvml_sampler_start(&sampler, 1000.0, 1u << 20, &err)) sampler = NULL;
  replay_run r;
  replay_timings t;
  replay_verdict_in v;
  int rc = replay_external_run(&o, bwrap, &r, &err);
  json_t *samples = nvml_sampler_stop(sampler);
  if (!rc) rc = replay_judge(&o, &r, &t, &v, &f, &err);
  char hot[256];
  unsigned n_hot = rc ? 0 : nvml_samples_thermal(samples, hot, sizeof hot);
  if (n_hot)
    findings_add(&f, "HARDWARE_THROTTLED", SEV_WARNING, NULL, 0,
                 "thermal throttling during the run on %u GPU%s, %s: the timings are slower "
                 "than the hardware's; a budget overrun may be the cooling's, not the code's",
                 n_hot, n_hot == 1 ? "" : "s", hot);
  if (!rc && v.final) *bpb = v.final->val_bpb.v;
  if (!rc && hw->attested && !matches) timings_not_deciding(&f, why);
  char path[4096];
  snprintf(path, sizeof path, "%s/replay-seed%llu.json", o.out_dir, (unsigned long long)o.seed);
  if (!rc) {
    json_t *m = replay_manifest_json(&o, bwrap, &r, &t, &v, &f);
    json_t *h = hardware_json(hw, matches, samples);
    samples = NULL;
    if (m && h) json_object_set_new(m, "hardware", h);
    else json_decref(h);
    rc = m ? write_manifest(m, path, c->json, &err) : pg_fail(&err, path, -1, "out of memory");
    json_decref(m);
  }
  json_decref(samples);
  free(hw);
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

/* The summary of a fresh-seed replay: seeds, salt, digest, each seed's
 * replayed val_bpb and exit, the claimed per-seed results, the test. */
static json_t *fresh_json(const replay_cli *c, const char *digest, const uint32_t *seeds,
                          const double *bpb, const int *codes, const stats_set *claimed,
                          const repro_result *r, int tested) {
  json_t *runs = json_array(), *cl = json_array();
  for (int i = 0; i < c->fresh_seeds; i++)
    json_array_append_new(runs, json_pack("{s:I, s:o, s:i}", "seed", (json_int_t)seeds[i],
                                          "val_bpb", isnan(bpb[i]) ? json_null() : json_real(bpb[i]),
                                          "exit", codes[i]));
  for (size_t i = 0; i < claimed->n; i++) json_array_append_new(cl, json_real(claimed->v[i]));
  json_t *o = json_pack("{s:s, s:s, s:s, s:o, s:o}", "record", c->o.record_dir, "salt", c->salt,
                        "folder_digest", digest, "runs", runs, "claimed_val_bpb", cl);
  if (!o) return NULL;
  if (tested) {
    const char *verdict = !r->testable ? "untestable"
                          : r->gap_significant ? "REPRODUCTION_GAP" : "consistent";
    json_object_set_new(o, "reproduction",
                        json_pack("{s:s, s:f, s:f, s:f, s:o, s:o, s:s}", "test", r->test,
                                  "claimed_mean", r->claimed_mean, "replayed_mean",
                                  r->replayed_mean, "gap", r->gap,
                                  "p", r->testable ? json_real(r->p) : json_null(), "df",
                                  r->testable ? json_real(r->df) : json_null(), "verdict",
                                  verdict));
  }
  return o;
}

/* --fresh-seeds K: K replays with seeds derived from the folder and the
 * salt, then the claimed per-seed results against the replayed ones. */
static int replay_fresh(const replay_cli *c) {
  pg_error err;
  uint32_t seeds[FRESH_SEEDS_MAX];
  char digest[SHA256_HEX_LEN + 1];
  if (fresh_seeds(c->o.record_dir, c->salt, c->fresh_seeds, seeds, digest, &err)) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  stats_set claimed = {0};
  if (stats_set_add(&claimed, c->o.record_dir, "--record", 0, &err)) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  double bpb[FRESH_SEEDS_MAX], got[FRESH_SEEDS_MAX];
  int codes[FRESH_SEEDS_MAX], worst = PG_EXIT_OK;
  size_t n_got = 0;
  for (int i = 0; i < c->fresh_seeds; i++) {
    if (!c->json) printf("== fresh seed %d of %d: %u\n", i + 1, c->fresh_seeds, seeds[i]);
    codes[i] = replay_external(c, seeds[i], &bpb[i]);
    if (codes[i] == PG_EXIT_USAGE) {
      stats_set_free(&claimed);
      return PG_EXIT_USAGE;
    }
    if (codes[i] > worst) worst = codes[i];
    if (!isnan(bpb[i])) got[n_got++] = bpb[i];
  }
  repro_result r;
  int tested = n_got > 0 && claimed.n > 0 &&
               reproduction_test(claimed.v, claimed.n, got, n_got, CHALLENGE_ALPHA, &r, &err) == 0;
  json_t *sum = fresh_json(c, digest, seeds, bpb, codes, &claimed, &r, tested);
  char path[4096];
  snprintf(path, sizeof path, "%s/replay-fresh.json", c->o.out_dir);
  int rc = sum ? write_manifest(sum, path, 0, &err) : pg_fail(&err, path, -1, "out of memory");
  json_decref(sum);
  stats_set_free(&claimed);
  if (rc) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  if (!c->json) {
    if (tested)
      printf("\nclaimed mean %.8f (n=%zu), replayed mean %.8f (n=%zu), gap %.8f: %s%s\n",
             r.claimed_mean, r.n_claimed, r.replayed_mean, r.n_replayed, r.gap,
             !r.testable ? "untestable" : r.gap_significant ? "REPRODUCTION_GAP" : "consistent",
             r.testable ? "" : " (one run on each side)");
    else
      printf("\nno reproduction test: %s\n", n_got ? "the folder claims no per-seed result"
                                                     : "no replay printed a final val_bpb");
    printf("summary: %s\n", path);
  }
  if (tested && r.gap_significant) return PG_EXIT_CHECK_FAILED;
  return worst;
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
  if (c.fresh_seeds) return replay_fresh(&c);
  return replay_external(&c, c.o.seed, &bpb);
}
