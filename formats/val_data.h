/* The validation split as the official evaluation reads it: the tokens of
 * every fineweb_val_* shard, in sorted name order, as one stream t[0..N),
 * kept to its first n = ((N - 1) / T) * T + 1 tokens for sequence length T
 * (trainer/eval.h scores it; the audit reads it without a model). */
#ifndef PGOLF_VAL_DATA_H
#define PGOLF_VAL_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "formats/byte_accounting.h"
#include "formats/shard.h"

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

/* Add to *bytes the bytes of the targets w[1 .. count] of window w (each
 * target's previous token is w[i]); an id outside the tables is an error. */
int val_window_bytes(const byte_luts *luts, const uint16_t *w, uint64_t count, uint64_t *bytes,
                     pg_error *err);

#endif
