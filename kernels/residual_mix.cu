/* The block's input mix on the GPU (contract in residual_mix.h): out, dx
 * and dx0 elementwise by residual_mix.h's shared code, equal to the CPU
 * kernel bit for bit; dmix by col_dot_cuda's fixed tree, equal to the tree
 * ref. */
#include "kernels/col_dot.h"
#include "kernels/cuda_common.h"
#include "kernels/residual_mix.h"

/* ---- kernels ---- */

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    residual_mix_forward_kernel(float *out, const float *x, const float *x0, const float *mix,
                                size_t n, int d, int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    size_t c = i % (size_t)d;
    out[i] = residual_mix_out(x[i], x0[i], mix[c], mix[d + c], flags);
  }
}

/* dx may alias dout: each element is read and then written by one thread. */
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    residual_mix_inputs_kernel(float *dx, float *dx0, const float *dout, const float *mix, size_t n,
                               int d, int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    size_t c = i % (size_t)d;
    residual_mix_grads(&dx[i], &dx0[i], dout[i], mix[c], mix[d + c], flags);
  }
}

/* ---- launchers ---- */

static int check_shape(int rows, int d, pg_error *err) {
  if (rows < 0 || d < 1) return pg_fail(err, "", -1, "residual_mix: bad shape %d x %d", rows, d);
  return 0;
}

extern "C" int residual_mix_forward_cuda(float *out, const float *x, const float *x0,
                                         const float *mix, int rows, int d, int flags,
                                         cudaStream_t stream, pg_error *err) {
  if (check_shape(rows, d, err)) return -1;
  size_t n = (size_t)rows * d;
  if (n == 0) return 0;
  residual_mix_forward_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(out, x, x0, mix, n,
                                                                                 d, flags);
  return cuda_check_launch(err, "residual_mix_forward_kernel");
}

extern "C" int residual_mix_backward_cuda(float *dx, float *dx0, float *dmix, const float *dout,
                                          const float *x, const float *x0, const float *mix,
                                          int rows, int d, int flags, double *scratch,
                                          cudaStream_t stream, pg_error *err) {
  if (check_shape(rows, d, err)) return -1;
  /* The sums first: the stream orders them before dx overwrites dout. */
  if (col_dot_cuda(dmix, dout, x, NULL, rows, d, flags, scratch, stream, err)) return -1;
  if (col_dot_cuda(dmix + d, dout, x0, NULL, rows, d, flags, scratch, stream, err)) return -1;
  size_t n = (size_t)rows * d;
  if (n == 0) return 0;
  residual_mix_inputs_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(dx, dx0, dout, mix,
                                                                                n, d, flags);
  return cuda_check_launch(err, "residual_mix_inputs_kernel");
}
