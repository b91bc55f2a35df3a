/* The official training loader: one global token stream over the sorted
 * train shards, read in order and wrapping around to the first shard
 * forever (no sampling, no shuffling).
 *
 * A batch for gradient-accumulation micro-step takes world*(local+1)
 * consecutive tokens from the stream, where
 *     local = global_tokens / (world * grad_accum)      (integer division)
 * and rank r keeps span r, tokens [r*(local+1), (r+1)*(local+1)) of that
 * chunk: inputs x = span[:-1] and targets y = span[1:], as local/seq_len
 * rows of seq_len. Every rank consumes the whole chunk, so all ranks' streams
 * stay in step.
 *
 * The stream's state is (file index, position in that file): the official
 * stream moves to the next file lazily, only when it needs a token and the
 * current file is exhausted, so "end of file f" and "start of file f+1" are
 * different states, and both are reproduced exactly. Shards stay mmapped;
 * tokens are checked against the vocabulary as they are copied out, so
 * opening a large split does not read all of it. */
#ifndef PGOLF_LOADER_H
#define PGOLF_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "formats/shard.h"

/* Everything needed to resume the stream exactly (saved in checkpoints). */
typedef struct loader_state {
  uint64_t file_idx; /* index into the sorted shard list */
  uint64_t pos;      /* tokens of that file already taken, <= its length */
  uint64_t consumed; /* tokens taken from the stream since the start */
} loader_state;

typedef struct token_loader {
  char **paths;     /* sorted shard paths */
  shard *shards;    /* mmapped, headers validated */
  size_t n_shards;
  uint64_t total_tokens; /* over all shards, > 0 */
  uint32_t vocab_size;   /* 0: ids are not checked */
  loader_state st;
} token_loader;

/* Open every PREFIX*.bin in dir (prefix "fineweb_train_" for training) in
 * sorted order. Fails if there are none or all are empty. */
int loader_open(token_loader *L, const char *dir, const char *prefix, uint32_t vocab_size,
                pg_error *err);
/* Same over an explicit, already ordered list of paths (copied). */
int loader_open_paths(token_loader *L, char *const *paths, size_t n, uint32_t vocab_size,
                      pg_error *err);
void loader_close(token_loader *L);

/* Shape of one micro-step's batch; validates the arguments. */
typedef struct loader_batch_shape {
  uint64_t local_tokens; /* tokens per rank = rows * seq_len */
  uint64_t rows;         /* B */
  uint64_t chunk_tokens; /* world * (local + 1): taken from the stream */
} loader_batch_shape;

int loader_batch_shape_for(uint64_t global_tokens, int seq_len, int grad_accum, int rank, int world,
                           loader_batch_shape *shape, pg_error *err);

/* The next micro-step batch for `rank`: x and y each receive rows*seq_len
 * ids (row-major). On error the stream is left where it was. */
int loader_next_batch(token_loader *L, uint64_t global_tokens, int seq_len, int grad_accum,
                      int rank, int world, uint16_t *x, uint16_t *y, pg_error *err);

/* Copy the next n tokens of the stream into out (out may be NULL: skip). */
int loader_take(token_loader *L, uint64_t n, uint16_t *out, pg_error *err);

void loader_get_state(const token_loader *L, loader_state *s);
/* Restore a saved state; rejects an index or position outside the shards
 * this loader has open. */
int loader_set_state(token_loader *L, const loader_state *s, pg_error *err);

#endif
