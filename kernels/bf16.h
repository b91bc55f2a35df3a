/* bfloat16 rounding: the top 16 bits of an IEEE-754 float32, rounded to
 * nearest with ties to even, as PyTorch's float -> bfloat16 conversion does
 * (c10::BFloat16 round_to_nearest_even). NaN stays NaN (quiet); overflow
 * past the largest finite bf16 rounds to infinity as in PyTorch.
 *
 * pgolf keeps every tensor in float32 storage; a "bf16 tensor" is a float32
 * tensor whose values are all bf16-representable, produced by bf16_round.
 * Pure functions on values, shared by the CPU kernels and their CUDA twins
 * (kernels/hd.h); on the GPU bf16_from_float is the conversion
 * instruction's rounding (__float2bfloat16_rn's bits) but for NaN. */
#ifndef PGOLF_BF16_H
#define PGOLF_BF16_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/hd.h"

/* float32 -> bf16 bits, round to nearest even. */
PGOLF_HD uint16_t bf16_from_float(float x) {
  uint32_t u = hd_float_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
#if defined(__CUDA_ARCH__)
  /* The conversion instruction rounds to nearest even as the integer
   * sequence below does (subnormals kept, overflow to infinity), in one
   * instruction where that takes five or six; which NaN it makes is the
   * hardware's, hence the branch above. test_cuda_bf16 holds it to the
   * CPU's bits on every one of the 2^32 floats. */
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
  return h;
#else
  /* Adding 0x7fff plus the lowest kept bit rounds half to even; a carry
   * into the exponent is the correct rounding up (possibly to infinity). */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
#endif
}

/* bf16 bits -> float32 (exact). */
PGOLF_HD float bf16_to_float(uint16_t h) { return hd_bits_float((uint32_t)h << 16); }

/* float32 -> nearest bf16 value, returned as float32. */
PGOLF_HD float bf16_round(float x) { return bf16_to_float(bf16_from_float(x)); }

/* Two floats -> bf16 bits packed in a word, lo in the low half, each
 * rounded as bf16_from_float rounds it, for words that are only ever
 * tensor-core (mma) operands, whose product is NaN whatever NaN enters:
 * the probabilities and ds of kernels/attention_mma.cu. On the GPU the
 * pair is one conversion instruction (cvt.rn.bf16x2.f32, where
 * bf16_from_float's test for NaN costs about six instructions a value),
 * so a NaN input gives the hardware's NaN, not bf16_from_float's; every
 * other input gets its bits (test_cuda_bf16, on all 2^32 floats). On the
 * CPU and the stand-in, bf16_from_float's bits throughout. */
PGOLF_HD uint32_t bf16_pack2_mma(float lo, float hi) {
#if defined(__CUDA_ARCH__)
  uint32_t w;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo)); /* hi into the high half */
  return w;
#else
  return (uint32_t)bf16_from_float(lo) | (uint32_t)bf16_from_float(hi) << 16;
#endif
}

#ifdef __cplusplus
extern "C" {
#endif
/* Round n values in place. */
void bf16_round_array(float *x, size_t n);
/* 1 if x is exactly representable in bf16 (NaN counts as representable). */
int bf16_is_exact(float x);

/* Arrays of bf16 bits, the operands a bf16 GEMM reads (kernels/matmul.h's
 * CUDA twins take them so): dst[i] = bf16_from_float(src[i]). */
void bf16_pack(uint16_t *dst, const float *src, size_t n);
/* dst[i] = bf16_to_float(src[i]), or with KERNEL_ACCUMULATE dst[i] +=
 * it (one float32 addition: a bf16 product added to a float32 .grad). */
void bf16_unpack(float *dst, const uint16_t *src, size_t n, int flags);

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

/* The CUDA twins (kernels/bf16.cu): device arrays, elementwise, the same
 * bits; no allocation. */
int bf16_pack_cuda(uint16_t *dst, const float *src, size_t n, cudaStream_t stream, pg_error *err);
int bf16_unpack_cuda(float *dst, const uint16_t *src, size_t n, int flags, cudaStream_t stream,
                     pg_error *err);
int bf16_round_array_cuda(float *x, size_t n, cudaStream_t stream, pg_error *err);
/* dst[i] = bf16_pack2_mma(src[2 i], src[2 i + 1]) for i < pairs: the
 * device's pair conversion, for test_cuda_bf16's sweep. */
int bf16_pack2_mma_cuda(uint32_t *dst, const float *src, size_t pairs, cudaStream_t stream,
                        pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
