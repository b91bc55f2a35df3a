/* The L2 norm on the GPU (contract in l2norm.h): one block of TREE_LANES
 * threads sums the float64 squares by the fixed tree of reduce_tree.h, so
 * the result equals l2norm_tree_ref bit for bit. No atomics. */
#include "kernels/cuda_common.h"
#include "kernels/l2norm.h"
#include "kernels/reduce_tree.h"

/* ---- kernels ---- */

__global__ void __launch_bounds__(TREE_LANES)
    l2norm_kernel(float *norm, double *sumsq, const float *x, size_t n) {
  __shared__ double part[TREE_LANES];
  const int k = threadIdx.x;
  double acc = 0.0;
  for (size_t i = (size_t)k; i < n; i += TREE_LANES) acc = acc + l2norm_term(x[i]);
  part[k] = acc;
  __syncthreads();
  for (int off = TREE_LANES / 2; off > 0; off >>= 1) {
    if (k < off) part[k] = part[k] + part[k + off];
    __syncthreads();
  }
  if (k == 0) {
    *norm = l2norm_from_sumsq(part[0]);
    if (sumsq) *sumsq = part[0];
  }
}

/* ---- launchers ---- */

extern "C" int l2norm_cuda(float *norm, double *sumsq, const float *x, size_t n,
                           cudaStream_t stream, pg_error *err) {
  l2norm_kernel<<<1, TREE_LANES, 0, stream>>>(norm, sumsq, x, n);
  return cuda_check_launch(err, "l2norm_kernel");
}
