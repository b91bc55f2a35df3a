/* A scaled residual add with a per-channel vector, as the official
 *   x = x + attn_scale * attn_out;  x = x + mlp_scale * mlp_out;
 *   x = x + skip_weights[i] * skip
 *   out = x + s * y        (s is [D], rows of D channels)
 *
 * Backward: dx = dout (the caller keeps the stream gradient as is);
 * dy = dout * s, stored with the flags (KERNEL_ACCUMULATE adds);
 * ds[c] += sum_n dout[n,c] * y[n,c] (float32 parameter gradient: float64
 * sum in ascending n, one thread per channel, rounded once).
 *
 * KERNEL_BF16: out = bf16(x + bf16(bf16(s) y)); dy = bf16(dout bf16(s));
 * ds += bf16(sum_n bf16(dout y)). out may alias x. */
#ifndef PGOLF_SCALE_ADD_H
#define PGOLF_SCALE_ADD_H

#include "kernels/flags.h"

void scale_add_forward(float *out, const float *x, const float *s, const float *y, int rows, int d,
                       int flags);
void scale_add_backward(float *dy, float *ds, const float *dout, const float *s, const float *y,
                        int rows, int d, int flags);

#endif
