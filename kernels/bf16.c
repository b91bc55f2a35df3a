#include "kernels/bf16.h"

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
