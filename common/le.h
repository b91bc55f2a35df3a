/* Little-endian fields of pgolf's binary formats (shards, artifacts,
 * checkpoints, score dumps), read and written byte by byte so the result
 * depends neither on the host's byte order nor on the pointer's alignment
 * (a fuzzer or a caller may hand us any pointer). Floats travel as their
 * IEEE-754 bit patterns. */
#ifndef PGOLF_LE_H
#define PGOLF_LE_H

#include <stdint.h>
#include <string.h>

/* The n-byte (1..8) unsigned value at p. */
static inline uint64_t le_get(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* Store the low n bytes (1..8) of v at p. */
static inline void le_put(uint8_t *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t le_u16(const uint8_t *p) { return (uint16_t)le_get(p, 2); }
static inline uint32_t le_u32(const uint8_t *p) { return (uint32_t)le_get(p, 4); }
static inline uint64_t le_u64(const uint8_t *p) { return le_get(p, 8); }

/* Two's complement reinterpretation through memcpy: no implementation-
 * defined conversion of an out-of-range unsigned value. */
static inline int32_t le_i32(const uint8_t *p) {
  uint32_t u = le_u32(p);
  int32_t v;
  memcpy(&v, &u, sizeof v);
  return v;
}

static inline float le_f32(const uint8_t *p) {
  uint32_t u = le_u32(p);
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

static inline double le_f64(const uint8_t *p) {
  uint64_t u = le_u64(p);
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

static inline void le_put_u16(uint8_t *p, uint16_t v) { le_put(p, v, 2); }
static inline void le_put_u32(uint8_t *p, uint32_t v) { le_put(p, v, 4); }
static inline void le_put_u64(uint8_t *p, uint64_t v) { le_put(p, v, 8); }

static inline void le_put_f32(uint8_t *p, float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  le_put_u32(p, u);
}

static inline void le_put_f64(uint8_t *p, double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  le_put_u64(p, u);
}

#endif
