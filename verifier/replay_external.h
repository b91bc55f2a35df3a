/* Supervised replay of an external submission.
 *
 * The submission folder is copied to a scratch directory, its command is
 * run there under the sandbox (verifier/sandbox.h) in a process group of
 * its own, and its standard output, standard error and log file
 * (logs/RUN_ID*, as the official script writes it) are read line by line
 * as they appear and stamped with the replay's clock. At the hard limit
 * (train budget + eval budget + grace, from process start) the whole
 * group gets SIGTERM, then SIGKILL. Afterwards the log is parsed with the
 * shared parser (verifier/log_parse.h), the produced files are measured
 * and hashed, the result is compared with the folder's claim for the
 * seed, and a replay manifest is written atomically.
 *
 * The three phases (run, judge, manifest) live in three files:
 * replay_external.c, replay_judge.c, replay_manifest.c. */
#ifndef PGOLF_REPLAY_EXTERNAL_H
#define PGOLF_REPLAY_EXTERNAL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/sha256.h"
#include "verifier/findings.h"
#include "verifier/log_parse.h"
#include "verifier/replay_clock.h"
#include "verifier/sandbox.h"

#define REPLAY_KILL_WAIT_MS 2000     /* SIGTERM to SIGKILL */
#define REPLAY_MAX_FILES 4096        /* in the submission folder or produced */
#define REPLAY_CLAIM_MAX_BYTES (1u << 20)

typedef struct replay_ext_opts {
  const char *record_dir; /* the submission folder */
  uint64_t seed;
  double budget_train_s, budget_eval_s, grace_s;
  double tolerance_bpb;
  const char *out_dir;
  const char *data_dir;  /* NULL: none bound */
  const char *tokenizer; /* NULL: none bound */
  const char *artifact;  /* produced file to count, relative to the folder; NULL: found by size */
  const char *ro_extra[SANDBOX_MAX_EXTRA];
  size_t n_ro_extra;
  char *const *cmd; /* NULL-terminated */
  int progress;     /* print a progress line on stderr (a terminal) */
  int gpus;         /* GPUs given to the run (sandbox.h); -1 all */
  int allow_busy;   /* run even when a process is already on a GPU */
} replay_ext_opts;

/* Findings are verifier/findings.h's, shared with `pgolf check`. */

/* A file of the folder (as copied) or produced by the run. */
typedef struct replay_file {
  char *rel;
  uint64_t bytes;
  uint8_t sha256[SHA256_LEN];
  double created_ms, written_ms; /* produced files only; NAN if unseen */
} replay_file;

typedef struct replay_files {
  replay_file *v;
  size_t n, cap;
} replay_files;

void replay_files_free(replay_files *f);

/* Everything one run measured. */
typedef struct replay_run {
  char scratch[4096];
  char run_id[64];
  replay_clock clock;
  replay_stream out, err, log;
  char log_rel[512]; /* "" if the program wrote no log file: stdout is the log */
  replay_watch watch;
  replay_files code;     /* the folder before the run */
  uint8_t code_tree[SHA256_LEN];
  replay_files produced; /* new or changed files after the run */
  int exited, signaled, status; /* status: exit code or signal number */
  int killed;                   /* killed at the hard limit */
  double limit_ms, killed_ms, exit_ms;
  pg_log parsed;
  int parsed_ok;
} replay_run;

/* Derived events and verdict inputs (filled by replay_judge). */
typedef struct replay_timings {
  double first_step_ms, end_train_ms, end_eval_ms; /* NAN if not seen */
  uint32_t first_step_line, end_train_line, end_eval_line;
  int training_ended;      /* the log shows training was over */
  double train_external_ms; /* end of training - first step + first step's own time - val pauses */
  double val_pause_ms;
  double train_logged_ms;   /* the log's own clock at the end of training; NAN if none */
  double step_ms;           /* one step, the tolerance; NAN if unknown */
  double eval_external_ms;
} replay_timings;

typedef struct replay_verdict_in {
  const replay_file *artifact; /* into run->produced, NULL if none */
  int64_t code_bytes;
  const char *code_file;
  const log_metric *final;
  double claim_bpb; /* NAN if none */
  char claim_source[128];
} replay_verdict_in;

/* Copy the folder, run the command in the sandbox, supervise it. */
int replay_external_run(const replay_ext_opts *o, const char *bwrap, replay_run *r, pg_error *err);
void replay_run_free(replay_run *r);

/* Parse the log, derive the timings, pick the artifact, read the claim,
 * and list the findings. */
int replay_judge(const replay_ext_opts *o, replay_run *r, replay_timings *t, replay_verdict_in *v,
                 finding_list *f, pg_error *err);

/* The replay manifest (a new reference). */
json_t *replay_manifest_json(const replay_ext_opts *o, const char *bwrap, const replay_run *r,
                             const replay_timings *t, const replay_verdict_in *v,
                             const finding_list *f);

/* ---- a whole replay (replay_supervised.c) ---- */

#define REPLAY_DEFAULT_GRACE_S 60.0
#define REPLAY_DEFAULT_TOLERANCE_BPB 0.002

/* What `pgolf replay --record` asks for. */
typedef struct replay_request {
  replay_ext_opts o;
  int json;         /* print the manifest on stdout instead of the findings table */
  int fresh_seeds;  /* K, 0: one run of o.seed */
  const char *salt; /* the maintainer's, for fresh_seeds */
  int seed_given;   /* --seed was parsed (replay_take_seed) */
} replay_request;

/* Zero *q, then the challenge's budgets, the default grace and tolerance. */
void replay_request_defaults(replay_request *q);
/* The --seed option's callback (dest: the replay_request): any unsigned
 * 64-bit integer into o.seed, setting seed_given; "not a seed" otherwise. */
struct cli_parser;
struct cli_option;
int replay_take_seed(struct cli_parser *p, const struct cli_option *opt, const char *inline_value);

/* One replay of seed: attest the hardware (HARDWARE_BUSY stops it unless
 * o.allow_busy), run, judge, add the hardware findings, write
 * OUT/replay-seedS.json and print the findings. Returns the exit code
 * (0 pass, 1 an error finding, 2 the replay could not run; printed);
 * *bpb is the replayed final val_bpb, NAN when none. */
int replay_supervised(const replay_request *q, uint64_t seed, double *bpb);
/* --fresh-seeds K: K replays with seeds derived from the folder and the
 * salt, then the claimed per-seed results against the replayed ones;
 * OUT/replay-fresh.json. The exit code as above (1 also for
 * REPRODUCTION_GAP). */
int replay_fresh(const replay_request *q);

#endif
