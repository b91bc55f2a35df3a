/* The scaled residual add on the GPU (contract in scale_add.h): out and dy
 * elementwise by scale_add.h's shared code, equal to the CPU kernel bit for
 * bit; ds by col_dot's fixed tree, equal to the tree ref. The backward is
 * one pass over dout: the kernel that sums ds's lanes (col_dot_lanes.h's
 * layout) writes dy from the same reads, then col_dot_combine_cuda
 * finishes ds. */
#include "kernels/col_dot.h"
#include "kernels/col_dot_lanes.h"
#include "kernels/cuda_common.h"
#include "kernels/index_walk.h"
#include "kernels/scale_add.h"

/* ---- kernels ---- */

/* out may alias x: each element is read and then written by one thread.
 * The channel is the walk's remainder (index_walk.h). */
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    scale_add_forward_kernel(float *out, const float *x, const float *s, const float *y,
                             const uint16_t *y16, size_t n, int d, int flags) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (index_walk c = index_walk_start(i, stride, (size_t)d); i < n;
       i += stride, index_walk_next(&c, 0))
    out[i] = scale_add_out(x[i], s[c.r], kernel_load(y, y16, i), flags);
}

/* Thread (c, k) of col_dot_lanes.h: lane k's partial of ds[c] from
 * dout[r, c] y[r, c], and dy[r, c] from the same dout, for its rows r. dy
 * may be NULL (packed copy alone) and may alias dout. */
__global__ void __launch_bounds__(COL_DOT_THREADS)
    scale_add_backward_kernel(double *scratch, float *dy, uint16_t *dy16, const float *dout,
                              const float *s, const float *y, const uint16_t *y16, int rows, int d,
                              int flags) {
  const int c = col_dot_channel(), k = col_dot_lane();
  if (c >= d) return;
  const float sc = s[c];
  const int old_dy = dy && (flags & KERNEL_ACCUMULATE);
  double acc = 0.0;
  for (int r0 = k; r0 < rows; r0 += COL_DOT_BATCH * TREE_LANES) {
    float g[COL_DOT_BATCH], yv[COL_DOT_BATCH], old[COL_DOT_BATCH];
    #pragma unroll
    for (int b = 0; b < COL_DOT_BATCH; b++) {
      const int r = r0 + b * TREE_LANES;
      const size_t j = (size_t)r * d + c;
      g[b] = yv[b] = old[b] = 0.0f;
      if (r >= rows) continue;
      g[b] = dout[j];
      yv[b] = kernel_load(y, y16, j);
      if (old_dy) old[b] = dy[j];
    }
    #pragma unroll
    for (int b = 0; b < COL_DOT_BATCH; b++) {
      const int r = r0 + b * TREE_LANES;
      const size_t j = (size_t)r * d + c;
      if (r >= rows) break;
      acc = acc + (double)col_dot_term(g[b], yv[b], flags);
      const float v = scale_add_dy(g[b], sc, flags);
      const float st = dy ? kernel_stored(old[b], v, flags) : kernel_round_out(v, flags);
      if (dy) dy[j] = st;
      if (dy16) dy16[j] = bf16_from_float(st);
    }
  }
  scratch[(size_t)k * d + c] = acc;
}

/* ---- launchers ---- */

static int check_shape(int rows, int d, pg_error *err) {
  if (rows < 0 || d < 1) return pg_fail(err, "", -1, "scale_add: bad shape %d x %d", rows, d);
  return 0;
}

extern "C" int scale_add_forward_cuda(float *out, const float *x, const float *s, const float *y,
                                      const uint16_t *y16, int rows, int d, int flags,
                                      cudaStream_t stream, pg_error *err) {
  if (check_shape(rows, d, err) || cuda_input_check(err, "scale_add", "y", y, y16)) return -1;
  size_t n = (size_t)rows * d;
  if (n == 0) return 0;
  scale_add_forward_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(out, x, s, y, y16, n,
                                                                              d, flags);
  return cuda_check_launch(err, "scale_add_forward_kernel");
}

extern "C" int scale_add_backward_cuda(float *dy, uint16_t *dy16, float *ds, const float *dout,
                                       const float *s, const float *y, const uint16_t *y16,
                                       int rows, int d, int flags, double *scratch,
                                       cudaStream_t stream, pg_error *err) {
  if (check_shape(rows, d, err) || cuda_packed_check(err, "scale_add", dy16, flags) ||
      cuda_output_check(err, "scale_add", dy, dy16) ||
      cuda_input_check(err, "scale_add", "y", y, y16))
    return -1;
  if (!dy && (flags & KERNEL_ACCUMULATE))
    return pg_fail(err, "", -1, "scale_add: an accumulated dy needs its floats");
  scale_add_backward_kernel<<<col_dot_grid(d), COL_DOT_THREADS, 0, stream>>>(
      scratch, dy, dy16, dout, s, y, y16, rows, d, flags);
  if (cuda_check_launch(err, "scale_add_backward_kernel")) return -1;
  return col_dot_combine_cuda(ds, scratch, d, flags, stream, err);
}
