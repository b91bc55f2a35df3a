/* Flags shared by the kernels' forward and backward entry points.
 *
 * KERNEL_BF16: the official mixed-precision rounding. Inputs are taken to be
 * bf16 values already; each result that PyTorch would store as a bf16 tensor
 * is rounded (round to nearest even) where PyTorch rounds it. Internal sums
 * stay in float32 (or float64 where the kernel says so).
 * KERNEL_ACCUMULATE: add the result into the output (out = out + result,
 * the result rounded first under KERNEL_BF16) instead of overwriting, as
 * PyTorch accumulates .grad and sums a tensor's gradient contributions.
 * KERNEL_OUT_FP32: the destination is a float32 tensor (a float32
 * parameter's .grad): under KERNEL_BF16 the result is still rounded (it is
 * the bf16 gradient of the parameter's bf16 copy) but the accumulated sum
 * is not.
 * KERNEL_PARTIAL (matmul only): the product is a partial sum of a bigger
 * one (kernels/matmul_split.h): its result is float32 and unrounded
 * whatever the operands (bf16 under KERNEL_BF16), rounded only where the
 * partials' sum is stored.
 * KERNEL_CUDA_CORES (GPU attention only): run the CUDA-core kernels, the
 * CPU's bitwise twins, even where the tensor-core ones apply
 * (attention_mma_supported): to compare the two on a GPU.
 * KERNEL_ROUND_OUT (where a kernel's header says it honours it): the
 * arithmetic is float32 (or as KERNEL_BF16 says), and the result is
 * rounded to bf16 once, as it is stored: a float32 op whose output is
 * then cast to bf16 (F4's q and k at the attention's cast, B3's gradient
 * of a bf16 projection output), one pass instead of two.
 *
 * Packed copies: a CUDA launcher that takes an output pointer y16 (may be
 * NULL) stores there the bf16 bits of every value it stores in y, for
 * the bf16 GEMMs that read y (kernels/matmul.h), so no separate
 * bf16_pack_cuda pass reads y again. The copy is exact only for bf16
 * values, so such a launcher refuses y16 unless its flags round what it
 * stores (kernel_packed_ok).
 *
 * Packed inputs: a CUDA launcher that takes an input as x or x16 (exactly
 * one: kernels/cuda_common.h's cuda_input_check) reads a bf16 GEMM's
 * result where the GEMM left it (kernel_load, kernel_load_sum); a bf16's
 * float is exact, so the arithmetic is the same as on the unpacked
 * floats. */
#ifndef PGOLF_KERNEL_FLAGS_H
#define PGOLF_KERNEL_FLAGS_H

#include "kernels/bf16.h"

/* KERNEL_TREE: a CPU kernel that reduces (a norm) sums by its CUDA twin's
 * fixed tree (the *_tree_ref order), so the CPU computes the GPU's bits. */
enum {
  KERNEL_ACCUMULATE = 1,
  KERNEL_BF16 = 2,
  KERNEL_OUT_FP32 = 4,
  KERNEL_TREE = 8,
  KERNEL_PARTIAL = 16,
  KERNEL_CUDA_CORES = 32,
  KERNEL_ROUND_OUT = 64
};

/* x rounded to bf16 when the flags ask for it. */
PGOLF_HD float kernel_round(float x, int flags) {
  return (flags & KERNEL_BF16) ? bf16_round(x) : x;
}

/* x rounded to bf16 when the flags round a stored result (KERNEL_BF16 or
 * KERNEL_ROUND_OUT). */
PGOLF_HD float kernel_round_out(float x, int flags) {
  return (flags & (KERNEL_BF16 | KERNEL_ROUND_OUT)) ? bf16_round(x) : x;
}

/* What kernel_store stores over an output that held old (read only
 * under KERNEL_ACCUMULATE): for a kernel that loads a batch of elements
 * before it stores any. */
PGOLF_HD float kernel_stored(float old, float r, int flags) {
  r = kernel_round_out(r, flags);
  if (flags & KERNEL_ACCUMULATE)
    r = (flags & KERNEL_OUT_FP32) ? old + r : kernel_round(old + r, flags);
  return r;
}

/* Store r into *out, honouring the flags (KERNEL_ROUND_OUT rounds r as
 * KERNEL_BF16 does); returns the value stored, for a packed copy. */
PGOLF_HD float kernel_store(float *out, float r, int flags) {
  r = kernel_stored((flags & KERNEL_ACCUMULATE) ? *out : 0.0f, r, flags);
  *out = r;
  return r;
}

/* Element i of an input given as floats or packed (x16 not NULL: a bf16
 * GEMM's result read where it lies, kernels/cuda_common.h's
 * cuda_input_check): a packed value's float is exact, so the arithmetic
 * that reads it sees what it would read from the unpacked array. */
PGOLF_HD float kernel_load(const float *x, const uint16_t *x16, size_t i) {
  return x16 ? bf16_to_float(x16[i]) : x[i];
}

/* Element i of an input given as floats, or as `parts` packed arrays
 * `stride` elements apart whose float32 sum, taken in order, is the input:
 * B2's gradient of n1, the sum of three bf16 products, read where the
 * GEMMs left them. The sum is the one an unpack and then parts - 1
 * accumulating unpacks (bf16_unpack) would store. */
PGOLF_HD float kernel_load_sum(const float *x, const uint16_t *x16, int parts, size_t stride,
                               size_t i) {
  if (!x16) return x[i];
  float s = bf16_to_float(x16[i]);
  for (int p = 1; p < parts; p++) s = s + bf16_to_float(x16[(size_t)p * stride + i]);
  return s;
}

/* 1 if every value kernel_store stores under these flags is bf16, so a
 * packed copy of it is exact: a sum is rounded only under KERNEL_BF16
 * without KERNEL_OUT_FP32. */
PGOLF_HD int kernel_packed_ok(int flags) {
  if (flags & KERNEL_ACCUMULATE) return (flags & KERNEL_BF16) && !(flags & KERNEL_OUT_FP32);
  return (flags & (KERNEL_BF16 | KERNEL_ROUND_OUT)) != 0;
}

#endif
