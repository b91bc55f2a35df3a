/* The block's input mix, as the official Block:
 *   out = mix[0] * x + mix[1] * x0        (per channel, mix is [2, D])
 * x is the residual stream, x0 the normalised embedding.
 *
 * Backward: dx = dout * mix[0] (overwritten; dx may alias dout),
 * dx0 += dout * mix[1] (accumulated: x0 feeds every block),
 * dmix[k][c] += sum_n dout[n,c] * (x or x0)[n,c] (a float32 parameter
 * gradient: the sum over rows runs in float64 in ascending n, one
 * accumulator per channel, then rounds to float32; kernels/col_dot.h's
 * col_dot_sums and finish).
 *
 * KERNEL_BF16 (mix.to(bf16), one rounding per eager op):
 *   out = bf16(bf16(m0 x) + bf16(m1 x0)), m = bf16(mix);
 *   dx = bf16(dout m0); dx0 = bf16(dx0 + bf16(dout m1));
 *   dmix += bf16(sum_n bf16(dout x)).
 *
 * The CUDA twin (residual_mix.cu): out, dx and dx0 elementwise by the
 * shared code below (equal to the CPU kernel bit for bit); dmix by
 * col_dot.cu's tree over rows, equal to residual_mix_backward_tree_ref. */
#ifndef PGOLF_RESIDUAL_MIX_H
#define PGOLF_RESIDUAL_MIX_H

#include "kernels/flags.h"
#include "kernels/hd.h"

/* One element of out from the channel's mix weights m0, m1 (float32). */
PGOLF_HD float residual_mix_out(float x, float x0, float m0, float m1, int flags) {
  float a = kernel_round(kernel_round(m0, flags) * x, flags);
  float b = kernel_round(kernel_round(m1, flags) * x0, flags);
  return kernel_round(a + b, flags);
}

/* One element of the input gradients: *dx = dout m0 (overwritten),
 * *dx0 += dout m1. dout is read before *dx is written (dx may alias it). */
PGOLF_HD void residual_mix_grads(float *dx, float *dx0, float dout, float m0, float m1, int flags) {
  m0 = kernel_round(m0, flags);
  m1 = kernel_round(m1, flags);
  *dx0 = kernel_round(*dx0 + kernel_round(dout * m1, flags), flags);
  *dx = kernel_round(dout * m0, flags);
}

#ifdef __cplusplus
extern "C" {
#endif

void residual_mix_forward(float *out, const float *x, const float *x0, const float *mix, int rows,
                          int d, int flags);
void residual_mix_backward(float *dx, float *dx0, float *dmix, const float *dout, const float *x,
                           const float *x0, const float *mix, int rows, int d, int flags);

/* The backward with dmix summed by the GPU's tree (col_dot_tree_ref, once
 * per half of mix); dx and dx0 as residual_mix_backward. */
void residual_mix_backward_tree_ref(float *dx, float *dx0, float *dmix, const float *dout,
                                    const float *x, const float *x0, const float *mix, int rows,
                                    int d, int flags);

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

/* The CUDA twins: device pointers, launched on stream; no allocation. The
 * backward reads each dout element once, for dmix's sums and dx, dx0 both
 * (dx may alias dout), with dmix's lane partials in scratch of
 * COL_DOT_SCRATCH(2 * d) doubles (kernels/col_dot.h: both halves of mix
 * at once). */
int residual_mix_forward_cuda(float *out, const float *x, const float *x0, const float *mix,
                              int rows, int d, int flags, cudaStream_t stream, pg_error *err);
int residual_mix_backward_cuda(float *dx, float *dx0, float *dmix, const float *dout,
                               const float *x, const float *x0, const float *mix, int rows, int d,
                               int flags, double *scratch, cudaStream_t stream, pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
