/* Evaluation over the whole validation split, as the official eval_val.
 *
 * The tokens of every fineweb_val_* shard, in sorted name order, form one
 * stream t[0..N). The official evaluation keeps its first
 *     n = ((N - 1) / T) * T + 1        tokens (T = sequence length)
 * and scores the n - 1 targets t[1..n) in windows of T: sequence s has
 * inputs t[sT .. sT+T) and targets t[sT+1 .. sT+T+1), each window scored
 * independently (no context carried between windows), up to B sequences
 * per forward pass. Every target's negative log-likelihood (nats) is summed
 * in float64 in token order; bytes follow trainer/byte_accounting.h (the
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
#include "trainer/shard.h"
#include "trainer/tokenizer.h"

/* The validation stream, mmapped, truncated for a sequence length. */
typedef struct val_data {
  char **paths;
  shard *shards;
  size_t n_shards;
  uint64_t *starts;     /* stream index of each shard's first token */
  uint64_t n_all;       /* N: tokens in all shards */
  uint64_t n_tokens;    /* n: tokens kept, ((N-1)/T)*T + 1 */
  uint32_t seq_len;     /* T */
  uint32_t vocab_size;  /* ids are checked against it as they are read */
} val_data;

/* Every fineweb_val_*.bin in dir (prefix "fineweb_val_"), sorted. Fails if
 * the split holds fewer than T + 1 tokens. */
int val_data_open(val_data *v, const char *dir, const char *prefix, uint32_t seq_len,
                  uint32_t vocab_size, pg_error *err);
int val_data_open_paths(val_data *v, char *const *paths, size_t n, uint32_t seq_len,
                        uint32_t vocab_size, pg_error *err);
void val_data_close(val_data *v);

/* Tokens [start, start + n) of the stream (crossing shards as needed);
 * an id >= vocab_size is an error naming its shard and byte offset. */
int val_data_copy(const val_data *v, uint64_t start, uint64_t n, uint16_t *out, pg_error *err);

/* The bytes of every scored target, without running a model. */
int val_data_bytes(const val_data *v, const byte_luts *luts, uint64_t *bytes, pg_error *err);

typedef struct eval_opts {
  int batch_seqs;          /* B: sequences per forward pass, >= 1 */
  gpt_precision precision;
  float *nll_out;          /* optional: n - 1 floats, each target's nll in order */
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

#endif
