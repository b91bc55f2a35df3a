/* The per-head query gain, as the official q * q_gain[None, :, None, None]:
 *   y[n, h, :] = q[n, h, :] * g[h]        (q is [rows, heads * head_dim])
 * Backward: dq = dy * g (stored with the flags; dq may alias dy);
 * dg[h] += sum over rows n, then d, of dy * q (float32 parameter gradient:
 * float64 sum in that order, one thread per head, rounded once; kernels/
 * col_dot.h's term and finish).
 * KERNEL_BF16: y = bf16(q bf16(g)); dq = bf16(dy bf16(g));
 * dg += bf16(sum bf16(dy q)). KERNEL_ROUND_OUT (forward): y = bf16(q g),
 * the float32 product cast to bf16 (F4: q at the attention's cast).
 *
 * The CUDA twin (q_gain.cu): y and dq elementwise by the shared code below
 * (equal to the CPU kernel bit for bit); dg by the fixed tree of
 * kernels/reduce_tree.h in float64 over each head's rows * head_dim terms,
 * taken in the CPU's order (term m = n * head_dim + j): lane k sums the
 * terms m = k, k + 256, ... in increasing m, then the lanes combine
 * pairwise, halving. q_gain_backward_tree_ref computes that tree. */
#ifndef PGOLF_Q_GAIN_H
#define PGOLF_Q_GAIN_H

#include "kernels/flags.h"
#include "kernels/hd.h"

/* One element of y = q * g (g the head's gain). */
PGOLF_HD float q_gain_y(float q, float g, int flags) {
  return kernel_round_out(q * kernel_round(g, flags), flags);
}

/* One element of dq before kernel_store: dy * g. */
PGOLF_HD float q_gain_dq(float dy, float g, int flags) { return dy * kernel_round(g, flags); }

#ifdef __cplusplus
extern "C" {
#endif

void q_gain_forward(float *y, const float *q, const float *g, int rows, int heads, int head_dim,
                    int flags);
void q_gain_backward(float *dq, float *dg, const float *dy, const float *q, const float *g,
                     int rows, int heads, int head_dim, int flags);

/* The backward with dg summed by the GPU's tree; dq as q_gain_backward. */
void q_gain_backward_tree_ref(float *dq, float *dg, const float *dy, const float *q, const float *g,
                              int rows, int heads, int head_dim, int flags);

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

/* The CUDA twins: device pointers, launched on stream; no allocation. The
 * backward sums dg before it writes dq (dq may alias dy); scratch holds
 * the tree's lane partials, heads * TREE_LANES doubles. In both backwards
 * dq may be NULL: dg alone (the trainer takes dq from kernels/qk_norm.h,
 * which applies the gain on its way). dy comes as floats or packed (dy or
 * dy16, exactly one: the tensor-core attention's packed dq, kernels/
 * flags.h's kernel_load). */
int q_gain_forward_cuda(float *y, const float *q, const float *g, int rows, int heads, int head_dim,
                        int flags, cudaStream_t stream, pg_error *err);
int q_gain_backward_cuda(float *dq, float *dg, double *scratch, const float *dy,
                         const uint16_t *dy16, const float *q, const float *g, int rows, int heads,
                         int head_dim, int flags, cudaStream_t stream, pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
