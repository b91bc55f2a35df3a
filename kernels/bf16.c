#include "kernels/bf16.h"

#include "kernels/flags.h"

#include <string.h>

static uint32_t float_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

void bf16_round_array(float *x, size_t n) {
  for (size_t i = 0; i < n; i++) x[i] = bf16_round(x[i]);
}

int bf16_is_exact(float x) {
  uint32_t u = float_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 1;
  return (u & 0xffffu) == 0;
}

void bf16_pack(uint16_t *dst, const float *src, size_t n) {
  for (size_t i = 0; i < n; i++) dst[i] = bf16_from_float(src[i]);
}

void bf16_unpack(float *dst, const uint16_t *src, size_t n, int flags) {
  if (flags & KERNEL_ACCUMULATE)
    for (size_t i = 0; i < n; i++) dst[i] = dst[i] + bf16_to_float(src[i]);
  else
    for (size_t i = 0; i < n; i++) dst[i] = bf16_to_float(src[i]);
}
