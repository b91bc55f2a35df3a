#include "kernels/bf16.h"

#include <string.h>

static uint32_t float_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static float bits_float(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

uint16_t bf16_from_float(float x) {
  uint32_t u = float_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
  /* Adding 0x7fff plus the lowest kept bit rounds half to even; a carry
   * into the exponent is the correct rounding up (possibly to infinity). */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

float bf16_to_float(uint16_t h) { return bits_float((uint32_t)h << 16); }

float bf16_round(float x) { return bf16_to_float(bf16_from_float(x)); }

void bf16_round_array(float *x, size_t n) {
  for (size_t i = 0; i < n; i++) x[i] = bf16_round(x[i]);
}

int bf16_is_exact(float x) {
  uint32_t u = float_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 1;
  return (u & 0xffffu) == 0;
}
