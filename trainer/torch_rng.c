/* MT19937 as PyTorch's at::mt19937 (ATen/core/MT19937RNGEngine.h): the
 * reference Mersenne Twister, with PyTorch's bookkeeping of when to twist
 * (left starts at 1, so the first draw twists the freshly seeded state). */
#include "trainer/torch_rng.h"

#define MT_M 397
#define MT_MATRIX_A 0x9908b0dfu
#define MT_UPPER 0x80000000u
#define MT_LOWER 0x7fffffffu

void torch_rng_seed(torch_rng *g, uint64_t seed) {
  g->seed = seed;
  g->state[0] = (uint32_t)(seed & 0xffffffffu);
  for (uint32_t j = 1; j < TORCH_MT_N; j++) {
    uint32_t prev = g->state[j - 1];
    g->state[j] = 1812433253u * (prev ^ (prev >> 30)) + j;
  }
  g->left = 1;
  g->next = 0;
  g->has_next_double_normal = 0;
  g->next_double_normal = 0.0;
}

static uint32_t twist(uint32_t u, uint32_t v) {
  uint32_t mixed = (u & MT_UPPER) | (v & MT_LOWER);
  return (mixed >> 1) ^ ((v & 1u) ? MT_MATRIX_A : 0u);
}

/* Regenerate all 624 words in place (the standard recurrence). */
static void next_state(torch_rng *g) {
  uint32_t *s = g->state;
  int k = 0;
  for (; k < TORCH_MT_N - MT_M; k++) s[k] = s[k + MT_M] ^ twist(s[k], s[k + 1]);
  for (; k < TORCH_MT_N - 1; k++) s[k] = s[k + MT_M - TORCH_MT_N] ^ twist(s[k], s[k + 1]);
  s[TORCH_MT_N - 1] = s[MT_M - 1] ^ twist(s[TORCH_MT_N - 1], s[0]);
  g->left = TORCH_MT_N;
  g->next = 0;
}

uint32_t torch_rng_u32(torch_rng *g) {
  if (--g->left == 0) next_state(g);
  uint32_t y = g->state[g->next++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

uint64_t torch_rng_u64(torch_rng *g) {
  uint64_t hi = torch_rng_u32(g);
  uint64_t lo = torch_rng_u32(g);
  return (hi << 32) | lo;
}
