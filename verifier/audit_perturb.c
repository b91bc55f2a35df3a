/* `pgolf audit --perturb`: the perturbation test from the command line
 * (verifier/audit_perturb.h says what it proves). The evaluator is
 * pgolf's own (`--self MODE` and `pgolf eval` options) or any command
 * after `--`, run once per split with
 *   DATA_PATH               the directory holding the split to score
 *   PGOLF_SCORE_DUMP        where to write the score dump
 *   PGOLF_PROBE_POSITIONS   positions where probes are wanted ("k1,k2,...")
 * in its environment; its standard output goes to standard error. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/error.h"
#include "verifier/audit.h"
#include "verifier/audit_perturb.h"

static const char USAGE[] =
    "pgolf audit --perturb --data DIR [OPTIONS] --self MODE [EVAL OPTIONS...]\n"
    "pgolf audit --perturb --data DIR [OPTIONS] -- COMMAND [ARGS...]";
static const char ABOUT[] =
    "Run an evaluation on the validation split in DIR and again, once per cut k, on a\n"
    "copy whose tokens from index k on are replaced by a fixed different stream\n"
    "(splitmix64, SUBMISSION.md). Pass iff at every cut each nll before k is\n"
    "unchanged (bit for bit, or within --tolerance), each probe at or before k holds\n"
    "the same distribution, and something at or after k moved.";
static const char FOOTER[] =
    "Exit: 0 every cut passes, 1 a cut moved or was inconclusive, 2 usage error or\n"
    "the evaluation could not run.";

typedef struct perturb_args {
  const char *data, *keep, *self_mode;
  uint64_t cuts[PERTURB_MAX_CUTS];
  size_t n_cuts;
  uint64_t chunk;
  double tolerance;
  int json, perturb;
  cli_args self_tail, command; /* eval options (--self) or the command (--) */
  char **tail;
  int n_tail;
} perturb_args;

static int parse_u64(const char *s, uint64_t *out) { return cli_parse_u64(s, 0, UINT64_MAX, out); }

/* The --chunk among pgolf eval options, or 32768 (its default). */
static uint64_t eval_chunk(char **opts, int n) {
  uint64_t c = 32768;
  for (int i = 0; i + 1 < n; i++)
    if (!strcmp(opts[i], "--chunk") && parse_u64(opts[i + 1], &c)) c = 0;
  return c;
}

/* --cut K, repeatable. */
static int take_cut(cli_parser *p, const cli_option *o, const char *inline_value) {
  perturb_args *a = o->dest;
  const char *v = cli_value(p, inline_value);
  if (!v) return -1;
  if (a->n_cuts == PERTURB_MAX_CUTS) return cli_error(p, "too many --cut");
  if (parse_u64(v, &a->cuts[a->n_cuts])) return cli_error(p, "--cut wants a position: %s", v);
  a->n_cuts++;
  return 0;
}

/* --self MODE: the mode, then everything after it is eval's. */
static int take_self(cli_parser *p, const cli_option *o, const char *inline_value) {
  perturb_args *a = o->dest;
  if (!(a->self_mode = cli_value(p, inline_value))) return -1;
  cli_take_rest(p, &a->self_tail);
  return 0;
}

