/* The state of one training run, shared by train.c (setup and loop),
 * train_ckpt.c (checkpoint save/restore) and train_finish.c (export,
 * evaluation, manifest). Not a public interface: see train.h. */
#ifndef PGOLF_TRAIN_INTERNAL_H
#define PGOLF_TRAIN_INTERNAL_H

#include <jansson.h>
#include <stdint.h>

#include "manifests/loss_file.h"
#include "trainer/comm.h"
#include "trainer/eval.h"
#include "trainer/gpt.h"
#include "trainer/grad_sum.h"
#include "trainer/loader.h"
#include "trainer/model.h"
#include "trainer/optimizer.h"
#include "trainer/progress.h"
#include "trainer/train.h"
#include "trainer/train_log.h"

typedef struct trainer {
  const train_options *o;
  train_config cfg; /* iterations may be re-planned from a budget */
  gpt_precision prec;
  gpt_layout l;
  float *params, *grads;
  gpt_params p, g;
  gpt_acts *acts;
  int B, T; /* micro-batch: sequences x tokens */
  uint16_t *x, *y;
  optimizer opt;
  token_loader loader;

  /* The official ranks (cfg.world_size) this process computes: ranks
   * first_rank .. first_rank + n_local - 1 of the world. With world 1 the
   * gradient accumulates in grads as it always has; otherwise each rank's
   * into its own slice of rank_grads, combined by grad_sum.h. */
  comm *comm; /* o->comm, or solo */
  comm solo;
  int n_local, first_rank;
  float *rank_grads;      /* n_local x n_params, or NULL for world 1 */
  gpt_params *rank_g;     /* each rank's gradient tensors */
  loader_state *rank_ls;  /* each rank's place in the stream */
  uint64_t *all_ls;       /* every rank's, gathered for a checkpoint: 3 x world_size */
  grad_exchange gx;
  optimizer_shard shard; /* Muon's exchange over processes (used when comm->size > 1) */
  float *mu_send, *mu_recv;
  int *mu_count, *mu_displ; /* floats of Muon updates per process */
  double exchange_ms; /* training time spent in the exchange */

  int64_t step;    /* steps done */
  double train_ms; /* training time so far (validation excluded) */
  loss_record *recs;
  size_t n_recs, cap_recs;
  uint8_t chain[SHA256_LEN];

  json_t *init;  /* predicate.init */
  json_t *plan;  /* predicate.schedule.plan, or NULL */
  json_t *evals; /* validation results during training, for the manifest */
  double last_val_loss, last_val_bpb; /* the last validation during training */
  int have_val;
  val_data val; /* opened at the first evaluation */
  byte_luts luts;
  int val_open;
  eval_result last_eval; /* of the last evaluation of any parameters */
  int gpu_trees;          /* PGOLF_TEST_GPU_TREES=1: the CPU sums by the GPU's trees */

  struct trainer_gpu *gpu; /* --device cuda: the model and optimizer on the GPU, else NULL */

  train_log log;
  progress prog;
  char path_buf[5][1200]; /* checkpoint, artifact, manifest, log, losses */
} trainer;

enum { PATH_CKPT = 0, PATH_ARTIFACT = 1, PATH_MANIFEST = 2, PATH_LOG = 3, PATH_LOSSES = 4 };

/* train_cuda.c: the steps on this process's GPU. The device holds the parameters,
 * gradients and optimizer state while it trains; trainer_gpu_get brings
 * them to t->params and t->opt before anything on the host reads them
 * (validation, checkpoint, export), trainer_gpu_put sends the host's after
 * anything there wrote them (initialisation, resume, the budget plan's
 * restore). */
int trainer_gpu_open(trainer *t, pg_error *err);
/* failed: the run stopped on an error; over several processes the GPU's
 * state is then left to the process's exit (a peer may never answer). */
void trainer_gpu_close(trainer *t, int failed);
int trainer_gpu_put(trainer *t, pg_error *err);
int trainer_gpu_get(trainer *t, pg_error *err);
/* train.c's rank_step on the GPU for local rank l: the gradient cleared,
 * grad_accum micro-steps from the loader (staged ahead), *loss their mean
 * as the CPU takes it. */
int trainer_gpu_rank_step(trainer *t, int l, float *loss, pg_error *err);
/* World > 1: the ranks' gradients of this step combined in rank order on
 * the device (kernels/ordered_sum.h; over NCCL between processes), waiting
 * at most comm->timeout_s for the other processes. */
int trainer_gpu_combine(trainer *t, pg_error *err);
int trainer_gpu_optimizer_step(trainer *t, double lr_mult, pg_error *err);
/* eval_val on the GPU over t->val (open): the same batches, each target's
 * loss brought back and summed on the host in token order in float64, so
 * *r is eval_val's with the GPU's kernels (the CPU's under
 * PGOLF_TEST_GPU_TREES=1, where the products agree). params: host
 * parameters that first replace the device's (the final evaluation's
 * dequantized ones), or NULL for the ones it trains. */
int trainer_gpu_validate(trainer *t, const float *params, eval_result *r, pg_error *err);
/* predicate.environment.device: the GPU, its driver and runtime, cuBLASLt
 * and its plan per GEMM shape; every process's GPU, and NCCL (version and
 * NCCL_* settings) when there are several. */
json_t *trainer_gpu_json(trainer *t);
/* One log line naming the device. */
void trainer_gpu_log(trainer *t);

/* train_ckpt.c */
int trainer_save(trainer *t, pg_error *err); /* every process: gather, then process 0 writes */
int trainer_gather_loaders(trainer *t, pg_error *err); /* every process: into all_ls */
int trainer_write_checkpoint(trainer *t, pg_error *err); /* process 0, after a gather */
int trainer_restore(trainer *t, const checkpoint *ck, const char *name, pg_error *err);

/* train_finish.c */
int trainer_validate(trainer *t, const float *params, double *loss, double *bpb, pg_error *err);
int trainer_finish(trainer *t, train_result *r, pg_error *err);
void trainer_close_val(trainer *t);

double trainer_now_ms(void);
int trainer_open_log(trainer *t, const char *prior, size_t prior_len, pg_error *err);
int trainer_add_record(trainer *t, uint64_t step, float loss, float lr_mult, double wall_ms);

#endif
