/* The scaled residual add on the GPU (contract in scale_add.h): out and dy
 * elementwise by scale_add.h's shared code, equal to the CPU kernel bit for
 * bit; ds by col_dot_cuda's fixed tree, equal to the tree ref. */
#include "kernels/col_dot.h"
#include "kernels/cuda_common.h"
#include "kernels/scale_add.h"

/* ---- kernels ---- */

/* out may alias x: each element is read and then written by one thread. */
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    scale_add_forward_kernel(float *out, const float *x, const float *s, const float *y,
                             const uint16_t *y16, size_t n, int d, int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = scale_add_out(x[i], s[i % (size_t)d], kernel_load(y, y16, i), flags);
}

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    scale_add_dy_kernel(float *dy, uint16_t *dy16, const float *dout, const float *s, size_t n,
                        int d, int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    float v = kernel_store(&dy[i], scale_add_dy(dout[i], s[i % (size_t)d], flags), flags);
    if (dy16) dy16[i] = bf16_from_float(v);
  }
}

/* ---- launchers ---- */

static int check_shape(int rows, int d, pg_error *err) {
  if (rows < 0 || d < 1) return pg_fail(err, "", -1, "scale_add: bad shape %d x %d", rows, d);
  return 0;
}

extern "C" int scale_add_forward_cuda(float *out, const float *x, const float *s, const float *y,
                                      const uint16_t *y16, int rows, int d, int flags,
                                      cudaStream_t stream, pg_error *err) {
  if (check_shape(rows, d, err) || cuda_input_check(err, "scale_add", "y", y, y16)) return -1;
  size_t n = (size_t)rows * d;
  if (n == 0) return 0;
  scale_add_forward_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(out, x, s, y, y16, n,
                                                                              d, flags);
  return cuda_check_launch(err, "scale_add_forward_kernel");
}

extern "C" int scale_add_backward_cuda(float *dy, uint16_t *dy16, float *ds, const float *dout,
                                       const float *s, const float *y, const uint16_t *y16,
                                       int rows, int d, int flags, double *scratch,
                                       cudaStream_t stream, pg_error *err) {
  if (check_shape(rows, d, err) || cuda_packed_check(err, "scale_add", dy16, flags) ||
      cuda_input_check(err, "scale_add", "y", y, y16))
    return -1;
  /* ds first: the stream orders it before dy, which may overwrite dout. */
  if (col_dot_cuda(ds, dout, y, y16, rows, d, flags, scratch, stream, err)) return -1;
  size_t n = (size_t)rows * d;
  if (n == 0) return 0;
  scale_add_dy_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(dy, dy16, dout, s, n, d,
                                                                         flags);
  return cuda_check_launch(err, "scale_add_dy_kernel");
}
