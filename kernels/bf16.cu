/* bf16 arrays on the GPU (contract in bf16.h): elementwise, each element
 * by bf16.h's shared conversions, so the results equal the CPU's bit for
 * bit for any launch shape. */
#include "kernels/bf16.h"
#include "kernels/cuda_common.h"
#include "kernels/flags.h"

/* ---- kernels ---- */

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    bf16_pack_kernel(uint16_t *dst, const float *src, size_t n) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = bf16_from_float(src[i]);
}

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    bf16_unpack_kernel(float *dst, const uint16_t *src, size_t n, int accumulate) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = accumulate ? dst[i] + bf16_to_float(src[i]) : bf16_to_float(src[i]);
}

__global__ void __launch_bounds__(CUDA_EW_THREADS) bf16_round_kernel(float *x, size_t n) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = bf16_round(x[i]);
}

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    bf16_pack2_mma_kernel(uint32_t *dst, const float *src, size_t pairs) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < pairs; i += stride)
    dst[i] = bf16_pack2_mma(src[2 * i], src[2 * i + 1]);
}

/* ---- launchers ---- */

extern "C" int bf16_pack_cuda(uint16_t *dst, const float *src, size_t n, cudaStream_t stream,
                              pg_error *err) {
  if (n == 0) return 0;
  bf16_pack_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(dst, src, n);
  return cuda_check_launch(err, "bf16_pack_kernel");
}

extern "C" int bf16_unpack_cuda(float *dst, const uint16_t *src, size_t n, int flags,
                                cudaStream_t stream, pg_error *err) {
  if (n == 0) return 0;
  bf16_unpack_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(
      dst, src, n, (flags & KERNEL_ACCUMULATE) != 0);
  return cuda_check_launch(err, "bf16_unpack_kernel");
}

extern "C" int bf16_round_array_cuda(float *x, size_t n, cudaStream_t stream, pg_error *err) {
  if (n == 0) return 0;
  bf16_round_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(x, n);
  return cuda_check_launch(err, "bf16_round_kernel");
}

extern "C" int bf16_pack2_mma_cuda(uint32_t *dst, const float *src, size_t pairs,
                                   cudaStream_t stream, pg_error *err) {
  if (pairs == 0) return 0;
  bf16_pack2_mma_kernel<<<cuda_ew_blocks(pairs), CUDA_EW_THREADS, 0, stream>>>(dst, src, pairs);
  return cuda_check_launch(err, "bf16_pack2_mma_kernel");
}
