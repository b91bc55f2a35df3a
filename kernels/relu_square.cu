/* relu(h)^2 on the GPU (contract in relu_square.h): elementwise, each
 * element by relu_square.h's shared code, so the result equals the CPU
 * kernel bit for bit for any launch shape. */
#include "kernels/cuda_common.h"
#include "kernels/relu_square.h"

/* ---- kernels ---- */

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    relu_square_forward_kernel(float *y, uint16_t *y16, const float *h, size_t n, int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    float v = relu_square_y(h[i], flags);
    if (y) y[i] = v;
    if (y16) y16[i] = bf16_from_float(v);
  }
}

/* dh may alias dy: each element is read and then written by one thread. */
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    relu_square_backward_kernel(float *dh, uint16_t *dh16, const float *dy, const float *h,
                                size_t n, int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    float v = kernel_store(&dh[i], relu_square_dh(dy[i], h[i]), flags);
    if (dh16) dh16[i] = bf16_from_float(v);
  }
}

/* ---- launchers ---- */

extern "C" int relu_square_forward_cuda(float *y, uint16_t *y16, const float *h, size_t n,
                                        int flags, cudaStream_t stream, pg_error *err) {
  if (cuda_packed_check(err, "relu_square", y16, flags) ||
      cuda_output_check(err, "relu_square", y, y16))
    return -1;
  if (n == 0) return 0;
  relu_square_forward_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(y, y16, h, n,
                                                                                flags);
  return cuda_check_launch(err, "relu_square_forward_kernel");
}

extern "C" int relu_square_backward_cuda(float *dh, uint16_t *dh16, const float *dy, const float *h,
                                         size_t n, int flags, cudaStream_t stream, pg_error *err) {
  if (cuda_packed_check(err, "relu_square", dh16, flags)) return -1;
  if (n == 0) return 0;
  relu_square_backward_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(dh, dh16, dy, h,
                                                                                 n, flags);
  return cuda_check_launch(err, "relu_square_backward_kernel");
}
