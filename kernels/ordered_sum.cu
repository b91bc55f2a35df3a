/* The ordered sum on the GPU (contract in ordered_sum.h): one thread per
 * element evaluates ordered_sum_elem, the CPU's expression, so the bits do
 * not depend on the launch shape. No atomics: each output element is
 * written by one thread. */
#include "kernels/cuda_common.h"
#include "kernels/ordered_sum.h"

/* ---- kernels ---- */

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    ordered_sum_kernel(float *out, const float *shards, size_t stride, int n, size_t len,
                       float scale) {
  size_t step = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += step)
    out[i] = ordered_sum_elem(shards, stride, n, i, scale);
}

/* ---- launchers ---- */

extern "C" int ordered_sum_cuda(float *out, const float *shards, size_t stride, int n, size_t len,
                                float scale, cudaStream_t stream, pg_error *err) {
  if (n < 1) return pg_fail(err, "", -1, "ordered_sum_cuda: %d shards", n);
  if (len == 0) return 0;
  ordered_sum_kernel<<<cuda_ew_blocks(len), CUDA_EW_THREADS, 0, stream>>>(out, shards, stride, n,
                                                                          len, scale);
  return cuda_check_launch(err, "ordered_sum_kernel");
}
