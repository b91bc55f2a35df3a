/* The block's input mix on the GPU (contract in residual_mix.h): out, dx
 * and dx0 elementwise by residual_mix.h's shared code, equal to the CPU
 * kernel bit for bit; dmix by col_dot's fixed tree, equal to the tree
 * ref. The backward is one pass: the kernel that sums both halves of
 * dmix's lanes (col_dot_lanes.h's layout, the halves side by side as 2 d
 * channels) writes dx and dx0 from the same reads, then
 * col_dot_combine_cuda finishes all 2 d sums at once. */
#include "kernels/col_dot.h"
#include "kernels/col_dot_lanes.h"
#include "kernels/cuda_common.h"
#include "kernels/index_walk.h"
#include "kernels/residual_mix.h"

/* ---- kernels ---- */

/* The channel is the walk's remainder (index_walk.h). */
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    residual_mix_forward_kernel(float *out, const float *x, const float *x0, const float *mix,
                                size_t n, int d, int flags) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (index_walk c = index_walk_start(i, stride, (size_t)d); i < n;
       i += stride, index_walk_next(&c, 0))
    out[i] = residual_mix_out(x[i], x0[i], mix[c.r], mix[d + c.r], flags);
}

/* Thread (c, k) of col_dot_lanes.h: lane k's partials of dmix[0][c]
 * (dout x) and dmix[1][c] (dout x0), at scratch[k * 2d + c] and
 * [k * 2d + d + c], and dx, dx0 from the same dout, for its rows. dx may
 * alias dout: each element is read and then written by one thread. */
__global__ void __launch_bounds__(COL_DOT_THREADS)
    residual_mix_backward_kernel(double *scratch, float *dx, float *dx0, const float *dout,
                                 const float *x, const float *x0, const float *mix, int rows, int d,
                                 int flags) {
  const int c = col_dot_channel(), k = col_dot_lane();
  if (c >= d) return;
  const float m0 = mix[c], m1 = mix[d + c];
  double a0 = 0.0, a1 = 0.0;
  for (int r0 = k; r0 < rows; r0 += COL_DOT_BATCH * TREE_LANES) {
    float g[COL_DOT_BATCH], xv[COL_DOT_BATCH], x0v[COL_DOT_BATCH], d0[COL_DOT_BATCH];
    #pragma unroll
    for (int b = 0; b < COL_DOT_BATCH; b++) {
      const int r = r0 + b * TREE_LANES;
      const size_t j = (size_t)r * d + c;
      g[b] = xv[b] = x0v[b] = d0[b] = 0.0f;
      if (r >= rows) continue;
      g[b] = dout[j], xv[b] = x[j], x0v[b] = x0[j], d0[b] = dx0[j];
    }
    #pragma unroll
    for (int b = 0; b < COL_DOT_BATCH; b++) {
      const int r = r0 + b * TREE_LANES;
      const size_t j = (size_t)r * d + c;
      if (r >= rows) break;
      a0 = a0 + (double)col_dot_term(g[b], xv[b], flags);
      a1 = a1 + (double)col_dot_term(g[b], x0v[b], flags);
      float gx;
      residual_mix_grads(&gx, &d0[b], g[b], m0, m1, flags);
      dx[j] = gx, dx0[j] = d0[b];
    }
  }
  scratch[(size_t)k * 2 * d + c] = a0;
  scratch[(size_t)k * 2 * d + d + c] = a1;
}

/* ---- launchers ---- */

static int check_shape(int rows, int d, pg_error *err) {
  if (rows < 0 || d < 1) return pg_fail(err, "", -1, "residual_mix: bad shape %d x %d", rows, d);
  return 0;
}

extern "C" int residual_mix_forward_cuda(float *out, const float *x, const float *x0,
                                         const float *mix, int rows, int d, int flags,
                                         cudaStream_t stream, pg_error *err) {
  if (check_shape(rows, d, err)) return -1;
  size_t n = (size_t)rows * d;
  if (n == 0) return 0;
  residual_mix_forward_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(out, x, x0, mix, n,
                                                                                 d, flags);
  return cuda_check_launch(err, "residual_mix_forward_kernel");
}

extern "C" int residual_mix_backward_cuda(float *dx, float *dx0, float *dmix, const float *dout,
                                          const float *x, const float *x0, const float *mix,
                                          int rows, int d, int flags, double *scratch,
                                          cudaStream_t stream, pg_error *err) {
  if (check_shape(rows, d, err)) return -1;
  residual_mix_backward_kernel<<<col_dot_grid(d), COL_DOT_THREADS, 0, stream>>>(
      scratch, dx, dx0, dout, x, x0, mix, rows, d, flags);
  if (cuda_check_launch(err, "residual_mix_backward_kernel")) return -1;
  return col_dot_combine_cuda(dmix, scratch, 2 * d, flags, stream, err);
}
