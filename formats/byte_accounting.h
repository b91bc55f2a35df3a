/* The challenge's byte accounting, in one place.
 *
 * The evaluation scores target tokens: in a stream t[0..n), token t[i]
 * (i >= 1) is predicted from its prefix, so the targets are t[1..n).
 * A target counts
 *     base_bytes[t[i]] + (has_leading_space[t[i]] && !is_boundary[t[i-1]])
 * bytes: the space that SentencePiece folds into a piece as U+2581 is a
 * real byte of the text unless the previous token is a boundary (BOS at a
 * document start), where it is the dummy prefix SentencePiece added.
 *   val_bpb = (sum of nats / ln 2) / (sum of bytes). */
#ifndef PGOLF_BYTE_ACCOUNTING_H
#define PGOLF_BYTE_ACCOUNTING_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "formats/tokenizer.h"

/* Bytes of one target given the token before it. Ids must be < vocab. */
uint32_t target_bytes(const byte_luts *l, uint16_t prev, uint16_t target);

/* out[i-1] = bytes of target t[i] for i in [1, n). Returns -1 (with err,
 * naming `name` and the token index) if an id is out of the tables. */
int stream_target_bytes(const byte_luts *l, const uint16_t *t, size_t n, uint32_t *out,
                        const char *name, pg_error *err);

/* Sum of target bytes over t[1..n). Same errors. */
int stream_total_bytes(const byte_luts *l, const uint16_t *t, size_t n, uint64_t *total,
                       const char *name, pg_error *err);

/* A split stored in several shards is one stream: the first token of a
 * shard is a target whose previous token is the last of the shard before.
 * byte_counter carries that token across calls. target_limit caps the
 * targets counted (the official evaluation scores only whole sequences:
 * ((n-1)/seq_len)*seq_len targets); UINT64_MAX counts all. */
typedef struct byte_counter {
  uint64_t tokens;       /* tokens seen */
  uint64_t targets;      /* targets counted (<= target_limit) */
  uint64_t bytes;        /* their bytes */
  uint64_t target_limit;
  int have_prev;
  uint16_t prev;
} byte_counter;

void byte_counter_init(byte_counter *c, uint64_t target_limit);
int byte_counter_add(byte_counter *c, const byte_luts *l, const uint16_t *t, size_t n,
                     const char *name, pg_error *err);
/* Targets scored by the official evaluation for a stream of n tokens and
 * sequences of seq_len (0: every target). */
uint64_t scored_targets(uint64_t n_tokens, uint32_t seq_len);

/* val_bpb from a sum of nats and a byte count. */
double bpb_from_nats(double nats, uint64_t bytes);
/* Tokens per byte from a mean loss in nats and its bpb (the per-set
 * conversion factor used between nats and bpb). */
double tokens_per_byte_from_loss(double val_loss_nats, double val_bpb);

#endif
