/* Matrix multiply of a linear layer without bias, as F.linear:
 *   y[n, o] = sum_i x[n, i] * w[o, i]        (y = x W^T, W is [out, in])
 * and its backward
 *   dx[n, i] = sum_o dy[n, o] * w[o, i]
 *   dw[o, i] = sum_n dy[n, o] * x[n, i].
 * Every output element is one float32 sum taken by one thread in index
 * order (i, o or n ascending, starting from 0), so the result is the same
 * bits for any thread count and any tiling: the blocked kernels only
 * change which outputs are computed together, never a sum's order.
 * Flags (kernels/flags.h): KERNEL_BF16 rounds each finished sum (bf16
 * matmul output with float32 accumulation; inputs must already be bf16);
 * KERNEL_ACCUMULATE / KERNEL_OUT_FP32 add into the destination. */
#ifndef PGOLF_MATMUL_H
#define PGOLF_MATMUL_H

#include "kernels/flags.h"

void matmul_forward(float *y, const float *x, const float *w, int n, int in, int out, int flags);
void matmul_backward_input(float *dx, const float *dy, const float *w, int n, int in, int out,
                           int flags);
void matmul_backward_weight(float *dw, const float *dy, const float *x, int n, int in, int out,
                            int flags);

/* For tests: which micro-kernel the blocked kernels use. 0: the widest the
 * CPU supports (default); 1: baseline x86-64 (SSE2); 2: AVX2 if supported.
 * All give the same bits. */
void matmul_select_kernel(int which);

/* The plain triple loops the blocked kernels must equal bit for bit (kept
 * for the tests). */
void matmul_forward_simple(float *y, const float *x, const float *w, int n, int in, int out,
                           int flags);
void matmul_backward_input_simple(float *dx, const float *dy, const float *w, int n, int in,
                                  int out, int flags);
void matmul_backward_weight_simple(float *dw, const float *dy, const float *x, int n, int in,
                                   int out, int flags);

#endif
