/* The optimizers' elementwise steps on the GPU (contract in
 * optim_step.h): each element by the shared functions, so the results
 * equal the CPU loops bit for bit for any launch shape. */
#include "kernels/cuda_common.h"
#include "kernels/optim_step.h"

/* ---- kernels ---- */

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    adam_update_kernel(float *p, const float *g, float *m, float *v, size_t n, adam_coeffs c,
                       int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    adam_elem(&p[i], g[i], &m[i], &v[i], &c, flags);
}

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    muon_momentum_kernel(float *buf, float *u, const float *g, size_t n, float mom) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    u[i] = muon_momentum_elem(&buf[i], g[i], mom);
}

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    muon_apply_kernel(float *p, const float *u, size_t n, float neg_lr) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    p[i] = fmaf(u[i], neg_lr, p[i]);
}

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    sgd_momentum_kernel(float *w, float *buf, const float *g, size_t n, float lr, float mu) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    sgd_momentum_elem(&w[i], &buf[i], g[i], lr, mu);
}

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    scale_round_kernel(float *y, const float *x, size_t n, float s, int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = scale_round_elem(x[i], s, flags);
}

/* ---- launchers ---- */

extern "C" int adam_update_cuda(float *p, const float *g, float *m, float *v, size_t n,
                                adam_coeffs c, int flags, cudaStream_t stream, pg_error *err) {
  if (n == 0) return 0;
  adam_update_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(p, g, m, v, n, c, flags);
  return cuda_check_launch(err, "adam_update_kernel");
}

extern "C" int muon_momentum_cuda(float *buf, float *u, const float *g, size_t n, float mom,
                                  cudaStream_t stream, pg_error *err) {
  if (n == 0) return 0;
  muon_momentum_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(buf, u, g, n, mom);
  return cuda_check_launch(err, "muon_momentum_kernel");
}

extern "C" int muon_apply_cuda(float *p, const float *u, size_t n, float neg_lr,
                               cudaStream_t stream, pg_error *err) {
  if (n == 0) return 0;
  muon_apply_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(p, u, n, neg_lr);
  return cuda_check_launch(err, "muon_apply_kernel");
}

extern "C" int sgd_momentum_cuda(float *w, float *buf, const float *g, size_t n, float lr,
                                  float mu, cudaStream_t stream, pg_error *err) {
  if (n == 0) return 0;
  sgd_momentum_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(w, buf, g, n, lr, mu);
  return cuda_check_launch(err, "sgd_momentum_kernel");
}

extern "C" int scale_round_cuda(float *y, const float *x, size_t n, float s, int flags,
                                cudaStream_t stream, pg_error *err) {
  if (n == 0) return 0;
  scale_round_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(y, x, n, s, flags);
  return cuda_check_launch(err, "scale_round_kernel");
}
