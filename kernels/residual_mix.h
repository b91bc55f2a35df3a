/* The block's input mix, as the official Block:
 *   out = mix[0] * x + mix[1] * x0        (per channel, mix is [2, D])
 * x is the residual stream, x0 the normalised embedding.
 *
 * Backward: dx = dout * mix[0] (overwritten; dx may alias dout),
 * dx0 += dout * mix[1] (accumulated: x0 feeds every block),
 * dmix[k][c] += sum_n dout[n,c] * (x or x0)[n,c] (a float32 parameter
 * gradient: the sum over rows runs in float64 in ascending n, one thread
 * per channel, then rounds to float32).
 *
 * KERNEL_BF16 (mix.to(bf16), one rounding per eager op):
 *   out = bf16(bf16(m0 x) + bf16(m1 x0)), m = bf16(mix);
 *   dx = bf16(dout m0); dx0 = bf16(dx0 + bf16(dout m1));
 *   dmix += bf16(sum_n bf16(dout x)). */
#ifndef PGOLF_RESIDUAL_MIX_H
#define PGOLF_RESIDUAL_MIX_H

#include "kernels/flags.h"

void residual_mix_forward(float *out, const float *x, const float *x0, const float *mix, int rows,
                          int d, int flags);
void residual_mix_backward(float *dx, float *dx0, float *dmix, const float *dout, const float *x,
                           const float *x0, const float *mix, int rows, int d, int flags);

#endif