/* CLI_OK, CLI_HELP (printed) or CLI_ERROR (in err). */
static int parse_args(int argc, char **argv, perturb_args *a, pg_error *err) {
  memset(a, 0, sizeof *a);
  const cli_option opts[] = {
      CLI_FLAG("perturb", 0, &a->perturb, "run the perturbation test (this usage)"),
      CLI_STRING("data", 0, &a->data, "DIR",
                 "directory with fineweb_val_*.bin (other entries are linked\n"
                 "into each copy)"),
      CLI_CALLBACK("cut", 0, a, "K", take_cut,
                   "a cut position (repeatable); default: chosen from --chunk\n"
                   "(boundaries and insides of chunks) or the stream's quarters"),
      CLI_UNSIGNED("chunk", 0, &a->chunk, "C", 1, UINT64_MAX,
                   "the evaluator's chunk size, for choosing cuts (with --self\n"
                   "ttt it defaults to the evaluation's --chunk)"),
      CLI_DOUBLE_RANGE("tolerance", 0, &a->tolerance, "X", 0, 1e300,
                       "allowed |nll difference| for evaluators that are not\n"
                       "deterministic (default 0: bit-identical)"),
      CLI_STRING("keep", 0, &a->keep, "DIR", "keep the copies and dumps in DIR (created)"),
      CLI_FLAG("json", 0, &a->json, "the report as JSON"),
      CLI_CALLBACK("self", 0, a, "MODE ...", take_self,
                   "pgolf eval --mode MODE with the options that follow\n"
                   "(--artifact, --tokenizer, --seq-len, --stride, --chunk, ...)"),
      CLI_REST(&a->command, "COMMAND ...",
               "any evaluator: reads $DATA_PATH, writes $PGOLF_SCORE_DUMP"),
      CLI_END};
  const cli_command cmd = {
      .name = "audit --perturb", .usage = USAGE, .about = ABOUT, .options = opts, .footer = FOOTER};
  int r = cli_parse(&cmd, argc, argv, err);
  if (r != CLI_OK) return r;
  if (a->command.v && !a->command.n) return cli_fail(err, &cmd, "no command after --");
  if (!a->data) return cli_fail(err, &cmd, "--data is required");
  const cli_args *tail = a->self_mode ? &a->self_tail : &a->command;
  if (!tail->v) return cli_fail(err, &cmd, "give the evaluator: --self MODE ... or -- COMMAND ...");
  a->tail = tail->v;
  a->n_tail = tail->n;
  if (a->self_mode && !a->chunk && !strcmp(a->self_mode, "ttt"))
    a->chunk = eval_chunk(a->tail, a->n_tail);
  for (int i = 0; a->self_mode && i < a->n_tail; i++)
    if (!strcmp(a->tail[i], "--data") || !strcmp(a->tail[i], "--score-dump") ||
        !strcmp(a->tail[i], "--mode"))
      return cli_fail(err, &cmd, "--self sets this eval option itself: %s", a->tail[i]);
  return CLI_OK;
}

/* "k1,k2,..." (malloc'd). */
static char *position_list(const uint64_t *p, size_t n) {
  char *s = malloc(n * 21 + 1);
  if (!s) return NULL;
  size_t len = 0;
  s[0] = 0;
  for (size_t i = 0; i < n; i++)
    len += (size_t)sprintf(s + len, "%s%llu", i ? "," : "", (unsigned long long)p[i]);
  return s;
}

static int has_option(char **opts, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(opts[i], name)) return 1;
  return 0;
}

/* Run argv with the evaluation's environment; 0 if it exits 0. */
static int run_command(char **argv, const char *data_dir, const char *dump, const char *probes,
                       pg_error *err) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return pg_fail_errno(err, argv[0], "cannot fork");
  if (pid == 0) {
    setenv("DATA_PATH", data_dir, 1);
    setenv("PGOLF_SCORE_DUMP", dump, 1);
    setenv("PGOLF_PROBE_POSITIONS", probes, 1);
    dup2(2, 1); /* our stdout is the report */
    execvp(argv[0], argv);
    fprintf(stderr, "pgolf: %s: cannot run: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return pg_fail_errno(err, argv[0], "cannot wait");
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
  if (WIFEXITED(st))
    return pg_fail(err, argv[0], -1, "the evaluation exited with status %d on %s",
                   WEXITSTATUS(st), data_dir);
  return pg_fail(err, argv[0], -1, "the evaluation was killed by signal %d on %s",
                 WTERMSIG(st), data_dir);
}

static int eval_command(void *ctx, const char *data_dir, const char *dump, const uint64_t *probe_at,
                        size_t n_probe_at, pg_error *err) {
  const perturb_args *a = ctx;
  char *probes = position_list(probe_at, n_probe_at);
  if (!probes) return pg_fail(err, "", -1, "out of memory");
  int rc;
  if (!a->self_mode) {
    rc = run_command(a->tail, data_dir, dump, probes, err);
    free(probes);
    return rc;
  }
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    free(probes);
    return pg_fail_errno(err, "/proc/self/exe", "cannot find the pgolf binary");
  }
  self[n] = 0;
  char **argv = calloc((size_t)a->n_tail + 12, sizeof *argv);
  if (!argv) {
    free(probes);
    return pg_fail(err, "", -1, "out of memory");
  }
  int k = 0;
  const char *fixed[] = {self, "eval", "--mode", a->self_mode, "--data", data_dir, "--score-dump", dump};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) argv[k++] = (char *)fixed[i];
  if (!has_option(a->tail, a->n_tail, "--probes") && !has_option(a->tail, a->n_tail, "--probe-at")) {
    argv[k++] = "--probe-at";
    argv[k++] = probes;
  }
  for (int i = 0; i < a->n_tail; i++) argv[k++] = a->tail[i];
  rc = run_command(argv, data_dir, dump, probes, err);
  free(argv);
  free(probes);
  return rc;
}

