/* The per-step loss file: the trainer's (or a user's) record of what each
 * training step produced, the input to `pgolf manifest create --losses`.
 *
 * Text, one step per line:   STEP LOSS [LR_MULT [WALL_MS]]
 * separated by spaces or tabs. STEP is a non-negative decimal integer and
 * steps strictly increase. LOSS and LR_MULT are float32 values, written
 * either as "0x" and exactly 8 hex digits (the IEEE-754 bits, taken as-is,
 * so NaN and infinity are representable) or as a plain decimal number
 * ([-+]digits[.digits][e[-+]digits]) rounded to float32 by strtof. WALL_MS
 * is a non-negative decimal (a timing, never compared). '#' starts a
 * comment; blank lines are skipped; a trailing CR is ignored. */
#ifndef PGOLF_LOSS_FILE_H
#define PGOLF_LOSS_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define LOSS_FILE_MAX_BYTES ((size_t)512 << 20)
#define LOSS_FILE_MAX_STEPS ((size_t)1000000)
#define LOSS_FILE_MAX_LINE 4096

typedef struct loss_record {
  uint64_t step;
  uint32_t loss_bits;
  uint32_t lr_mult_bits; /* valid when has_lr_mult */
  double wall_ms;        /* valid when has_wall_ms */
  uint8_t has_lr_mult, has_wall_ms;
} loss_record;

typedef struct loss_list {
  loss_record *recs;
  size_t n;
} loss_list;

/* Parse buf[0..len) (name is used in errors, which carry the line). */
int loss_file_parse(const char *buf, size_t len, const char *name, loss_list *out, pg_error *err);
int loss_file_load(const char *path, loss_list *out, pg_error *err);
void loss_list_free(loss_list *l);

/* One float32 token as described above. Returns 0, or -1 with a reason
 * (a static string) in *why. */
int loss_parse_f32(const char *tok, uint32_t *bits, const char **why);

#endif
