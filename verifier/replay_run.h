/* Replay of a pgolf run: re-run the trainer with the configuration, seed
 * and step count a manifest records, on this machine's clock, and compare
 * the loss chain step by step, the artifact bytes and the final metric bit
 * for bit. Writes a replay manifest beside the original
 * (NAME.replay.json for NAME.json). */
#ifndef PGOLF_REPLAY_RUN_H
#define PGOLF_REPLAY_RUN_H

#include <jansson.h>

#include "common/error.h"
#include "verifier/findings.h"

typedef struct replay_run_opts {
  const char *manifest_path;
  int threads;              /* 0: OpenMP's default */
  const char *out_dir;      /* where the re-run writes; NULL: NAME.replay.d/ */
  const char *data;         /* override predicate.config.data, or NULL */
  const char *tokenizer;    /* override predicate.config.tokenizer, or NULL */
  double budget_train_s;    /* 600 */
  double budget_eval_s;     /* 600 */
  int quiet;
  const char *device;       /* "cpu" or "cuda"; NULL: the device the run recorded */
} replay_run_opts;

/* Findings (codes): MANIFEST_INVALID (its own chain does not verify),
 * CHAIN_MISMATCH (the first step whose loss bits differ, or a different
 * step count or head), ARTIFACT_MISMATCH, METRIC_MISMATCH,
 * TRAIN_OVER_BUDGET, EVAL_OVER_BUDGET, and REPLAY_ENVIRONMENT warnings
 * (replay_compare_device). A run recorded on a GPU replays on a GPU
 * (this process's; one process, whatever the run's count: the chain does
 * not depend on it) unless o->device says otherwise; without a GPU that
 * is an input error naming the runtime's reason. Returns -1 on input errors (bad
 * manifest file, trainer failure), else 0 with the findings filled and
 * the replay manifest written to *replay_path (a buffer of cap bytes). */
int replay_pgolf_run(const replay_run_opts *o, finding_list *f, char *replay_path, size_t cap,
                     pg_error *err);

/* The device a replay ran on (predicate.environment.device of its
 * manifest, rep) against the recorded one (rec; either NULL for a CPU
 * run): a REPLAY_ENVIRONMENT warning per difference (another device kind;
 * for GPUs the model, compute capability, SM count, driver, runtime,
 * cuBLASLt's version and workspace, and each product whose algorithm
 * differs or was never recorded). Returns how many it added. */
int replay_compare_device(const json_t *rec, const json_t *rep, finding_list *f);

/* `pgolf replay MANIFEST [options]`: argv[0] is "replay". */
int replay_run_main(int argc, char **argv);

#endif
