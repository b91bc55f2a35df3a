/* PyTorch's CPU random generator (at::CPUGeneratorImpl), bit for bit.
 *
 * torch.manual_seed(seed) resets the default CPU generator to a fresh
 * 32-bit Mersenne Twister (MT19937) seeded with the low 32 bits of seed by
 * the standard Knuth multiplier recurrence, and forgets any cached normal
 * sample. Every CPU distribution then draws from it: 32-bit draws for
 * float32 uniforms, 64-bit draws (two 32-bit draws, the first one the high
 * half) for float64 uniforms. The small-tensor normal_ path caches the
 * second Box-Muller sample (a double) in the generator, so the cache is
 * part of the state here too.
 *
 * Checked against torch 2.15.0 by golden/init.json (tests/test_torch_init.c). */
#ifndef PGOLF_TORCH_RNG_H
#define PGOLF_TORCH_RNG_H

#include <stdint.h>

#define TORCH_MT_N 624

typedef struct torch_rng {
  uint32_t state[TORCH_MT_N];
  int left;                   /* draws until the next twist, +1 (PyTorch's left_) */
  int next;                   /* index of the next state word */
  uint64_t seed;              /* as given to torch_rng_seed (torch keeps all 64 bits) */
  int has_next_double_normal; /* the cached second Box-Muller sample */
  double next_double_normal;
} torch_rng;

/* torch.manual_seed(seed) on the CPU default generator. */
void torch_rng_seed(torch_rng *g, uint64_t seed);
/* generator->random(): one tempered MT19937 output. */
uint32_t torch_rng_u32(torch_rng *g);
/* generator->random64(): (first draw << 32) | second draw. */
uint64_t torch_rng_u64(torch_rng *g);

#endif
