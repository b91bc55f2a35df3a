/* Evaluation over the whole validation split, as the official eval_val.
 *
 * The tokens of every fineweb_val_* shard, in sorted name order, form one
 * stream t[0..N). The official evaluation keeps its first
 *     n = ((N - 1) / T) * T + 1        tokens (T = sequence length)
 * and scores the n - 1 targets t[1..n) in windows of T: sequence s has
 * inputs t[sT .. sT+T) and targets t[sT+1 .. sT+T+1), each window scored
 * independently (no context carried between windows), up to B sequences
 * per forward pass. Every target's negative log-likelihood (nats) is summed
 * in float64 in token order; bytes follow formats/byte_accounting.h (the
 * previous token of the first target is t[0]); then
 *     val_loss = nats / targets,   val_bpb = nats / ln 2 / bytes.
 * The official code sums per-batch means times counts instead; the result
 * agrees to float64 rounding, and per-token sums do not depend on B. */
#ifndef PGOLF_EVAL_H
#define PGOLF_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "trainer/gpt.h"
#include "trainer/model.h"
#include "formats/tokenizer.h"
#include "formats/val_data.h"

typedef struct eval_opts {
  int batch_seqs;          /* B: sequences per forward pass, >= 1 */
  gpt_precision precision;
  float *nll_out;          /* optional: n - 1 floats, each target's nll in order */
  int tree_refs;           /* the forward sums by the GPU's trees (gpt_acts_use_tree_refs) */
} eval_opts;

typedef struct eval_result {
  uint64_t tokens;        /* targets scored, n - 1 */
  uint64_t sequences;     /* (n - 1) / T */
  uint64_t bytes;         /* their bytes */
  double loss_sum;        /* nats, float64, summed in token order */
  uint64_t loss_sum_bits; /* IEEE-754 bits of loss_sum */
  double val_loss;        /* loss_sum / tokens */
  double val_bpb;         /* loss_sum / ln 2 / bytes */
  double seconds;         /* wall time of the evaluation */
  double tokens_per_second;
} eval_result;

/* Score the whole stream with the model (forward only). */
int eval_val(const val_data *v, const byte_luts *luts, const gpt_layout *l, const gpt_params *p,
             const eval_opts *o, eval_result *r, pg_error *err);

/* The pieces eval_val is made of, for an evaluation whose forward runs
 * elsewhere (trainer/train_cuda.c, on the GPU) with the same result: */

/* Sequences [s0, s0 + b) of the stream: their inputs into x and targets
 * into y (b * T ids each, sequence after sequence), their bytes added to
 * *bytes; win is scratch of b * T + 1 ids. */
int eval_batch_ids(const val_data *v, const byte_luts *luts, uint64_t s0, int b, uint16_t *win,
                   uint16_t *x, uint16_t *y, uint64_t *bytes, pg_error *err);

/* r's counts and metrics once r->loss_sum (the targets' nll summed in
 * token order, float64) and r->bytes hold the whole stream's. */
void eval_result_finish(eval_result *r, uint64_t n_seq, uint64_t T, double seconds);

#endif
