/* relu(h)^2 on the GPU (contract in relu_square.h): elementwise, each
 * element by relu_square.h's shared code, so the result equals the CPU
 * kernel bit for bit for any launch shape. */
#include "kernels/cuda_common.h"
#include "kernels/relu_square.h"

/* ---- kernels ---- */

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    relu_square_forward_kernel(float *y, const float *h, size_t n, int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = relu_square_y(h[i], flags);
}

/* dh may alias dy: each element is read and then written by one thread. */
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    relu_square_backward_kernel(float *dh, const float *dy, const float *h, size_t n, int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    kernel_store(&dh[i], relu_square_dh(dy[i], h[i]), flags);
}

/* ---- launchers ---- */

extern "C" int relu_square_forward_cuda(float *y, const float *h, size_t n, int flags,
                                        cudaStream_t stream, pg_error *err) {
  if (n == 0) return 0;
  relu_square_forward_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(y, h, n, flags);
  return cuda_check_launch(err, "relu_square_forward_kernel");
}

extern "C" int relu_square_backward_cuda(float *dh, const float *dy, const float *h, size_t n,
                                         int flags, cudaStream_t stream, pg_error *err) {
  if (n == 0) return 0;
  relu_square_backward_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(dh, dy, h, n,
                                                                                 flags);
  return cuda_check_launch(err, "relu_square_backward_kernel");
}
