/* The training run: the official train_gpt.py main() loop on the CPU,
 * step-based, deterministic, checkpointable.
 *
 * Per step (0-based s, as the official loop):
 *   lr_mult  = schedule_lr_mult(s, iterations, warmdown_iters)
 *   grads    = 0
 *   for each of grad_accum_steps micro-steps:
 *     x, y   = loader_next_batch(train_batch_tokens, seq_len, grad_accum)
 *     loss_k = gpt_forward(x, y); train_loss += loss_k   (float32, in order)
 *     gpt_backward(scale 1/grad_accum)                   ((loss*grad_scale).backward())
 *   train_loss /= grad_accum                             (float32)
 *   optimizer_step(s, lr_mult): momentum warm-up, lr = base*lr_mult,
 *                               optional clip, Adam/Muon updates
 * With world_size N > 1 each of the N ranks does the micro-steps above on
 * its own span (loader rank r of N, grad_accum_steps = 8 / N), the ranks'
 * gradients are combined in rank order (trainer/grad_sum.h) and train_loss
 * is rank 0's; the ranks run in this process or over the processes of
 * train_options.comm (trainer/comm.h), with the same bits.
 * The loss record of step s is (s + 1, bits of train_loss, bits of
 * (float)lr_mult, training ms): steps count from 1, as the official log's
 * `step:1/M train_loss:...` line for the same step. The loss chain is over
 * these records.
 *
 * Validation runs at step 0 and every val_loss_every steps when that is
 * > 0, and always after the last step (official cadence); its time is not
 * training time. After training: the int8+zlib artifact, its round-trip
 * evaluation (the final metric), the log lines, and the manifest.
 *
 * Checkpoints (DIR/checkpoint, trainer/checkpoint.h container) hold the
 * configuration, parameters, optimizer state, loader state, step, the loss
 * records and chain head so far, the init record, the budget plan and the
 * log text; a resumed run continues bit for bit, so its chain equals an
 * uninterrupted run's. With every checkpoint and at the end, DIR/losses.txt
 * holds the records so far as a loss file (`STEP 0xLOSS 0xLR_MULT WALL_MS`,
 * manifests/loss_file.h), which `pgolf manifest create --losses` reads.
 * Threads do not change any bit (every reduction is
 * ordered independently of the thread count), so a run may resume with a
 * different --threads. */
#ifndef PGOLF_TRAIN_H
#define PGOLF_TRAIN_H

#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "common/sha256.h"
#include "trainer/checkpoint.h"
#include "trainer/comm.h"
#include "trainer/train_config.h"

#define TRAIN_CHECKPOINT_NAME "checkpoint"
#define TRAIN_ARTIFACT_NAME "model.int8.ptz"
#define TRAIN_MANIFEST_NAME "manifest.json"
#define TRAIN_LOG_NAME "train.log"
#define TRAIN_LOSSES_NAME "losses.txt" /* manifests/loss_file.h format, hex bits */
#define TRAIN_PLAN_SAMPLES 4 /* timed steps for --budget (the first is dropped) */

typedef struct train_options {
  train_config cfg;         /* complete and checked (train_config_check) */
  const char *out_dir;      /* created if absent */
  int64_t checkpoint_every; /* > 0: write DIR/checkpoint every N steps */
  int64_t stop_after;       /* > 0: stop after step N with a checkpoint, as if interrupted */
  const checkpoint *resume; /* a checkpoint to continue from, or NULL */
  const char *resume_name;  /* its path, for errors */
  FILE *echo;               /* log lines also printed here (stdout), or NULL */
  int quiet;                /* no progress line */
  comm *comm;               /* the processes running the world's ranks, or NULL: this one alone */
  int device_cuda;          /* the steps on this process's CUDA device (trainer/train_cuda.c) */
} train_options;

typedef struct train_result {
  int finished;        /* 0: stopped by stop_after (a checkpoint was written) */
  int64_t steps;       /* steps done */
  uint8_t chain[SHA256_LEN];
  uint32_t last_loss_bits;
  double val_loss, val_bpb; /* of the round-tripped artifact */
  uint64_t model_bytes, code_bytes;
  double train_ms;
  double comm_ms;      /* of train_ms, time in the gradient exchange (0 for one process) */
} train_result;

int train_run(const train_options *o, train_result *r, pg_error *err);

/* The configuration a checkpoint was written with (its "config" entry),
 * for resuming: read over `c`. */
int train_checkpoint_config(const checkpoint *ck, const char *name, train_config *c, pg_error *err);

#endif
