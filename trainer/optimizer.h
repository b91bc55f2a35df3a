/* The official optimizer split over pgolf's flat parameter buffer:
 *   GPT_GROUP_EMBED   tok_emb.weight                  Adam, tied_embed_lr
 *   GPT_GROUP_MATRIX  2-D block matrices              Muon, matrix_lr
 *   GPT_GROUP_SCALAR  vectors, control tensors, skips Adam, scalar_lr
 * One optimizer_step is the official loop's tail for one step: the Muon
 * momentum of the warm-up, every group's lr = base_lr * lr_mult, optional
 * clipping (hp.grad_clip_norm > 0), then the three updates (trainer/adam.h,
 * trainer/muon.h, trainer/clip.h say how each is computed).
 *
 * Precision: GPT_FP32 runs everything in float32. GPT_MIXED is the
 * official setup: the token embedding is a bf16 parameter with a bf16
 * gradient and bf16 Adam state (its gradient is rounded to bf16 in place
 * before use, and its parameter, exp_avg and exp_avg_sq are stored rounded);
 * Muon's Newton-Schulz and update are bf16; everything else is float32.
 *
 * State: flat float32 arrays, the complete optimizer state, listed by
 * optimizer_state for checkpoints (saving and restoring them resumes bit
 * for bit):
 *   optim.adam.exp_avg      Adam tensors' exp_avg, concatenated in layout order
 *   optim.adam.exp_avg_sq   likewise exp_avg_sq
 *   optim.muon.momentum     Muon tensors' momentum buffers, in layout order
 *   optim.adam.step         1 float: torch's state["step"] (steps taken)
 * Determinism: bit-identical for any OpenMP thread count. */
#ifndef PGOLF_OPTIMIZER_H
#define PGOLF_OPTIMIZER_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "trainer/checkpoint.h"
#include "trainer/gpt.h"
#include "trainer/model.h"
#include "trainer/optim.h"

#define OPTIMIZER_N_STATE 4

typedef struct optimizer_state_array {
  const char *name;
  float *data;
  size_t n;
} optimizer_state_array;

typedef struct optimizer {
  optim_hparams hp;
  size_t n_adam, n_muon; /* state elements */
  size_t *state_off;     /* per layout tensor: offset into its group's state */
  float *adam_m, *adam_v, *muon_buf;
  float adam_step;
  float *work; /* Muon scratch, sized for the largest matrix */
  int tree;    /* norms by the GPU's trees (KERNEL_TREE): the CUDA optimizer's bits */
  float *muon_u; /* Muon's updates of a sharded step (n_muon floats), allocated by the first */
} optimizer;

/* Allocate zeroed state for layout l (hp is checked and copied). */
int optimizer_init(optimizer *o, const gpt_layout *l, const optim_hparams *hp, pg_error *err);
void optimizer_free(optimizer *o);

/* The state arrays, in the order listed above; returns OPTIMIZER_N_STATE. */
int optimizer_state(optimizer *o, optimizer_state_array out[OPTIMIZER_N_STATE]);

/* Add every state array to c / restore every one from c (exact count and
 * type required; file names c in errors). */
int optimizer_save(optimizer *o, checkpoint *c, pg_error *err);
int optimizer_load(optimizer *o, const checkpoint *c, const char *file, pg_error *err);

/* One optimizer step on params with grads (same layout; o must have been
 * made for l). step is the 0-based training step (momentum warm-up).
 * grads is modified: clipped if clipping is on, and in GPT_MIXED the token
 * embedding's gradient rounded to bf16. Returns the total gradient norm
 * before clipping when clipping is on, else 0. */
float optimizer_step(optimizer *o, const gpt_layout *l, float *params, float *grads, int64_t step,
                     double lr_mult, gpt_precision prec);

/* The official distributed Muon: Muon matrix j (0-based among the Muon
 * matrices, in layout order) belongs to rank j % world; the official rank
 * computes its matrices' updates, then an all-reduce sum of otherwise-zero
 * buffers, which is a gather, hands every rank every update. Here this
 * process computes the updates of the matrices of ranks first_rank ..
 * first_rank + n_local - 1 (and every momentum buffer, so any process's
 * checkpoint has them all), then gather(ctx, updates) must fill in the
 * others' (updates: n_muon floats, each matrix at its Muon state offset),
 * then every update is applied. The bits are optimizer_step's. */
typedef struct optimizer_shard {
  int world, first_rank, n_local;
  int (*gather)(void *ctx, float *updates, pg_error *err);
  void *ctx;
} optimizer_shard;

int optimizer_step_sharded(optimizer *o, const gpt_layout *l, float *params, float *grads, int64_t step,
                           double lr_mult, gpt_precision prec, const optimizer_shard *sh, float *norm,
                           pg_error *err);

#endif
