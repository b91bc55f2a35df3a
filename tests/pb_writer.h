/* A protobuf wire-format writer for tests: builds the hand-made buffers
 * (good and hostile) that the reader is tested on. Growable; free b.d. */
#ifndef PGOLF_TEST_PB_WRITER_H
#define PGOLF_TEST_PB_WRITER_H

#include "tests/test_util.h"
#include "formats/protobuf.h"

typedef struct wbuf {
  uint8_t *d;
  size_t n, cap;
} wbuf;

static inline void put_byte(wbuf *b, uint8_t v) {
  if (b->n == b->cap) {
    b->cap = b->cap ? 2 * b->cap : 256;
    b->d = realloc(b->d, b->cap);
    assert_non_null(b->d);
  }
  b->d[b->n++] = v;
}

static inline void put_raw(wbuf *b, const void *p, size_t n) {
  for (size_t i = 0; i < n; i++) put_byte(b, ((const uint8_t *)p)[i]);
}

static inline void put_varint(wbuf *b, uint64_t v) {
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    put_byte(b, byte | (v ? 0x80 : 0));
  } while (v);
}

static inline void put_tag(wbuf *b, uint32_t field, int wire) { put_varint(b, ((uint64_t)field << 3) | (unsigned)wire); }

static inline void put_len(wbuf *b, uint32_t field, const void *p, size_t n) {
  put_tag(b, field, PB_LEN);
  put_varint(b, n);
  put_raw(b, p, n);
}

#endif
