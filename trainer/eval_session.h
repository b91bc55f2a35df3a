/* Score-first evaluation: the session the three evaluators share.
 *
 * POSITIONS. The validation stream t[0..n) is the one trainer/eval.h
 * opens (n truncated for the window length as the official evaluation
 * does). Position p in [1, n) is the target t[p], predicted from t[0..p).
 * Every evaluator scores each position exactly once, in increasing order,
 * and writes one score-dump record per position (manifests/score_dump.h).
 *
 * THE TWO PRIMITIVES. An evaluator is a sequence of these two calls:
 *   eval_score_range(s, c, a, b)  scores positions a..b (inclusive) with
 *     the current parameters and sliding windows: windows end at
 *     e = a-1+S, a-1+2S, ... and finally b (S the stride); the window that
 *     ends at e reads inputs t[e-L .. e) with L = min(T, e) and scores the
 *     positions after the previous window's end up to e. So a position
 *     sees at least min(T, p) - S + 1 tokens of context, never a token at
 *     or after itself, and never a token after b. Parameters are only
 *     read. Appends SCORE(c, a, b, bits of the float64 sum of the nll
 *     written for these positions, in order) to the event chain.
 *   eval_adapt_range(s, c, a, b, lr)  trains the parameters on positions
 *     a..b: the k = (b-a+1)/T whole sequences x = t[a-1+iT .. a-1+iT+T),
 *     y = the next tokens, E epochs in batches of ttt_batch_seqs: per
 *     batch, the mean cross-entropy's gradient (trainer/gpt.h), clipped
 *     to clip (torch clip_grad_norm_, trainer/clip.h) when clip > 0, then
 *     torch.optim.SGD with momentum mu (dampening 0, no Nesterov, no
 *     weight decay): buf = mu*buf + g (buf = g at the first step), w -= lr*buf,
 *     float32, over every parameter. Appends ADAPT(c, a, a-1+kT) (nothing
 *     when k = 0).
 * A legal evaluator only ever adapts on positions it has already scored
 * (trainer/eval_ttt.c); the test controls (tests/eval_controls.h) break
 * that on purpose to show the audit catches it.
 *
 * PROBES. At up to n_probes positions (spread evenly over [1, n), or the
 * positions given in probe_at) the scorer also computes the full
 * distribution softmax(cap * tanh(z / cap)) in float64 from the float32
 * logits, rounded as the forward rounds them (trainer/gpt.h precision).
 *
 * EMITTING. Each scored position goes through eval_emit (record, probe,
 * sums) unless the session has a hook: then the hook decides what to emit
 * (test controls only; pgolf eval never sets one).
 *
 * PRECISION. GPT_FP32 runs everything in float32. GPT_MIXED scores and
 * computes gradients with the official rounding points (trainer/gpt.h)
 * while the parameters and the momentum stay float32 masters (the forward
 * rounds its weight copies to bf16), as torch keeps fp32 parameters under
 * autocast.
 *
 * DEVICE. With device_cuda the forward passes and the adaptation run on
 * the GPU (trainer/eval_cuda.h: the same dump as the CPU's with the GPU's
 * reduction trees where the products agree); the rest stays here.
 *
 * Determinism: the nll of every position is bit-identical for any thread
 * count and batch size (each window is an independent row block); so is
 * the adaptation (every kernel reduces in a fixed order). */
#ifndef PGOLF_EVAL_SESSION_H
#define PGOLF_EVAL_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "trainer/eval.h"
#include "trainer/eval_cuda.h"
#include "trainer/eval_events.h"
#include "trainer/gpt.h"
#include "trainer/model.h"
#include "formats/tokenizer.h"
#include "manifests/score_dump.h"

typedef enum eval_mode { EVAL_MODE_PLAIN = 0, EVAL_MODE_SLIDING = 1, EVAL_MODE_TTT = 2 } eval_mode;

const char *eval_mode_name(eval_mode m);
/* "plain", "sliding", "ttt"; -1 on anything else. */
int eval_mode_parse(const char *s, eval_mode *m);

#define EVAL_MAX_PROBES 4096
/* Probes by default: enough for the audit's normalization check (C2) to
 * pass or fail on its own, at a cost of one V-entry softmax each (and
 * 16 + 8V dump bytes): nothing beside the evaluation's forward passes. */
#define EVAL_DEFAULT_PROBES 8

typedef struct eval_config {
  eval_mode mode;
  uint32_t seq_len;    /* T: window length, 1 .. the model's seq_len */
  uint32_t stride;     /* S: 1 .. T (plain uses T) */
  uint64_t chunk;      /* C: positions per TTT chunk, >= 1 */
  int epochs;          /* E: TTT epochs per chunk, >= 0 */
  double lr;           /* TTT base learning rate (cosine across chunks) */
  double momentum;     /* TTT SGD momentum, 0 .. < 1 */
  double clip;         /* TTT gradient clip norm; <= 0: none */
  int batch_seqs;      /* windows per forward pass when scoring */
  int ttt_batch_seqs;  /* sequences per TTT step */
  gpt_precision precision;
  uint32_t n_probes;            /* evenly spread probes (ignored with probe_at) */
  const uint64_t *probe_at;     /* explicit probe positions, increasing; or NULL */
  size_t n_probe_at;
  int device_cuda;              /* forwards and adaptation on the GPU (trainer/eval_cuda.h) */
  int gpu_trees;                /* on the CPU, sum by the GPU's trees (tests: PGOLF_TEST_GPU_TREES=1) */
} eval_config;

