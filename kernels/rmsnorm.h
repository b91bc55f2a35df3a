/* RMSNorm without weight over the last dimension, as F.rms_norm(x, (d,))
 * with eps=None: y = x * rstd, rstd = 1 / sqrt(mean(x^2) + eps), eps the
 * float32 machine epsilon (PyTorch uses the epsilon of the op-math type,
 * float32 also for bf16 input). Every row is normalised by one thread; the
 * sum of squares runs in index order in float32.
 *
 * Under KERNEL_BF16 the input is bf16, the arithmetic is float32 (PyTorch
 * upcasts) and y is rounded to bf16; in backward dx is rounded. rstd is
 * saved in float32 for the backward. */
#ifndef PGOLF_RMSNORM_H
#define PGOLF_RMSNORM_H

#include "kernels/flags.h"

void rmsnorm_forward(float *y, float *rstd, const float *x, int rows, int d, int flags);
/* dx = rstd * dy - x * rstd^3 * dot(dy, x) / d (flags: KERNEL_BF16, KERNEL_ACCUMULATE). */
void rmsnorm_backward(float *dx, const float *dy, const float *x, const float *rstd, int rows,
                      int d, int flags);

#endif
