/* Newton-Schulz on the GPU (contract in newton_schulz.h): newton_schulz5's
 * sequence, each elementwise step by the shared functions, the norm by
 * l2norm_cuda's tree, the products through cuBLASLt (bf16 operands packed
 * first under KERNEL_BF16, as the model's GEMMs). */
#include <string.h>

#include "kernels/bf16.h"
#include "kernels/cuda_common.h"
#include "kernels/l2norm.h"
#include "kernels/newton_schulz.h"
#include "kernels/optim_step.h"

/* ---- kernels ---- */

/* x /= ns_divisor(*norm): the divisor from the norm on the device. */
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    ns_normalise_kernel(float *x, const float *norm, size_t n, int flags) {
  const float d = ns_divisor(*norm, flags);
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = ns_divide_elem(x[i], d, flags);
}

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    ns_scale_add_kernel(float *y, const float *x, float s, const float *z, size_t n, int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = ns_scale_add_elem(x[i], s, z[i], flags);
}

/* dst[c, r] = src[r, c]^T, one element per thread. */
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    ns_transpose_kernel(float *dst, const float *src, int r, int c) {
  size_t n = (size_t)r * c, stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    size_t row = i / c, col = i % c;
    dst[col * r + row] = src[i];
  }
}

/* ---- launchers ---- */

typedef struct ns_ctx {
  matmul_cuda_ctx *mm;
  int flags;
  uint16_t *a16, *b16, *o16; /* packed operands and product */
  cudaStream_t s;
} ns_ctx;

/* y[n, out] = x[n, in] w[out, in]^T on float32 arrays; under KERNEL_BF16
 * through packed bf16 operands and a bf16 product (w may be x). */
static int product(const ns_ctx *c, float *y, const float *x, const float *w, int n, int in,
                   int out, pg_error *err) {
  if (!(c->flags & KERNEL_BF16))
    return matmul_forward_cuda(c->mm, y, x, w, n, in, out, 0, c->s, err);
  if (bf16_pack_cuda(c->a16, x, (size_t)n * in, c->s, err)) return -1;
  const uint16_t *w16 = c->a16;
  if (w != x) {
    if (bf16_pack_cuda(c->b16, w, (size_t)out * in, c->s, err)) return -1;
    w16 = c->b16;
  }
  if (matmul_forward_cuda(c->mm, c->o16, c->a16, w16, n, in, out, KERNEL_BF16, c->s, err))
    return -1;
  return bf16_unpack_cuda(y, c->o16, (size_t)n * out, 0, c->s, err);
}

static int scale_add(const ns_ctx *c, float *y, const float *x, float s, const float *z, size_t n,
                     pg_error *err) {
  ns_scale_add_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, c->s>>>(y, x, s, z, n, c->flags);
  return cuda_check_launch(err, "ns_scale_add_kernel");
}

static int transpose(const ns_ctx *c, float *dst, const float *src, int r, int cc, pg_error *err) {
  ns_transpose_kernel<<<cuda_ew_blocks((size_t)r * cc), CUDA_EW_THREADS, 0, c->s>>>(dst, src, r,
                                                                                  cc);
  return cuda_check_launch(err, "ns_transpose_kernel");
}

/* One quintic step on X [r, c], r <= c (newton_schulz.c's ns_step). */
static int ns_step(const ns_ctx *c, float *X, int r, int cc, float *XT, float *BX, float *A,
                   float *cA, float *B, pg_error *err) {
  size_t rc = (size_t)r * cc, rr = (size_t)r * r;
  if (product(c, A, X, X, r, cc, r, err) ||
      scale_round_cuda(cA, A, rr, (float)NS_C, c->flags, c->s, err) ||
      product(c, B, cA, A, r, r, r, err) || scale_add(c, B, A, (float)NS_B, B, rr, err) ||
      transpose(c, XT, X, r, cc, err) || product(c, BX, B, XT, r, r, cc, err))
    return -1;
  return scale_add(c, X, X, (float)NS_A, BX, rc, err);
}

extern "C" int newton_schulz5_cuda(matmul_cuda_ctx *mm, float *out, const float *g, int rows,
                                   int cols, int steps, int flags, float *work, uint16_t *work16,
                                   float *norm, double *sumsq, cudaStream_t stream, pg_error *err) {
  if (rows < 1 || cols < 1 || steps < 0)
    return pg_fail(err, "", -1, "newton_schulz: bad shape %d x %d, %d steps", rows, cols, steps);
  flags &= KERNEL_BF16;
  int transposed = rows > cols;
  int r = transposed ? cols : rows, cc = transposed ? rows : cols;
  size_t rc = (size_t)r * cc, rr = (size_t)r * r;
  float *X = work, *XT = X + rc, *BX = XT + rc, *A = BX + rc, *cA = A + rr, *B = cA + rr;
  ns_ctx c = {mm, flags, work16, work16 + rc, work16 + 2 * rc, stream};
  /* Normalise in the input's orientation (BX as scratch), then turn. */
  if (scale_round_cuda(BX, g, rc, 1.0f, flags, stream, err) ||
      l2norm_cuda(norm, sumsq, BX, rc, stream, err))
    return -1;
  ns_normalise_kernel<<<cuda_ew_blocks(rc), CUDA_EW_THREADS, 0, stream>>>(BX, norm, rc, flags);
  if (cuda_check_launch(err, "ns_normalise_kernel")) return -1;
  if (transposed) {
    if (transpose(&c, X, BX, rows, cols, err)) return -1;
  } else if (cudaMemcpyAsync(X, BX, rc * sizeof *X, cudaMemcpyDeviceToDevice, stream) !=
             cudaSuccess) {
    return pg_fail(err, "", -1, "newton_schulz: device copy failed");
  }
  for (int s = 0; s < steps; s++)
    if (ns_step(&c, X, r, cc, XT, BX, A, cA, B, err)) return -1;
  if (transposed) return transpose(&c, out, X, r, cc, err);
  if (cudaMemcpyAsync(out, X, rc * sizeof *out, cudaMemcpyDeviceToDevice, stream) != cudaSuccess)
    return pg_fail(err, "", -1, "newton_schulz: device copy failed");
  return 0;
}
