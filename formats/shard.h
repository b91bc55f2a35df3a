/* Token shards in the challenge's published format:
 *   header: 256 little-endian int32 — [0] magic 20240520, [1] version 1,
 *           [2] token count; the rest are reserved;
 *   body:   count little-endian uint16 tokens.
 * The file size must be exactly 1024 + 2*count. Shards are memory-mapped
 * and fully validated before any token is read. */
#ifndef PGOLF_SHARD_H
#define PGOLF_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/fileio.h"

#define SHARD_MAGIC 20240520
#define SHARD_VERSION 1
#define SHARD_HEADER_INTS 256
#define SHARD_HEADER_BYTES (SHARD_HEADER_INTS * 4)

typedef struct shard {
  mapped_file map;
  uint32_t magic, version;
  uint64_t n_tokens;
  const uint16_t *tokens; /* n_tokens little-endian ids, inside map */
} shard;

/* Validate a shard held in memory (name is used in error messages).
 * vocab_size > 0 also checks that every token is < vocab_size and
 * reports the offset of the first one that is not. */
int shard_parse(const uint8_t *buf, size_t len, const char *name, uint32_t vocab_size, shard *s,
                pg_error *err);
/* mmap and validate a shard file. */
int shard_open(const char *path, uint32_t vocab_size, shard *s, pg_error *err);
void shard_close(shard *s);

/* Token i (< s->n_tokens), decoded as little-endian whatever the host's
 * byte order and whatever the alignment of the buffer shard_parse got. */
static inline uint16_t shard_token(const shard *s, uint64_t i) {
  const uint8_t *p = (const uint8_t *)(const void *)s->tokens + 2 * i;
  return (uint16_t)(p[0] | p[1] << 8);
}

/* The shards of a split, in sorted name order: every regular file named
 * PREFIX*.bin in dir, where prefix is "fineweb_train_" or "fineweb_val_".
 * *paths is a malloc'd array of malloc'd strings; free with shard_paths_free.
 * No match is an error naming dir and the pattern. */
int shard_glob(const char *dir, const char *prefix, char ***paths, size_t *n, pg_error *err);
void shard_paths_free(char **paths, size_t n);

#endif
