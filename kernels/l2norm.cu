/* The L2 norm on the GPU (contract in l2norm.h): one block of TREE_LANES
 * threads per vector sums the float64 squares by the fixed tree of
 * reduce_tree.h, so each result equals l2norm_tree_ref bit for bit. No
 * atomics. */
#include "kernels/cuda_common.h"
#include "kernels/l2norm.h"
#include "kernels/reduce_tree.h"

/* ---- kernels ---- */

/* Block b: the vector x + b n into norm[b] (and sumsq[b]). */
__global__ void __launch_bounds__(TREE_LANES)
    l2norm_kernel(float *norm, double *sumsq, const float *x, size_t n) {
  __shared__ double part[TREE_LANES];
  const int k = threadIdx.x;
  x += blockIdx.x * n, norm += blockIdx.x;
  if (sumsq) sumsq += blockIdx.x;
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

extern "C" int l2norm_batch_cuda(float *norm, double *sumsq, const float *x, size_t n, int batch,
                                 cudaStream_t stream, pg_error *err) {
  if (batch < 1) return pg_fail(err, "", -1, "l2norm: bad batch %d", batch);
  l2norm_kernel<<<(unsigned)batch, TREE_LANES, 0, stream>>>(norm, sumsq, x, n);
  return cuda_check_launch(err, "l2norm_kernel");
}

extern "C" int l2norm_cuda(float *norm, double *sumsq, const float *x, size_t n,
                           cudaStream_t stream, pg_error *err) {
  return l2norm_batch_cuda(norm, sumsq, x, n, 1, stream, err);
}
