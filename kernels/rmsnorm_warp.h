/* RMSNorm's row tree for one warp, shared by the kernels that normalise
 * rows on the GPU (rmsnorm.cu; qk_norm.cu, which fuses the q and k norms
 * with RoPE): the TREE_LANES tree of kernels/reduce_tree.h over a row,
 * lanes strided over the row index, then pairwise halving, so a row's
 * sum equals rmsnorm_*_tree_ref's bit for bit whichever kernel takes it.
 * Thread t of the warp holds lanes t + 32 i (i < 8) in registers, takes
 * the halvings at 128, 64 and 32 there (lane k and lane k + off are
 * registers of one thread), and the ones at 16 to 1 by shuffles down
 * (lane t adds lane t + off's partial; the lanes from off on compute
 * what nothing reads), then lane 0's total to every lane: five
 * shuffle-and-add steps where shared memory took a store, a warp barrier
 * and a load each. Every lane, term and addition of the tree happens,
 * the zeros of lanes past the row included. Device code only: included by .cu
 * files after kernels/cuda_common.h. */
#ifndef PGOLF_RMSNORM_WARP_H
#define PGOLF_RMSNORM_WARP_H

#if !defined(__CUDACC__) && !defined(PGOLF_CUDA_EMU_H)
#error "kernels/rmsnorm_warp.h is device code: include it from a kernels/*.cu file"
#endif

#include "kernels/flags.h"
#include "kernels/reduce_tree.h"

enum {
  RN_ROWS = 8,                 /* rows (warps) per block */
  RN_THREADS = 32 * RN_ROWS,
  RN_PER = TREE_LANES / 32,    /* tree lanes per thread */
};
static_assert(RN_PER == 8, "the register halvings below are written for 256 lanes");

/* Steps 1-3 of the tree for sum_j a[j] * b[j] over one row, by one warp;
 * every thread of the warp gets the result. Each operand is floats or
 * packed (a16, b16: kernel_load), a also the sum of a_parts packed arrays
 * a_stride apart (kernel_load_sum). The whole warp calls it. */
__device__ static float warp_tree_dot_sum(const float *a, const uint16_t *a16, int a_parts,
                                          size_t a_stride, const float *b, const uint16_t *b16,
                                          int d) {
  const int t = threadIdx.x % 32;
  float p[RN_PER];
  #pragma unroll
  for (int i = 0; i < RN_PER; i++) p[i] = 0.0f;
  /* Lane t + 32 i adds its terms j = t + 32 i + 256 k in increasing k;
   * k outside, i inside (unrolled), so a pass's 8 lanes' loads go out
   * together, where lane by lane each load waited for the one before
   * (the order of each lane's sum is the same). */
  for (int base = 0; base < d; base += TREE_LANES) {
    #pragma unroll
    for (int i = 0; i < RN_PER; i++) {
      const int j = base + t + 32 * i;
      if (j < d)
        p[i] = p[i] + kernel_load_sum(a, a16, a_parts, a_stride, j) * kernel_load(b, b16, j);
    }
  }
  #pragma unroll
  for (int i = 0; i < 4; i++) p[i] = p[i] + p[i + 4]; /* off 128 */
  p[0] = p[0] + p[2];                                  /* off 64 */
  p[1] = p[1] + p[3];
  p[0] = p[0] + p[1]; /* off 32 */
  float v = p[0];
  #pragma unroll
  for (int off = 16; off > 0; off >>= 1) v = v + __shfl_down_sync(0xffffffffu, v, off);
  return __shfl_sync(0xffffffffu, v, 0);
}

/* The same with a as floats or one packed array. */
__device__ static float warp_tree_dot(const float *a, const uint16_t *a16, const float *b,
                                      const uint16_t *b16, int d) {
  return warp_tree_dot_sum(a, a16, 1, 0, b, b16, d);
}

#endif
