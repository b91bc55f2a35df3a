/* bfloat16 rounding: the top 16 bits of an IEEE-754 float32, rounded to
 * nearest with ties to even, as PyTorch's float -> bfloat16 conversion does
 * (c10::BFloat16 round_to_nearest_even). NaN stays NaN (quiet); overflow
 * past the largest finite bf16 rounds to infinity as in PyTorch.
 *
 * pgolf keeps every tensor in float32 storage; a "bf16 tensor" is a float32
 * tensor whose values are all bf16-representable, produced by bf16_round.
 * Pure functions on values: the CUDA twin is __float2bfloat16_rn. */
#ifndef PGOLF_BF16_H
#define PGOLF_BF16_H

#include <stddef.h>
#include <stdint.h>

/* float32 -> bf16 bits, round to nearest even. */
uint16_t bf16_from_float(float x);
/* bf16 bits -> float32 (exact). */
float bf16_to_float(uint16_t h);
/* float32 -> nearest bf16 value, returned as float32. */
float bf16_round(float x);
/* Round n values in place. */
void bf16_round_array(float *x, size_t n);
/* 1 if x is exactly representable in bf16 (NaN counts as representable). */
int bf16_is_exact(float x);

#endif
