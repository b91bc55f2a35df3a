/* RMSNorm on the GPU (contract in rmsnorm.h): one warp per row, eight
 * rows a block; each row's sum goes through the fixed tree of
 * reduce_tree.h (lanes strided over the row, then pairwise halving:
 * rmsnorm_warp.h), so the result equals rmsnorm_*_tree_ref bit for
 * bit. No atomics; every element's arithmetic is rmsnorm.h's shared code.
 *
 * Why a warp, not a block of 256 threads: rows of head_dim (64) elements
 * were normalised here, N x heads of them (524,288 a baseline
 * micro-step), and a block per row spent 256 threads, 9 block barriers
 * and a block launch on 64 numbers. */
#include "kernels/cuda_common.h"
#include "kernels/rmsnorm.h"
#include "kernels/rmsnorm_warp.h"

/* ---- kernels ---- */

__global__ void __launch_bounds__(RN_THREADS)
    rmsnorm_forward_kernel(float *y, uint16_t *y16, float *rstd, const float *x,
                           const uint16_t *x16, int rows, int d, int flags) {
  const int w = threadIdx.x / 32, t = threadIdx.x % 32;
  const size_t r = (size_t)blockIdx.x * RN_ROWS + w;
  if (r >= (size_t)rows) return; /* the whole warp */
  const float *xr = x ? x + r * (size_t)d : NULL;
  const uint16_t *xh = x16 ? x16 + r * (size_t)d : NULL;
  float s = rmsnorm_rstd(warp_tree_dot(xr, xh, xr, xh, d), d);
  if (t == 0) rstd[r] = s;
  float *yr = y ? y + r * (size_t)d : NULL;
  uint16_t *hr = y16 ? y16 + r * (size_t)d : NULL;
  /* 256 elements a pass, all their loads before any of their stores: y
   * may be x (as far as the compiler knows), so element by element each
   * load waited for the store before it, one memory round trip an
   * element. Elementwise, so the bits are the same. */
  for (int base = 0; base < d; base += TREE_LANES) {
    float xv[RN_PER];
    #pragma unroll
    for (int i = 0; i < RN_PER; i++) {
      const int j = base + t + 32 * i;
      xv[i] = j < d ? kernel_load(xr, xh, j) : 0.0f;
    }
    #pragma unroll
    for (int i = 0; i < RN_PER; i++) {
      const int j = base + t + 32 * i;
      if (j >= d) break;
      float v = kernel_round_out(xv[i] * s, flags);
      if (y) yr[j] = v;
      if (hr) hr[j] = bf16_from_float(v);
    }
  }
}

__global__ void __launch_bounds__(RN_THREADS)
    rmsnorm_backward_kernel(float *dx, uint16_t *dx16, const float *dy, const uint16_t *dy16,
                            int dy_parts, const float *x, const uint16_t *x16, const float *rstd,
                            int rows, int d, int flags) {
  const int w = threadIdx.x / 32, t = threadIdx.x % 32;
  const size_t r = (size_t)blockIdx.x * RN_ROWS + w;
  if (r >= (size_t)rows) return;
  const float *xr = x ? x + r * (size_t)d : NULL, *gr = dy ? dy + r * (size_t)d : NULL;
  const uint16_t *xh = x16 ? x16 + r * (size_t)d : NULL, *gh = dy16 ? dy16 + r * (size_t)d : NULL;
  const size_t stride = (size_t)rows * d; /* between dy's packed parts */
  float s = rstd[r];
  float c = rmsnorm_grad_coef(s, warp_tree_dot_sum(gr, gh, dy_parts, stride, xr, xh, d), d);
  float *dr = dx + r * (size_t)d;
  uint16_t *hr = dx16 ? dx16 + r * (size_t)d : NULL;
  /* Loads before stores, 256 elements a pass, as in the forward (to the
   * compiler dx may be dy or x). */
  const int acc = (flags & KERNEL_ACCUMULATE) != 0;
  for (int base = 0; base < d; base += TREE_LANES) {
    float g[RN_PER], xv[RN_PER], old[RN_PER];
    #pragma unroll
    for (int i = 0; i < RN_PER; i++) {
      const int j = base + t + 32 * i;
      g[i] = xv[i] = old[i] = 0.0f;
      if (j >= d) continue;
      g[i] = kernel_load_sum(gr, gh, dy_parts, stride, j);
      xv[i] = kernel_load(xr, xh, j);
      if (acc) old[i] = dr[j];
    }
    #pragma unroll
    for (int i = 0; i < RN_PER; i++) {
      const int j = base + t + 32 * i;
      if (j >= d) break;
      const float v = kernel_stored(old[i], rmsnorm_dx(s, g[i], xv[i], c), flags);
      dr[j] = v;
      if (hr) hr[j] = bf16_from_float(v);
    }
  }
}

/* ---- launchers ---- */

static int check_shape(int rows, int d, pg_error *err) {
  if (rows < 0 || d < 1) return pg_fail(err, "", -1, "rmsnorm: bad shape %d x %d", rows, d);
  return 0;
}

extern "C" int rmsnorm_forward_cuda(float *y, uint16_t *y16, float *rstd, const float *x,
                                    const uint16_t *x16, int rows, int d, int flags,
                                    cudaStream_t stream, pg_error *err) {
  if (check_shape(rows, d, err) || cuda_packed_check(err, "rmsnorm", y16, flags) ||
      cuda_output_check(err, "rmsnorm", y, y16) || cuda_input_check(err, "rmsnorm", "x", x, x16))
    return -1;
  if (rows == 0) return 0;
  rmsnorm_forward_kernel<<<(unsigned)((rows + RN_ROWS - 1) / RN_ROWS), RN_THREADS, 0, stream>>>(
      y, y16, rstd, x, x16, rows, d, flags);
  return cuda_check_launch(err, "rmsnorm_forward_kernel");
}

extern "C" int rmsnorm_backward_cuda(float *dx, uint16_t *dx16, const float *dy,
                                     const uint16_t *dy16, int dy_parts, const float *x,
                                     const uint16_t *x16, const float *rstd, int rows, int d,
                                     int flags, cudaStream_t stream, pg_error *err) {
  if (check_shape(rows, d, err) || cuda_packed_check(err, "rmsnorm", dx16, flags) ||
      cuda_input_check(err, "rmsnorm", "x", x, x16) ||
      cuda_input_check(err, "rmsnorm", "dy", dy, dy16))
    return -1;
  if (dy16 && (dy_parts < 1 || dy_parts > 3))
    return pg_fail(err, "", -1, "rmsnorm: dy in %d packed parts (1 to 3)", dy_parts);
  if (rows == 0) return 0;
  rmsnorm_backward_kernel<<<(unsigned)((rows + RN_ROWS - 1) / RN_ROWS), RN_THREADS, 0, stream>>>(
      dx, dx16, dy, dy16, dy16 ? dy_parts : 1, x, x16, rstd, rows, d, flags);
  return cuda_check_launch(err, "rmsnorm_backward_kernel");
}