/* Defaults: the records' score-first TTT (stride 64, chunk 32768, 3 epochs,
 * lr 0.002, momentum 0.9, clip 1.0, 32 sequences per step), scoring batch
 * 32, fp32, EVAL_DEFAULT_PROBES probes spread over the split; T = seq_len,
 * S = min(64, T) (T for plain). */
void eval_config_default(eval_config *c, eval_mode mode, uint32_t seq_len);
/* Ranges and their combinations; err names the option. */
int eval_config_check(const eval_config *c, const gpt_layout *l, pg_error *err);

typedef struct eval_session eval_session;

/* A hook sees every scored position instead of eval_emit: dist is the
 * probe distribution (vocab_size doubles, writable) at probe positions,
 * NULL elsewhere. It may call eval_emit any number of times. */
typedef int (*eval_emit_hook)(eval_session *s, void *ctx, uint64_t position, uint32_t target,
                              double nll, double *dist, pg_error *err);

struct eval_session {
  eval_config cfg;
  const val_data *v;
  const byte_luts *luts;
  const gpt_layout *l;
  eval_gpu *gpu;        /* cfg.device_cuda: the model on the GPU; else NULL */
  float *zrow;          /* on the GPU: a probe's row of logits, brought back */
  float *flat;          /* parameters (owned copy: TTT changes them) */
  gpt_params p;
  float *grads, *mom;   /* TTT only */
  gpt_params g;
  gpt_acts *acts;       /* the CPU's (NULL on the GPU) */
  int acts_B;
  uint16_t *win, *x, *y;
  float *nll;
  double *dist;
  uint64_t *probes;     /* probe positions, increasing */
  size_t n_probes;
  score_dump_writer *dump;
  eval_events events;   /* verifier/audit.h's shape */
  size_t events_cap;
  /* sums over everything emitted, in emission order */
  double nats;
  uint64_t tokens;
  double range_nats;    /* the current score range's, for its SCORE event */
  uint64_t adapt_steps;
  eval_emit_hook hook;
  void *hook_ctx;
};

/* Open a session: copies the parameters (flat, l->n_params floats), opens
 * the dump at dump_path (NULL: no dump), allocates what the mode needs. */
int eval_session_open(eval_session *s, const eval_config *c, const val_data *v,
                      const byte_luts *luts, const gpt_layout *l, const float *flat,
                      const char *dump_path, pg_error *err);
/* Finish the dump (atomic rename), recording the event chain's head. On
 * error the dump is abandoned. */
int eval_session_finish(eval_session *s, pg_error *err);
/* Free everything (abandons an unfinished dump). */
void eval_session_close(eval_session *s);

int eval_score_range(eval_session *s, uint64_t chunk, uint64_t first, uint64_t last,
                     pg_error *err);
int eval_adapt_range(eval_session *s, uint64_t chunk, uint64_t first, uint64_t last, double lr,
                     pg_error *err);

/* Write one record (and a probe when dist is given: the scorer passes it
 * at probe positions only), add nll to the sums. */
int eval_emit(eval_session *s, uint64_t position, uint32_t target, double nll, const double *dist,
              pg_error *err);

/* 1 if position is one of the session's probe positions. */
int eval_is_probe(const eval_session *s, uint64_t position);

/* An artifact's model configuration (its header) / its layout and
 * dequantized parameters (malloc'd; free, and gpt_layout_free). */
int eval_model_config(const char *path, gpt_config *cfg, pg_error *err);
int eval_model_load(const char *path, gpt_layout *l, float **flat, pg_error *err);

/* The evaluators (one file each). */
int eval_plain(eval_session *s, pg_error *err);   /* trainer/eval_plain.c */
int eval_sliding(eval_session *s, pg_error *err); /* trainer/eval_sliding.c */
int eval_ttt(eval_session *s, pg_error *err);     /* trainer/eval_ttt.c */
/* The mode's evaluator. */
int eval_run_mode(eval_session *s, pg_error *err);

/* TTT: chunks of C positions over [1, n): chunk c is
 * [1 + cC, min((c+1)C, n-1)]; the learning rate for chunk c of K is
 * lr * (1 + cos(pi * c / max(K-1, 1))) / 2. */
uint64_t eval_ttt_chunks(uint64_t n_tokens, uint64_t chunk);
double eval_ttt_lr(double lr, uint64_t c, uint64_t n_chunks);

#endif
