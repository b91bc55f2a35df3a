/* The per-head query gain, as the official q * q_gain[None, :, None, None]:
 *   y[n, h, :] = q[n, h, :] * g[h]        (q is [rows, heads * head_dim])
 * Backward: dq = dy * g (stored with the flags; dq may alias dy);
 * dg[h] += sum over rows n, then d, of dy * q (float32 parameter gradient:
 * float64 sum in that order, one thread per head, rounded once).
 * KERNEL_BF16: y = bf16(q bf16(g)); dq = bf16(dy bf16(g));
 * dg += bf16(sum bf16(dy q)). */
#ifndef PGOLF_Q_GAIN_H
#define PGOLF_Q_GAIN_H

#include "kernels/flags.h"

void q_gain_forward(float *y, const float *q, const float *g, int rows, int heads, int head_dim,
                    int flags);
void q_gain_backward(float *dq, float *dg, const float *dy, const float *q, const float *g,
                     int rows, int heads, int head_dim, int flags);

#endif
