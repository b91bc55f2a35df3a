/* The ordered sum of a split weight gradient's partials on the GPU
 * (contract in matmul_split.h): each element by matmul_split_store, the
 * CPU loop's expression, so the result equals matmul_split_sum bit for
 * bit for any launch shape. */
#include "kernels/cuda_common.h"
#include "kernels/matmul_split.h"

/* ---- kernels ---- */

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    matmul_split_sum_kernel(float *dw, const float *partials, int chunks, size_t len, int flags) {
  size_t step = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += step)
    matmul_split_store(dw, partials, len, chunks, i, flags);
}

/* ---- launchers ---- */

extern "C" int matmul_split_sum_cuda(float *dw, const float *partials, int chunks, size_t len,
                                     int flags, cudaStream_t stream, pg_error *err) {
  if (chunks < 1) return pg_fail(err, "", -1, "matmul_split_sum_cuda: %d chunks", chunks);
  if (len == 0) return 0;
  matmul_split_sum_kernel<<<cuda_ew_blocks(len), CUDA_EW_THREADS, 0, stream>>>(dw, partials,
                                                                              chunks, len, flags);
  return cuda_check_launch(err, "matmul_split_sum_kernel");
}