static void print_text(const perturb_report *r, double tol, int failed) {
  printf("perturb: %s (%zu cuts, %d runs, %s)\n", failed ? "FAIL" : "PASS", r->n_cuts, r->runs,
         tol > 0 ? "within the tolerance" : "bit-identical prefixes required");
  for (size_t i = 0; i < r->n_cuts; i++) {
    const perturb_cut *c = &r->cuts[i];
    printf("  %-12s cut %-10llu %s\n", perturb_status_name(c->status), (unsigned long long)c->cut,
           c->why);
  }
}

static void print_json(const perturb_report *r, double tol, int failed) {
  json_t *cuts = json_array();
  for (size_t i = 0; i < r->n_cuts; i++) {
    const perturb_cut *c = &r->cuts[i];
    json_array_append_new(
        cuts, json_pack("{s:I, s:s, s:I, s:I, s:o, s:o, s:f, s:I, s:s}", "cut",
                        (json_int_t)c->cut, "status", perturb_status_name(c->status), "compared",
                        (json_int_t)c->compared, "probes_compared",
                        (json_int_t)c->probes_compared, "first_moved",
                        c->first_moved < 0 ? json_null() : json_integer(c->first_moved),
                        "probe_moved", c->probe_moved < 0 ? json_null() : json_integer(c->probe_moved),
                        "max_abs_diff", c->max_abs_diff, "moved_after", (json_int_t)c->moved_after,
                        "why", c->why));
  }
  json_t *j = json_pack("{s:s, s:f, s:I, s:I, s:i, s:o}", "verdict", failed ? "fail" : "pass",
                        "tolerance", tol, "n_tokens", (json_int_t)r->n_tokens, "vocab_size",
                        (json_int_t)r->vocab_size, "runs", r->runs, "cuts", cuts);
  char *s = j ? json_dumps(j, JSON_PRESERVE_ORDER) : NULL;
  if (s) puts(s);
  free(s);
  json_decref(j);
}

int audit_perturb_main(int argc, char **argv) {
  perturb_args a;
  pg_error err;
  int pr = parse_args(argc, argv, &a, &err);
  if (pr != CLI_OK) return cli_status(pr, &err);
  perturb_opts o = {.data_dir = a.data, .cuts = a.n_cuts ? a.cuts : NULL, .n_cuts = a.n_cuts,
                    .chunk = a.chunk, .tolerance = a.tolerance, .scratch = NULL, .keep = 0};
  if (a.keep) {
    if (mkdir(a.keep, 0755) && errno != EEXIST) {
      pg_die_msg("audit --perturb: %s: cannot create: %s", a.keep, strerror(errno));
      return PG_EXIT_USAGE;
    }
    o.scratch = a.keep;
  }
  perturb_report *r = malloc(sizeof *r);
  if (!r) return pg_die_msg("audit --perturb: out of memory"), PG_EXIT_USAGE;
  int failed = perturb_run(&o, eval_command, &a, r, &err);
  if (failed < 0) {
    pg_error_print(&err);
    free(r);
    return PG_EXIT_USAGE;
  }
  if (a.json) print_json(r, a.tolerance, failed);
  else print_text(r, a.tolerance, failed);
  free(r);
  return failed ? PG_EXIT_CHECK_FAILED : PG_EXIT_OK;
}
