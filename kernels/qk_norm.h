/* The attention's q and k between their projections and the attention,
 * as the official block computes them per head of head_dim:
 *   q = F.rms_norm(q, (head_dim,)); q = apply_rotary_emb(q, cos, sin);
 *   q = q * q_gain[None, :, None, None]          (q only; k stops at RoPE)
 * one op here: RMSNorm of each head's row (float32, rmsnorm.h with flags
 * 0), RoPE of the normalised row (rope.h, float32), then for q the
 * head's gain (q_gain.h). Activations are [rows, heads * head_dim] (row r
 * at position r % T); a head's row is contiguous, head row i = r * heads
 * + h. The flags apply to the last op's stored result: KERNEL_ROUND_OUT is
 * F4's cast of q and k to bf16 at the attention.
 * Forward outputs: rstd per head row (the norm's, for the backward); rope,
 * q's rotated rows before the gain (q_gain's backward reads them; may be
 * NULL; meaningless without a gain); fin, what the attention reads.
 * Backward: dx = the norm's backward of the rotation's backward of dy g
 * (of dy without a gain), the intermediate gradients float32 as gpt.c
 * computes them, dx stored with the flags (KERNEL_BF16: B4's rounding of
 * the norm's input gradient). The gain's own gradient is q_gain's
 * (q_gain_backward with dq NULL), which reads dy and rope.
 *
 * The CPU functions are the three kernels in turn, through caller
 * scratch (the norm's sums in index order, or by the GPU's tree with
 * KERNEL_TREE): the definition. The CUDA twins (qk_norm.cu) fuse them,
 * one warp per head row with rmsnorm_warp.h's tree and every element by
 * the same shared functions, so they equal the CPU functions under
 * KERNEL_TREE bit for bit, and the passes between the three kernels (the
 * normalised rows, the rotated gradient) never reach memory. */
#ifndef PGOLF_QK_NORM_H
#define PGOLF_QK_NORM_H

#include <stdint.h>

#include "kernels/flags.h"

/* The widest head row the CUDA twins take: the backward holds a row of
 * gradients per warp in shared memory. */
enum { QK_NORM_HD_MAX = 256 };

#ifdef __cplusplus
extern "C" {
#endif

/* scratch: rows * heads * head_dim floats (the normalised rows); it may
 * be none of the outputs. gain NULL: k (fin is the rotated rows). */
void qk_norm_forward(float *rope, float *fin, float *rstd, const float *x, const float *gain,
                     const float *cos_t, const float *sin_t, int rows, int T, int heads,
                     int head_dim, int flags, float *scratch);
/* scratch: rows * heads * head_dim floats; it may be dy, and dx may be dy
 * or scratch (the trainer does all three in place). */
void qk_norm_backward(float *dx, const float *dy, const float *x, const float *rstd,
                      const float *gain, const float *cos_t, const float *sin_t, int rows, int T,
                      int heads, int head_dim, int flags, float *scratch);

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

/* The CUDA twins: device pointers, one warp per head row, launched on
 * stream; no scratch, no allocation. x comes as floats or packed (x or
 * x16, exactly one: the bf16 projection's output where its GEMM left it,
 * kernels/flags.h's kernel_load), and so does dy (dy or dy16: the
 * tensor-core attention's packed dq and dk). fin16 and dx16 (may be
 * NULL): packed copies of fin (with KERNEL_ROUND_OUT: F4's cast, for the
 * tensor-core attention) and dx; fin, and dx when not accumulating, may
 * then be NULL. dx may be dy, and dx16 dy16 (in place). An odd head_dim,
 * or one past QK_NORM_HD_MAX, is refused. */
int qk_norm_forward_cuda(float *rope, float *fin, uint16_t *fin16, float *rstd, const float *x,
                         const uint16_t *x16, const float *gain, const float *cos_t,
                         const float *sin_t, int rows, int T, int heads, int head_dim, int flags,
                         cudaStream_t stream, pg_error *err);
int qk_norm_backward_cuda(float *dx, uint16_t *dx16, const float *dy, const uint16_t *dy16,
                          const float *x, const uint16_t *x16, const float *rstd, const float *gain,
                          const float *cos_t, const float *sin_t, int rows, int T, int heads,
                          int head_dim, int flags, cudaStream_t stream, pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
