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
 * (attention_mma_supported): to compare the two on a GPU. */
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
  KERNEL_CUDA_CORES = 32
};

/* x rounded to bf16 when the flags ask for it. */
PGOLF_HD float kernel_round(float x, int flags) {
  return (flags & KERNEL_BF16) ? bf16_round(x) : x;
}

/* Store r into *out, honouring both flags. */
PGOLF_HD void kernel_store(float *out, float r, int flags) {
  r = kernel_round(r, flags);
  if (!(flags & KERNEL_ACCUMULATE))
    *out = r;
  else
    *out = (flags & KERNEL_OUT_FP32) ? *out + r : kernel_round(*out + r, flags);
}

#endif
