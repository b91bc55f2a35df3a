/* RMSNorm on the GPU (contract in rmsnorm.h): one block of TREE_LANES
 * threads per row; each row's sum goes through the fixed tree of
 * reduce_tree.h (lanes strided over the row, then pairwise halving in
 * shared memory), so the result equals rmsnorm_*_tree_ref bit for bit.
 * No atomics; every element's arithmetic is rmsnorm.h's shared code. */
#include "kernels/cuda_common.h"
#include "kernels/reduce_tree.h"
#include "kernels/rmsnorm.h"

/* ---- kernels ---- */

/* Steps 1-3 of the tree for sum_j a[j] * b[j] over one row; every thread
 * of the block gets the result. part is TREE_LANES floats of shared memory. */
__device__ static float block_tree_dot(const float *a, const float *b, int d, float *part) {
  int k = threadIdx.x;
  float acc = 0.0f;
  for (int j = k; j < d; j += TREE_LANES) acc = acc + a[j] * b[j];
  part[k] = acc;
  __syncthreads();
  for (int off = TREE_LANES / 2; off > 0; off >>= 1) {
    if (k < off) part[k] = part[k] + part[k + off];
    __syncthreads();
  }
  float total = part[0];
  __syncthreads(); /* part is reused by the caller's next row */
  return total;
}

__global__ void __launch_bounds__(TREE_LANES)
    rmsnorm_forward_kernel(float *y, float *rstd, const float *x, int d, int flags) {
  __shared__ float part[TREE_LANES];
  size_t r = blockIdx.x;
  const float *xr = x + r * (size_t)d;
  float s = rmsnorm_rstd(block_tree_dot(xr, xr, d, part), d);
  if (threadIdx.x == 0) rstd[r] = s;
  float *yr = y + r * (size_t)d;
  for (int j = threadIdx.x; j < d; j += TREE_LANES) yr[j] = kernel_round(xr[j] * s, flags);
}

__global__ void __launch_bounds__(TREE_LANES)
    rmsnorm_backward_kernel(float *dx, const float *dy, const float *x, const float *rstd, int d,
                            int flags) {
  __shared__ float part[TREE_LANES];
  size_t r = blockIdx.x;
  const float *xr = x + r * (size_t)d, *gr = dy + r * (size_t)d;
  float s = rstd[r];
  float c = rmsnorm_grad_coef(s, block_tree_dot(gr, xr, d, part), d);
  float *dr = dx + r * (size_t)d;
  for (int j = threadIdx.x; j < d; j += TREE_LANES)
    kernel_store(&dr[j], rmsnorm_dx(s, gr[j], xr[j], c), flags);
}

/* ---- launchers ---- */

static int check_shape(int rows, int d, pg_error *err) {
  if (rows < 0 || d < 1) return pg_fail(err, "", -1, "rmsnorm: bad shape %d x %d", rows, d);
  return 0;
}

extern "C" int rmsnorm_forward_cuda(float *y, float *rstd, const float *x, int rows, int d,
                                    int flags, cudaStream_t stream, pg_error *err) {
  if (check_shape(rows, d, err)) return -1;
  if (rows == 0) return 0;
  rmsnorm_forward_kernel<<<rows, TREE_LANES, 0, stream>>>(y, rstd, x, d, flags);
  return cuda_check_launch(err, "rmsnorm_forward_kernel");
}

extern "C" int rmsnorm_backward_cuda(float *dx, const float *dy, const float *x, const float *rstd,
                                     int rows, int d, int flags, cudaStream_t stream,
                                     pg_error *err) {
  if (check_shape(rows, d, err)) return -1;
  if (rows == 0) return 0;
  rmsnorm_backward_kernel<<<rows, TREE_LANES, 0, stream>>>(dx, dy, x, rstd, d, flags);
  return cuda_check_launch(err, "rmsnorm_backward_kernel");
}
