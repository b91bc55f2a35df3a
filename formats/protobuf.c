#include "formats/protobuf.h"

#include <string.h>

static const char *wire_name(int wire) {
  switch (wire) {
  case PB_VARINT: return "varint";
  case PB_FIXED64: return "fixed64";
  case PB_LEN: return "length-delimited";
  case PB_SGROUP: return "start-group";
  case PB_EGROUP: return "end-group";
  case PB_FIXED32: return "fixed32";
  default: return "invalid";
  }
}

int pb_decode_varint(const uint8_t *buf, size_t end, size_t *pos, uint64_t *out) {
  uint64_t v = 0;
  size_t p = *pos;
  for (int i = 0; i < PB_MAX_VARINT_BYTES; i++) {
    if (p >= end) return -1;
    uint8_t b = buf[p++];
    /* The 10th byte holds only bit 63; anything more would be lost. */
    if (i == PB_MAX_VARINT_BYTES - 1 && (b & 0xfe)) return -2;
    v |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *pos = p;
      *out = v;
      return 0;
    }
  }
  return -2;
}

void pb_init(pb_reader *r, const uint8_t *buf, size_t len, const char *name, pg_error *err) {
  r->buf = buf;
  r->pos = 0;
  r->end = len;
  r->depth = 0;
  r->name = name;
  r->err = err;
}

static int varint_or_fail(pb_reader *r, const char *what, uint64_t *out) {
  size_t start = r->pos;
  int rc = pb_decode_varint(r->buf, r->end, &r->pos, out);
  if (rc == -1) return pg_fail(r->err, r->name, (long long)start, "truncated %s", what);
  if (rc == -2) return pg_fail(r->err, r->name, (long long)start, "%s varint overflows 64 bits", what);
  return 0;
}

static int fixed_or_fail(pb_reader *r, size_t nbytes, uint64_t *out) {
  if (r->end - r->pos < nbytes)
    return pg_fail(r->err, r->name, (long long)r->pos, "truncated fixed%zu value", nbytes * 8);
  uint64_t v = 0;
  for (size_t i = 0; i < nbytes; i++) v |= (uint64_t)r->buf[r->pos + i] << (8 * i);
  r->pos += nbytes;
  *out = v;
  return 0;
}

static int read_tag(pb_reader *r, pb_field *f) {
  uint64_t tag;
  f->tag_off = r->pos;
  if (varint_or_fail(r, "field tag", &tag)) return -1;
  uint64_t number = tag >> 3;
  f->wire = (int)(tag & 7);
  if (number == 0 || number > PB_MAX_FIELD)
    return pg_fail(r->err, r->name, (long long)f->tag_off, "invalid field number %llu",
                   (unsigned long long)number);
  f->number = (uint32_t)number;
  return 0;
}

static int read_len(pb_reader *r, pb_field *f) {
  uint64_t n;
  if (varint_or_fail(r, "field length", &n)) return -1;
  if (n > r->end - r->pos)
    return pg_fail(r->err, r->name, (long long)f->tag_off,
                   "field %u: length %llu runs past the end of its message (%zu bytes left)",
                   f->number, (unsigned long long)n, r->end - r->pos);
  f->off = r->pos;
  f->len = (size_t)n;
  r->pos += (size_t)n;
  return 0;
}

int pb_next(pb_reader *r, pb_field *f) {
  if (r->pos >= r->end) return 0;
  memset(f, 0, sizeof *f);
  if (read_tag(r, f)) return -1;
  switch (f->wire) {
  case PB_VARINT: return varint_or_fail(r, "varint value", &f->u) ? -1 : 1;
  case PB_FIXED64: return fixed_or_fail(r, 8, &f->u) ? -1 : 1;
  case PB_FIXED32: return fixed_or_fail(r, 4, &f->u) ? -1 : 1;
  case PB_LEN: return read_len(r, f) ? -1 : 1;
  case PB_SGROUP:
  case PB_EGROUP:
    return pg_fail(r->err, r->name, (long long)f->tag_off,
                   "field %u: deprecated group wire type %d is not supported", f->number, f->wire);
  default:
    return pg_fail(r->err, r->name, (long long)f->tag_off, "field %u: invalid wire type %d",
                   f->number, f->wire);
  }
}

int pb_expect(const pb_reader *r, const pb_field *f, int wire, const char *what) {
  if (f->wire == wire) return 0;
  return pg_fail(r->err, r->name, (long long)f->tag_off, "%s (field %u): wire type %s, expected %s",
                 what, f->number, wire_name(f->wire), wire_name(wire));
}

int pb_enter(const pb_reader *parent, const pb_field *f, pb_reader *child) {
  if (pb_expect(parent, f, PB_LEN, "submessage")) return -1;
  if (parent->depth + 1 > PB_MAX_DEPTH)
    return pg_fail(parent->err, parent->name, (long long)f->tag_off,
                   "field %u: submessages nested deeper than %d", f->number, PB_MAX_DEPTH);
  *child = *parent;
  child->pos = f->off;
  child->end = f->off + f->len;
  child->depth = parent->depth + 1;
  return 0;
}

int pb_get_int32(const pb_reader *r, const pb_field *f, const char *what, int32_t *out) {
  if (pb_expect(r, f, PB_VARINT, what)) return -1;
  /* int32 is sent sign-extended to 64 bits; anything else is not an int32. */
  int64_t v = (int64_t)f->u;
  if (v < INT32_MIN || v > INT32_MAX)
    return pg_fail(r->err, r->name, (long long)f->tag_off, "%s: value %lld is out of int32 range",
                   what, (long long)v);
  *out = (int32_t)v;
  return 0;
}

int pb_get_bool(const pb_reader *r, const pb_field *f, const char *what, int *out) {
  if (pb_expect(r, f, PB_VARINT, what)) return -1;
  *out = f->u != 0;
  return 0;
}

int pb_get_float(const pb_reader *r, const pb_field *f, const char *what, float *out) {
  if (pb_expect(r, f, PB_FIXED32, what)) return -1;
  uint32_t bits = (uint32_t)f->u;
  memcpy(out, &bits, sizeof bits);
  return 0;
}

int pb_get_bytes(const pb_reader *r, const pb_field *f, const char *what, const uint8_t **p,
                 size_t *n) {
  if (pb_expect(r, f, PB_LEN, what)) return -1;
  *p = r->buf + f->off;
  *n = f->len;
  return 0;
}
