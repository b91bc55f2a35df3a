/* Checkpoints: a set of named, typed arrays in one file, written
 * atomically and validated in full before anything is used.
 *
 * The container knows nothing about training; the trainer (train.c) puts
 * in it whatever makes a resumed run continue bit for bit: parameters,
 * optimizer state arrays, loader state, step, loss records so far, chain
 * head, the configuration text and the log text.
 *
 * File format (all integers little-endian):
 *   "PGOLFCKP"                   8 bytes magic
 *   u32 version (1), u32 entry count (at most CKPT_MAX_ENTRIES)
 *   each entry:
 *     u16 name length (1..63), name ([A-Za-z0-9_.-], unique in the file)
 *     u8 type (ckpt_type), u8 0, u64 element count
 *     count * element size bytes of data
 *   SHA-256 of every byte before it (32 bytes)
 * The file must end exactly after the digest. */
#ifndef PGOLF_CHECKPOINT_H
#define PGOLF_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define CKPT_MAGIC "PGOLFCKP"
#define CKPT_VERSION 1
#define CKPT_MAX_ENTRIES 4096
#define CKPT_MAX_NAME 63
#define CKPT_MAX_BYTES ((size_t)16 << 30)

typedef enum ckpt_type { CKPT_BYTES = 0, CKPT_F32 = 1, CKPT_U32 = 2, CKPT_U64 = 3, CKPT_F64 = 4 } ckpt_type;

typedef struct ckpt_entry {
  char name[CKPT_MAX_NAME + 1];
  ckpt_type type;
  uint64_t count;
  void *data; /* owned; count elements in host order */
} ckpt_entry;

typedef struct checkpoint {
  ckpt_entry *entries;
  size_t n, cap;
} checkpoint;

size_t ckpt_type_size(ckpt_type t);

/* Add a copy of data (count elements of type t). Names must be valid and
 * new. */
int ckpt_add(checkpoint *c, const char *name, ckpt_type t, const void *data, uint64_t count,
             pg_error *err);
const ckpt_entry *ckpt_find(const checkpoint *c, const char *name);
/* Copy entry `name` into out, which holds exactly `count` elements of
 * type t; a missing entry or another type or count is an error naming it.
 * file is used in errors. */
int ckpt_get(const checkpoint *c, const char *file, const char *name, ckpt_type t, uint64_t count,
             void *out, pg_error *err);

int ckpt_serialize(const checkpoint *c, uint8_t **out, size_t *len, pg_error *err);
int ckpt_parse(const uint8_t *buf, size_t len, const char *name, checkpoint *c, pg_error *err);
/* Atomic: a killed writer leaves the previous checkpoint or the new one. */
int ckpt_write(const checkpoint *c, const char *path, pg_error *err);
int ckpt_read(const char *path, checkpoint *c, pg_error *err);
void ckpt_free(checkpoint *c);

#endif
