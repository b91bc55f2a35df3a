/* The lane layout of col_dot's tree on the GPU, shared by every kernel
 * that takes per-channel sums of a [rows, d] array while it passes over
 * it: col_dot.cu's own lanes kernel, and scale_add's and residual_mix's
 * backwards, which write their input gradients from the same reads (one
 * pass over dout instead of two). A block is COL_DOT_CH channels (a warp
 * reads 128 contiguous bytes of a row) by COL_DOT_LANES lanes; the grid is
 * the channel tiles by COL_DOT_GROUPS lane groups, so thread (c, k) owns
 * the elements (r, c) with r = k, k + TREE_LANES, ... and no element is
 * another thread's: a kernel may read an element and then overwrite it in
 * place. Lane k's partial goes to scratch[k * stride + c]; col_dot.h's
 * col_dot_combine_cuda finishes them. Device code only: included by .cu
 * files after kernels/cuda_common.h. */
#ifndef PGOLF_COL_DOT_LANES_H
#define PGOLF_COL_DOT_LANES_H

#if !defined(__CUDACC__) && !defined(PGOLF_CUDA_EMU_H)
#error "kernels/col_dot_lanes.h is device code: include it from a kernels/*.cu file"
#endif

#include "kernels/reduce_tree.h"

enum {
  COL_DOT_CH = 32,   /* channels per block */
  COL_DOT_LANES = 8, /* lanes per block */
  COL_DOT_THREADS = COL_DOT_CH * COL_DOT_LANES,
  COL_DOT_GROUPS = TREE_LANES / COL_DOT_LANES, /* lane groups: the grid's y */
  /* Rows a lane of a fused backward loads before it stores any of them:
   * its stores may be its loads (in place) as far as the compiler knows,
   * so row by row each load waited for the stores before it, one memory
   * round trip a row. The lane's sum still takes its rows in order. */
  COL_DOT_BATCH = 4,
};

/* This thread's channel (may be >= d: the thread has nothing) and lane. */
__device__ static inline int col_dot_channel(void) {
  return blockIdx.x * COL_DOT_CH + threadIdx.x % COL_DOT_CH;
}
__device__ static inline int col_dot_lane(void) {
  return blockIdx.y * COL_DOT_LANES + threadIdx.x / COL_DOT_CH;
}

/* The grid for d channels. */
static inline dim3 col_dot_grid(int d) {
  return dim3((unsigned)((d + COL_DOT_CH - 1) / COL_DOT_CH), COL_DOT_GROUPS);
}

#endif
