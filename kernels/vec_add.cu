/* y += x on the GPU (contract in vec_add.h): elementwise by vec_add_elem,
 * the CPU's bits for any launch shape. */
#include "kernels/cuda_common.h"
#include "kernels/vec_add.h"

/* ---- kernels ---- */

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    vec_add_kernel(float *y, const float *x, size_t n, int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = vec_add_elem(y[i], x[i], flags);
}

/* ---- launchers ---- */

extern "C" int vec_add_cuda(float *y, const float *x, size_t n, int flags, cudaStream_t stream,
                            pg_error *err) {
  if (n == 0) return 0;
  vec_add_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(y, x, n, flags);
  return cuda_check_launch(err, "vec_add_kernel");
}
