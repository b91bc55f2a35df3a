/* A scaled residual add with a per-channel vector, as the official
 *   x = x + attn_scale * attn_out;  x = x + mlp_scale * mlp_out;
 *   x = x + skip_weights[i] * skip
 *   out = x + s * y        (s is [D], rows of D channels)
 *
 * Backward: dx = dout (the caller keeps the stream gradient as is);
 * dy = dout * s, stored with the flags (KERNEL_ACCUMULATE adds);
 * ds[c] += sum_n dout[n,c] * y[n,c] (float32 parameter gradient: float64
 * sum in ascending n, one accumulator per channel, rounded once;
 * kernels/col_dot.h's col_dot_sums and finish).
 *
 * KERNEL_BF16: out = bf16(x + bf16(bf16(s) y)); dy = bf16(dout bf16(s));
 * ds += bf16(sum_n bf16(dout y)). KERNEL_ROUND_OUT (backward): dy =
 * bf16(dout s), the float32 product cast to bf16 (B3); ds as without it.
 * out may alias x.
 *
 * The CUDA twin (scale_add.cu): out and dy elementwise by the shared code
 * below (equal to the CPU kernel bit for bit); ds by col_dot.cu's tree
 * over rows, equal to scale_add_backward_tree_ref. */
#ifndef PGOLF_SCALE_ADD_H
#define PGOLF_SCALE_ADD_H

#include "kernels/flags.h"
#include "kernels/hd.h"

/* One element of out = x + s * y (s the channel's scale). */
PGOLF_HD float scale_add_out(float x, float s, float y, int flags) {
  float t = kernel_round(kernel_round(s, flags) * y, flags);
  return kernel_round(x + t, flags);
}

/* One element of dy before kernel_store: dout * s. */
PGOLF_HD float scale_add_dy(float dout, float s, int flags) {
  return dout * kernel_round(s, flags);
}

#ifdef __cplusplus
extern "C" {
#endif

void scale_add_forward(float *out, const float *x, const float *s, const float *y, int rows, int d,
                       int flags);
void scale_add_backward(float *dy, float *ds, const float *dout, const float *s, const float *y,
                        int rows, int d, int flags);

/* The backward with ds summed by the GPU's tree (col_dot_tree_ref); dy as
 * scale_add_backward. */
void scale_add_backward_tree_ref(float *dy, float *ds, const float *dout, const float *s,
                                 const float *y, int rows, int d, int flags);

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

/* The CUDA twins: device pointers, launched on stream; no allocation. The
 * backward reads each dout element once, for ds's sum and dy both (dy may
 * alias dout), with ds's lane partials in scratch of COL_DOT_SCRATCH(d)
 * doubles (kernels/col_dot.h); dy16 (may be NULL) is dy's packed copy
 * (kernels/flags.h), and with it dy may be NULL (only the packed copy is
 * read downstream; not with KERNEL_ACCUMULATE). y comes as floats or packed
 * (y or y16, exactly one: a bf16 projection's output read where it lies,
 * kernels/flags.h's kernel_load). */
int scale_add_forward_cuda(float *out, const float *x, const float *s, const float *y,
                           const uint16_t *y16, int rows, int d, int flags, cudaStream_t stream,
                           pg_error *err);
int scale_add_backward_cuda(float *dy, uint16_t *dy16, float *ds, const float *dout, const float *s,
                            const float *y, const uint16_t *y16, int rows, int d, int flags,
                            double *scratch, cudaStream_t stream, pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
