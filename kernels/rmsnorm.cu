/* RMSNorm on the GPU (contract in rmsnorm.h): one warp per row, eight
 * rows a block; each row's sum goes through the fixed tree of
 * reduce_tree.h (lanes strided over the row, then pairwise halving), so
 * the result equals rmsnorm_*_tree_ref bit for bit. No atomics; every
 * element's arithmetic is rmsnorm.h's shared code.
 *
 * Why a warp, not a block of 256 threads: the q and k norms are rows of
 * head_dim (64) elements, N x heads of them (524,288 a baseline
 * micro-step), and a block per row spent 256 threads, 9 block barriers
 * and a block launch on 64 numbers. The tree is the same: thread t of
 * the warp holds lanes t + 32 i (i < 8) in registers, takes the halvings
 * at 128, 64 and 32 there (lane k and lane k + off are registers of one
 * thread), and the ones at 16 to 1 in the warp's shared memory; every
 * lane, term and addition of the tree happens, the zeros of lanes past
 * the row included. */
#include "kernels/cuda_common.h"
#include "kernels/reduce_tree.h"
#include "kernels/rmsnorm.h"

enum {
  RN_ROWS = 8,                 /* rows (warps) per block */
  RN_THREADS = 32 * RN_ROWS,
  RN_PER = TREE_LANES / 32,    /* tree lanes per thread */
};
static_assert(RN_PER == 8, "the register halvings below are written for 256 lanes");

/* ---- kernels ---- */

/* Steps 1-3 of the tree for sum_j a[j] * b[j] over one row, by one warp;
 * every thread of the warp gets the result. Each operand is floats or
 * packed (a16, b16: kernel_load). part is the warp's 32 floats of shared
 * memory. */
__device__ static float warp_tree_dot(const float *a, const uint16_t *a16, const float *b,
                                      const uint16_t *b16, int d, float *part) {
  const int t = threadIdx.x % 32;
  float p[RN_PER];
  #pragma unroll
  for (int i = 0; i < RN_PER; i++) { /* lane t + 32 i */
    float acc = 0.0f;
    for (int j = t + 32 * i; j < d; j += TREE_LANES)
      acc = acc + kernel_load(a, a16, j) * kernel_load(b, b16, j);
    p[i] = acc;
  }
  #pragma unroll
  for (int i = 0; i < 4; i++) p[i] = p[i] + p[i + 4]; /* off 128 */
  p[0] = p[0] + p[2];                                  /* off 64 */
  p[1] = p[1] + p[3];
  p[0] = p[0] + p[1]; /* off 32 */
  part[t] = p[0];
  __syncwarp();
  for (int off = 16; off > 0; off >>= 1) {
    if (t < off) part[t] = part[t] + part[t + off];
    __syncwarp();
  }
  const float total = part[0];
  __syncwarp(); /* part is the warp's again only when all have read it */
  return total;
}

__global__ void __launch_bounds__(RN_THREADS)
    rmsnorm_forward_kernel(float *y, uint16_t *y16, float *rstd, const float *x,
                           const uint16_t *x16, int rows, int d, int flags) {
  __shared__ float part[RN_ROWS][32];
  const int w = threadIdx.x / 32, t = threadIdx.x % 32;
  const size_t r = (size_t)blockIdx.x * RN_ROWS + w;
  if (r >= (size_t)rows) return; /* the whole warp */
  const float *xr = x ? x + r * (size_t)d : NULL;
  const uint16_t *xh = x16 ? x16 + r * (size_t)d : NULL;
  float s = rmsnorm_rstd(warp_tree_dot(xr, xh, xr, xh, d, part[w]), d);
  if (t == 0) rstd[r] = s;
  float *yr = y ? y + r * (size_t)d : NULL;
  uint16_t *hr = y16 ? y16 + r * (size_t)d : NULL;
  for (int j = t; j < d; j += 32) {
    float v = kernel_round_out(kernel_load(xr, xh, j) * s, flags);
    if (y) yr[j] = v;
    if (hr) hr[j] = bf16_from_float(v);
  }
}

__global__ void __launch_bounds__(RN_THREADS)
    rmsnorm_backward_kernel(float *dx, uint16_t *dx16, const float *dy, const float *x,
                            const uint16_t *x16, const float *rstd, int rows, int d, int flags) {
  __shared__ float part[RN_ROWS][32];
  const int w = threadIdx.x / 32, t = threadIdx.x % 32;
  const size_t r = (size_t)blockIdx.x * RN_ROWS + w;
  if (r >= (size_t)rows) return;
  const float *xr = x ? x + r * (size_t)d : NULL, *gr = dy + r * (size_t)d;
  const uint16_t *xh = x16 ? x16 + r * (size_t)d : NULL;
  float s = rstd[r];
  float c = rmsnorm_grad_coef(s, warp_tree_dot(gr, NULL, xr, xh, d, part[w]), d);
  float *dr = dx + r * (size_t)d;
  uint16_t *hr = dx16 ? dx16 + r * (size_t)d : NULL;
  for (int j = t; j < d; j += 32) {
    float v = kernel_store(&dr[j], rmsnorm_dx(s, gr[j], kernel_load(xr, xh, j), c), flags);
    if (hr) hr[j] = bf16_from_float(v);
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

extern "C" int rmsnorm_backward_cuda(float *dx, uint16_t *dx16, const float *dy, const float *x,
                                     const uint16_t *x16, const float *rstd, int rows, int d,
                                     int flags, cudaStream_t stream, pg_error *err) {
  if (check_shape(rows, d, err) || cuda_packed_check(err, "rmsnorm", dx16, flags) ||
      cuda_input_check(err, "rmsnorm", "x", x, x16))
    return -1;
  if (rows == 0) return 0;
  rmsnorm_backward_kernel<<<(unsigned)((rows + RN_ROWS - 1) / RN_ROWS), RN_THREADS, 0, stream>>>(
      dx, dx16, dy, x, x16, rstd, rows, d, flags);
  return cuda_check_launch(err, "rmsnorm_backward_kernel");
}
