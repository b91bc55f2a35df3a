/* relu(h)^2 on the GPU (contract in relu_square.h): elementwise, each
 * element by relu_square.h's shared code, so the result equals the CPU
 * kernel bit for bit for any launch shape. */
#include "kernels/cuda_common.h"
#include "kernels/relu_square.h"

/* ---- kernels ---- */

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    relu_square_forward_kernel(float *y, uint16_t *y16, const float *h, const uint16_t *h16,
                               size_t n, int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    float v = relu_square_y(kernel_load(h, h16, i), flags);
    if (y) y[i] = v;
    if (y16) y16[i] = bf16_from_float(v);
  }
}

/* dh may alias dy (and dh16 dy16): each element is read and then written
 * by one thread. Without dh (no accumulation, the launcher checks) the
 * value kernel_store would store goes to dh16 alone. */
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    relu_square_backward_kernel(float *dh, uint16_t *dh16, const float *dy, const uint16_t *dy16,
                                const float *h, const uint16_t *h16, size_t n, int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    float r = relu_square_dh(kernel_load(dy, dy16, i), kernel_load(h, h16, i));
    float v = dh ? kernel_store(&dh[i], r, flags) : kernel_round_out(r, flags);
    if (dh16) dh16[i] = bf16_from_float(v);
  }
}

/* ---- launchers ---- */

extern "C" int relu_square_forward_cuda(float *y, uint16_t *y16, const float *h,
                                        const uint16_t *h16, size_t n, int flags,
                                        cudaStream_t stream, pg_error *err) {
  if (cuda_packed_check(err, "relu_square", y16, flags) ||
      cuda_output_check(err, "relu_square", y, y16) ||
      cuda_input_check(err, "relu_square", "h", h, h16))
    return -1;
  if (n == 0) return 0;
  relu_square_forward_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(y, y16, h, h16, n,
                                                                                flags);
  return cuda_check_launch(err, "relu_square_forward_kernel");
}

extern "C" int relu_square_backward_cuda(float *dh, uint16_t *dh16, const float *dy,
                                         const uint16_t *dy16, const float *h, const uint16_t *h16,
                                         size_t n, int flags, cudaStream_t stream, pg_error *err) {
  if (cuda_packed_check(err, "relu_square", dh16, flags) ||
      cuda_output_check(err, "relu_square", dh, dh16) ||
      cuda_input_check(err, "relu_square", "dy", dy, dy16) ||
      cuda_input_check(err, "relu_square", "h", h, h16))
    return -1;
  if (!dh && (flags & KERNEL_ACCUMULATE))
    return pg_fail(err, "", -1, "relu_square: accumulating needs dh");
  if (n == 0) return 0;
  relu_square_backward_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(dh, dh16, dy, dy16,
                                                                                 h, h16, n, flags);
  return cuda_check_launch(err, "relu_square_backward_kernel");
}
