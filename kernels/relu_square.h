/* The MLP activation relu(h)^2, as torch.relu(h).square().
 * Backward as PyTorch's pow backward then relu's threshold backward:
 *   dh = (h > 0) ? dy * (2 * relu(h)) : 0.
 * KERNEL_BF16: y = bf16(r * r) and dh = bf16(dy * (2 r)) (2r is exact);
 * KERNEL_ROUND_OUT rounds the same two results (kernels/flags.h).
 *
 * Elementwise: the CUDA twin (relu_square.cu) computes every element with
 * the shared functions below, so it equals the CPU kernel bit for bit. */
#ifndef PGOLF_RELU_SQUARE_H
#define PGOLF_RELU_SQUARE_H

#include <stddef.h>

#include "kernels/flags.h"
#include "kernels/hd.h"

/* y for one element, rounded under KERNEL_BF16. */
PGOLF_HD float relu_square_y(float h, int flags) {
  float r = h > 0.0f ? h : 0.0f;
  return kernel_round_out(r * r, flags);
}

/* dh for one element before kernel_store rounds or accumulates it. */
PGOLF_HD float relu_square_dh(float dy, float h) {
  float r = h > 0.0f ? h : 0.0f;
  return h > 0.0f ? dy * (2.0f * r) : 0.0f;
}

#ifdef __cplusplus
extern "C" {
#endif

void relu_square_forward(float *y, const float *h, size_t n, int flags);
/* flags: KERNEL_BF16, KERNEL_ACCUMULATE; dh may alias dy. */
void relu_square_backward(float *dh, const float *dy, const float *h, size_t n, int flags);

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

/* The CUDA twins: device pointers, a grid-stride loop, launched on stream;
 * no allocation. Launch errors come back as err. y16 and dh16 (may be
 * NULL): packed copies of y and dh (kernels/flags.h); y, and dh when not
 * accumulating, may be NULL where the packed copy is given (the float32
 * result unwritten: only GEMMs read it). Each input comes as floats or
 * packed (h or h16, dy or dy16: exactly one), a bf16 GEMM's result read
 * where it lies (kernel_load). */
int relu_square_forward_cuda(float *y, uint16_t *y16, const float *h, const uint16_t *h16, size_t n,
                             int flags, cudaStream_t stream, pg_error *err);
int relu_square_backward_cuda(float *dh, uint16_t *dh16, const float *dy, const uint16_t *dy16,
                              const float *h, const uint16_t *h16, size_t n, int flags,
                              cudaStream_t stream, pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
