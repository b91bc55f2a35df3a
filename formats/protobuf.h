/* A small, bounded reader for the protobuf wire format.
 *
 * pgolf reads SentencePiece .model files (and nothing else protobuf) from
 * untrusted submissions, so this reader never trusts a length: every
 * varint is limited to 10 bytes and 64 bits, every length-delimited field
 * is checked against the end of the message that contains it, and
 * submessages may nest only PB_MAX_DEPTH deep. Offsets in errors are
 * absolute (from the start of the whole buffer), because a reader for a
 * submessage shares its parent's buffer.
 *
 * Groups (wire types 3 and 4, deprecated since proto2) are rejected:
 * no message pgolf reads uses them, and skipping them would need a
 * second, unbounded nesting mechanism. */
#ifndef PGOLF_PROTOBUF_H
#define PGOLF_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

enum {
  PB_VARINT = 0,
  PB_FIXED64 = 1,
  PB_LEN = 2,
  PB_SGROUP = 3, /* rejected */
  PB_EGROUP = 4, /* rejected */
  PB_FIXED32 = 5,
};

#define PB_MAX_VARINT_BYTES 10
#define PB_MAX_DEPTH 16
#define PB_MAX_FIELD ((1u << 29) - 1)

typedef struct pb_reader {
  const uint8_t *buf; /* the whole input */
  size_t pos;         /* next byte to read, absolute */
  size_t end;         /* one past this message's last byte, absolute */
  int depth;          /* 0 for the top-level message */
  const char *name;   /* input name for errors */
  pg_error *err;
} pb_reader;

/* One field, fully consumed by pb_next. */
typedef struct pb_field {
  uint32_t number;
  int wire;
  size_t tag_off; /* absolute offset of the field's tag */
  uint64_t u;     /* value of a varint, fixed32 or fixed64 field */
  size_t off;     /* PB_LEN: absolute offset of the payload */
  size_t len;     /* PB_LEN: payload length */
} pb_field;

/* Decode a varint from buf[*pos..end). Returns 0 and advances *pos, or
 * -1 if it runs past end, -2 if it is longer than 10 bytes or has bits
 * beyond 64. */
int pb_decode_varint(const uint8_t *buf, size_t end, size_t *pos, uint64_t *out);

void pb_init(pb_reader *r, const uint8_t *buf, size_t len, const char *name, pg_error *err);

/* Read the next field, whatever its number, and move past its value, so
 * unknown fields are skipped by simply ignoring them. Returns 1 with *f
 * filled, 0 at the end of the message, -1 on malformed input (err set). */
int pb_next(pb_reader *r, pb_field *f);

/* A reader for the submessage held by a PB_LEN field. Fails if the field
 * is not length-delimited or the nesting would exceed PB_MAX_DEPTH. */
int pb_enter(const pb_reader *parent, const pb_field *f, pb_reader *child);

/* Fail unless f has wire type `wire`; the message names the field. */
int pb_expect(const pb_reader *r, const pb_field *f, int wire, const char *what);

/* Typed views of a field's value; each checks the wire type first. */
int pb_get_int32(const pb_reader *r, const pb_field *f, const char *what, int32_t *out);
int pb_get_bool(const pb_reader *r, const pb_field *f, const char *what, int *out);
int pb_get_float(const pb_reader *r, const pb_field *f, const char *what, float *out);
/* A PB_LEN field's bytes: a pointer into the buffer, not a copy. */
int pb_get_bytes(const pb_reader *r, const pb_field *f, const char *what, const uint8_t **p,
                 size_t *n);

#endif
