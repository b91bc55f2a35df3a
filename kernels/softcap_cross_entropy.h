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
 * (KERNEL_BF16: dlogit, dth, du, dz each rounded; dz = bf16(du * (1/cap))). */
#ifndef PGOLF_SOFTCAP_CROSS_ENTROPY_H
#define PGOLF_SOFTCAP_CROSS_ENTROPY_H

#include <stdint.h>

#include "kernels/flags.h"

/* Returns the mean loss; nll may be NULL. */
float softcap_cross_entropy_forward(float *th, float *lse, float *nll, const float *z,
                                    const uint16_t *y, int N, int V, float cap, int flags);
void softcap_cross_entropy_backward(float *dz, const float *th, const float *lse,
                                    const uint16_t *y, int N, int V, float cap, float g,
                                    int flags);

#endif
