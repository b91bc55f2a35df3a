/* Logit soft-cap and mean cross-entropy, as the official
 *   logits = cap * tanh(z / cap); F.cross_entropy(logits.float(), y)
 * over N rows of V logits z (the tied head's output).
 *
 * Forward saves th = tanh(z / cap) [N, V] and lse [N] (the log-sum-exp of
 * the capped row); nll[r] = lse[r] - logit[r, y[r]]. The mean is summed in
 * float64 in row order and rounded once.
 *
 * fp32 (PyTorch CPU): u = z / cap, th = tanh(u), logit = cap * th.
 * tanh, exp and log are kernels/det_math.h's (correctly rounded but for
 * rare boundary cases, the same bits on every machine).
 * KERNEL_BF16 (PyTorch CUDA under autocast, z bf16): division by a scalar
 * is a multiplication by its float32 reciprocal, and each op rounds:
 *   u = bf16(z * (1/cap)), th = bf16(tanh(u)), logit = bf16(cap * th);
 * the cross-entropy then runs in float32 on the bf16 values.
 *
 * Backward, with w = g / N (g the gradient of the mean loss):
 *   dlogit = p * w - [i == y] * w, p = exp(logit - lse)
 *   dth = dlogit * cap; du = dth * (1 - th*th); dz = du / cap
 * (KERNEL_BF16: dlogit, dth, du, dz each rounded; dz = bf16(du * (1/cap))).
 *
 * The CUDA twin (softcap_cross_entropy.cu) computes every element with the
 * shared functions below and det_math_hd.h (the CPU kernel's det_math
 * array calls give the same bits). The backward is elementwise and equals
 * the CPU kernel bit for bit. The forward reduces: per row (one block of
 * TREE_LANES threads) the max and the sum of exp(logit - max) go through
 * the fixed tree of kernels/reduce_tree.h in float32, and the mean over
 * rows through the same tree in float64 (lane k sums rows k, k + 256, ...);
 * softcap_cross_entropy_forward_tree_ref computes those trees, and the GPU
 * must equal it bit for bit (th equals the CPU kernel's exactly: no sum
 * feeds it). */
#ifndef PGOLF_SOFTCAP_CROSS_ENTROPY_H
#define PGOLF_SOFTCAP_CROSS_ENTROPY_H

#include <stdint.h>

#include "kernels/bf16.h"
#include "kernels/det_math_hd.h"
#include "kernels/flags.h"
#include "kernels/hd.h"

/* u = z / cap (fp32), bf16(z * (1/cap)) under KERNEL_BF16; inv_cap is
 * 1.0f / cap. */
PGOLF_HD float softcap_u(float z, float cap, float inv_cap, int flags) {
  return (flags & KERNEL_BF16) ? bf16_round(z * inv_cap) : z / cap;
}

/* th = tanh(u), rounded under KERNEL_BF16 (the CPU kernel takes tanh from
 * det_tanhf_array: the same bits). */
PGOLF_HD float softcap_th(float u, int flags) { return kernel_round(det_tanhf_hd(u), flags); }

/* The capped logit cap * th, rounded under KERNEL_BF16. */
PGOLF_HD float softcap_logit(float th, float cap, int flags) {
  return kernel_round(cap * th, flags);
}

/* dz for one element before kernel_store, from p = exp(logit - lse),
 * target = (i == y[r]), w = g / N. */
PGOLF_HD float softcap_dz(float p, int target, float w, float th, float cap, float inv_cap,
                          int flags) {
  float dl = kernel_round(target ? p * w - w : p * w, flags);
  float dth = kernel_round(dl * cap, flags);
  float du = kernel_round(dth * (1.0f - th * th), flags);
  return (flags & KERNEL_BF16) ? du * inv_cap : du / cap;
}

#ifdef __cplusplus
extern "C" {
#endif

/* Returns the mean loss; nll may be NULL. */
float softcap_cross_entropy_forward(float *th, float *lse, float *nll, const float *z,
                                    const uint16_t *y, int N, int V, float cap, int flags);
void softcap_cross_entropy_backward(float *dz, const float *th, const float *lse,
                                    const uint16_t *y, int N, int V, float cap, float g,
                                    int flags);

/* The forward by the GPU's trees (row max, row sum of exp, mean over
 * rows); nll may be NULL. */
float softcap_cross_entropy_forward_tree_ref(float *th, float *lse, float *nll, const float *z,
                                             const uint16_t *y, int N, int V, float cap, int flags);

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

/* The CUDA twins: device pointers, launched on stream; no allocation. The
 * forward writes th, lse, nll (required: the mean is summed from it) and
 * the mean loss into *loss (one float on the device); one block per row,
 * then one block for the mean. Under KERNEL_BF16 z may come packed (z16
 * instead of z: the head's bf16 product where its GEMM left it) and th
 * may be written packed (th16, beside or instead of th: every th is a
 * bf16 then); the backward reads th as either. */
int softcap_cross_entropy_forward_cuda(float *th, uint16_t *th16, float *lse, float *nll,
                                       float *loss, const float *z, const uint16_t *z16,
                                       const uint16_t *y, int N, int V, float cap, int flags,
                                       cudaStream_t stream, pg_error *err);
/* dz16 (may be NULL): dz's packed copy (kernels/flags.h), for the head's
 * two products; with it dz may be NULL (not with KERNEL_ACCUMULATE). */
int softcap_cross_entropy_backward_cuda(float *dz, uint16_t *dz16, const float *th,
                                        const uint16_t *th16, const float *lse, const uint16_t *y,
                                        int N, int V, float cap, float g, int flags,
                                        cudaStream_t stream, pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
