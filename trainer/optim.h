/* Optimizer hyperparameters: the official train_gpt.py defaults.
 *
 * Every value is a double because the official script holds them as Python
 * floats and hands them to the optimizers as such: a learning rate is
 * base_lr * lr_mul computed in double, and only the optimizer kernels
 * narrow it to float32 (see trainer/adam.h, trainer/muon.h). Keeping the
 * doubles here keeps those roundings where PyTorch has them.
 *
 * Official defaults (Hyperparameters in train_gpt.py, checked against it):
 *   embed_lr 0.6, head_lr 0.008   (untied embedding / lm_head: unused by
 *                                  the tied baseline, kept for the record)
 *   tied_embed_lr 0.05            Adam on tok_emb.weight (GPT_GROUP_EMBED)
 *   matrix_lr 0.04                Muon on the 2-D block matrices
 *   scalar_lr 0.04                Adam on vectors, control tensors, skips
 *   beta1 0.9, beta2 0.95, adam_eps 1e-8
 *   muon_momentum 0.95, muon_backend_steps 5
 *   muon_momentum_warmup_start 0.85, muon_momentum_warmup_steps 500
 *   grad_clip_norm 0 (no clipping)
 *   iterations 20000, warmdown_iters 1200 */
#ifndef PGOLF_OPTIM_H
#define PGOLF_OPTIM_H

#include <stdint.h>

#include "common/error.h"

typedef struct optim_hparams {
  double embed_lr, head_lr; /* untied only; the baseline ties, so unused */
  double tied_embed_lr;
  double matrix_lr;
  double scalar_lr;
  double beta1, beta2, adam_eps;
  double muon_momentum;
  int muon_backend_steps;
  double muon_momentum_warmup_start;
  int muon_momentum_warmup_steps;
  double grad_clip_norm; /* <= 0: no clipping, as the official `if > 0` */
  int64_t iterations;
  int64_t warmdown_iters;
} optim_hparams;

/* Fill *h with the official defaults listed above. */
void optim_hparams_default(optim_hparams *h);

/* Reject values the optimizers cannot run with (non-finite or negative
 * rates, betas outside [0, 1), eps <= 0, steps < 1, ...). Errors name the
 * field; file is "config". */
int optim_hparams_check(const optim_hparams *h, pg_error *err);

#endif
