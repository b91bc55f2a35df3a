/* Per-channel parameter gradients on the GPU (contract in col_dot.h): the
 * fixed tree of reduce_tree.h over the row index, in float64, written to
 * equal col_dot_tree_ref bit for bit. No atomics.
 *
 * Two kernels, because a tree's lanes are independent sums until they
 * combine:
 *   1. col_dot_lanes_kernel: thread (channel c, lane k) sums rows k,
 *      k + 256, ... of channel c in increasing r, and writes the partial
 *      to scratch[k * d + c] (the layout of kernels/col_dot_lanes.h, which
 *      the backwards that fuse their own sums share). The grid covers
 *      every channel tile and lane group, 512 blocks at d = 512. (One
 *      block per 8 channels holding all 256 lanes, as before, made 64
 *      blocks at d = 512 on an H100's 132 SMs, each reading 32-byte pieces
 *      of rows: 2.9% of a baseline step's GPU time in the last profile,
 *      about 340 ms a step.)
 *   2. col_dot_combine_kernel: per channel (16 a block), the 256 partials
 *      combine pairwise, halving, in shared memory, and the float64 sum is
 *      finished into out.
 * Which thread or block computes a lane changes no bits; the order within
 * a lane and the combining tree are the tree's. */
#include "kernels/col_dot.h"
#include "kernels/col_dot_lanes.h"
#include "kernels/cuda_common.h"
#include "kernels/reduce_tree.h"

enum {
  COL_DOT_CCH = 16, /* channels per block of the combine kernel: 32 KB of partials */
};

/* ---- kernels ---- */

__global__ void __launch_bounds__(COL_DOT_THREADS)
    col_dot_lanes_kernel(double *scratch, const float *a, const float *b, const uint16_t *b16,
                         int rows, int d, int flags) {
  const int c = col_dot_channel(), k = col_dot_lane();
  if (c >= d) return;
  double acc = 0.0;
  for (int r = k; r < rows; r += TREE_LANES) {
    const size_t j = (size_t)r * d + c;
    acc = acc + (double)col_dot_term(a[j], kernel_load(b, b16, j), flags);
  }
  scratch[(size_t)k * d + c] = acc;
}

__global__ void __launch_bounds__(TREE_LANES)
    col_dot_combine_kernel(float *out, const double *scratch, int d, int flags) {
  __shared__ double part[TREE_LANES * COL_DOT_CCH]; /* part[k * CCH + cc]: lane k, channel cc */
  const int c0 = blockIdx.x * COL_DOT_CCH;
  for (int i = threadIdx.x; i < TREE_LANES * COL_DOT_CCH; i += TREE_LANES) {
    const int k = i / COL_DOT_CCH, cc = i % COL_DOT_CCH;
    part[i] = c0 + cc < d ? scratch[(size_t)k * d + c0 + cc] : 0.0;
  }
  __syncthreads();
  for (int off = TREE_LANES / 2; off > 0; off >>= 1) {
    for (int j = threadIdx.x; j < off * COL_DOT_CCH; j += TREE_LANES)
      part[j] = part[j] + part[j + off * COL_DOT_CCH];
    __syncthreads();
  }
  if (threadIdx.x < COL_DOT_CCH && c0 + (int)threadIdx.x < d)
    col_dot_finish(&out[c0 + threadIdx.x], part[threadIdx.x], flags);
}

/* ---- launchers ---- */

extern "C" int col_dot_combine_cuda(float *out, const double *scratch, int d, int flags,
                                    cudaStream_t stream, pg_error *err) {
  if (d < 0) return pg_fail(err, "", -1, "col_dot: bad width %d", d);
  if (d == 0) return 0;
  const unsigned blocks = (unsigned)((d + COL_DOT_CCH - 1) / COL_DOT_CCH);
  col_dot_combine_kernel<<<blocks, TREE_LANES, 0, stream>>>(out, scratch, d, flags);
  return cuda_check_launch(err, "col_dot_combine_kernel");
}

extern "C" int col_dot_cuda(float *out, const float *a, const float *b, const uint16_t *b16,
                            int rows, int d, int flags, double *scratch, cudaStream_t stream,
                            pg_error *err) {
  if (rows < 0 || d < 0) return pg_fail(err, "", -1, "col_dot: bad shape %d x %d", rows, d);
  if (cuda_input_check(err, "col_dot", "b", b, b16)) return -1;
  if (d == 0) return 0;
  col_dot_lanes_kernel<<<col_dot_grid(d), COL_DOT_THREADS, 0, stream>>>(scratch, a, b, b16, rows, d,
                                                                        flags);
  if (cuda_check_launch(err, "col_dot_lanes_kernel")) return -1;
  return col_dot_combine_cuda(out, scratch, d, flags, stream, err);
}
