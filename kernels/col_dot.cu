/* Per-channel parameter gradients on the GPU (contract in col_dot.h): the
 * fixed tree of reduce_tree.h over the row index, in float64, written to
 * equal col_dot_tree_ref bit for bit. No atomics.
 *
 * A block owns COL_DOT_TILE consecutive channels, so that its threads read
 * whole 32-byte sectors of each row. Its 256 threads hold the 256 lanes of
 * each of those channels: thread t serves channel t % COL_DOT_TILE and the
 * lanes k = t / COL_DOT_TILE + i * (TREE_LANES / COL_DOT_TILE) for
 * i < COL_DOT_TILE, each lane in its own register summing its rows in
 * increasing r, as the tree prescribes; which thread computes a lane
 * changes no bits. The lane partials then combine pairwise, halving, in
 * shared memory, per channel. */
#include "kernels/col_dot.h"
#include "kernels/cuda_common.h"
#include "kernels/reduce_tree.h"

#define COL_DOT_TILE 8                           /* channels per block: 32 bytes of a row */
#define COL_DOT_STEP (TREE_LANES / COL_DOT_TILE) /* lane stride within a thread */

/* ---- kernels ---- */

__global__ void __launch_bounds__(TREE_LANES)
    col_dot_kernel(float *out, const float *a, const float *b, int rows, int d, int flags) {
  __shared__ double part[TREE_LANES * COL_DOT_TILE]; /* part[k * TILE + cc]: lane k, channel cc */
  const int t = threadIdx.x, cc = t % COL_DOT_TILE, k0 = t / COL_DOT_TILE;
  const int c = blockIdx.x * COL_DOT_TILE + cc;
  double acc[COL_DOT_TILE];
#pragma unroll
  for (int i = 0; i < COL_DOT_TILE; i++) acc[i] = 0.0;
  if (c < d)
    for (int r0 = 0; r0 < rows; r0 += TREE_LANES) {
#pragma unroll
      for (int i = 0; i < COL_DOT_TILE; i++) {
        int r = r0 + k0 + i * COL_DOT_STEP; /* lane k0 + i * STEP's next row */
        if (r < rows) {
          size_t j = (size_t)r * d + c;
          acc[i] = acc[i] + (double)col_dot_term(a[j], b[j], flags);
        }
      }
    }
#pragma unroll
  for (int i = 0; i < COL_DOT_TILE; i++) part[(k0 + i * COL_DOT_STEP) * COL_DOT_TILE + cc] = acc[i];
  __syncthreads();
  for (int off = TREE_LANES / 2; off > 0; off >>= 1) {
    for (int j = t; j < off * COL_DOT_TILE; j += TREE_LANES)
      part[j] = part[j] + part[j + off * COL_DOT_TILE];
    __syncthreads();
  }
  if (t < COL_DOT_TILE && c < d) col_dot_finish(&out[c], part[t], flags);
}

/* ---- launchers ---- */

extern "C" int col_dot_cuda(float *out, const float *a, const float *b, int rows, int d, int flags,
                            cudaStream_t stream, pg_error *err) {
  if (rows < 0 || d < 0) return pg_fail(err, "", -1, "col_dot: bad shape %d x %d", rows, d);
  if (d == 0) return 0;
  int blocks = (d + COL_DOT_TILE - 1) / COL_DOT_TILE;
  col_dot_kernel<<<blocks, TREE_LANES, 0, stream>>>(out, a, b, rows, d, flags);
  return cuda_check_launch(err, "col_dot_kernel");
}
