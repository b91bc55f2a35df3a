/* Rotary position embedding, half-split, with the official sign
 * convention: for x = (x1, x2), halves of one head,
 *   y1 = x1 * cos + x2 * sin,   y2 = x1 * (-sin) + x2 * cos.
 * Activations are [B*T, heads * head_dim] (a linear layer's output), the
 * position of row r is r % T. Tables are [T, head_dim / 2].
 *
 * Under KERNEL_BF16 the tables must be bf16 (the official code casts them
 * to q's dtype) and every product and sum is rounded, as eager PyTorch
 * rounds each bf16 op: y1 = bf16(bf16(x1 c) + bf16(x2 s)). */
#ifndef PGOLF_ROPE_H
#define PGOLF_ROPE_H

#include "kernels/flags.h"

/* The tables the official Rotary computes after the model's dtype round
 * trip. GPT(...).bfloat16() casts every buffer, and
 * restore_low_dim_params_to_fp32 restores parameters only, so the official
 * inv_freq buffer is always bf16-rounded:
 *   inv[j] = bf16(1 / base^((2j) / head_dim))          (float32 ops)
 * flags 0 (a float32 module, GPT_FP32): angle t * inv[j] in float32, cos
 *   and sin of it by det_sincosf (correctly rounded but for rare boundary
 *   cases; the same bits on every machine);
 * flags KERNEL_BF16 (GPT_MIXED: the buffer is bf16, so arange, the outer
 *   product, cos and sin run in bf16): t = bf16(t) (exact only up to 256:
 *   the official positions above 256 are quantised), angle
 *   bf16(t * inv[j]), cos and sin rounded to bf16. */
void rope_table(float *cos_t, float *sin_t, int T, int head_dim, float base, int flags);

void rope_forward(float *y, const float *x, const float *cos_t, const float *sin_t, int rows, int T,
                  int heads, int head_dim, int flags);
/* dx1 = dy1 * cos + dy2 * (-sin), dx2 = dy1 * sin + dy2 * cos. */
void rope_backward(float *dx, const float *dy, const float *cos_t, const float *sin_t, int rows,
                   int T, int heads, int head_dim, int flags);

#endif
