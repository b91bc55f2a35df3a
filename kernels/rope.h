/* Rotary position embedding, half-split, with the official sign
 * convention: for x = (x1, x2), halves of one head,
 *   y1 = x1 * cos + x2 * sin,   y2 = x1 * (-sin) + x2 * cos.
 * Activations are [B*T, heads * head_dim] (a linear layer's output), the
 * position of row r is r % T. Tables are [T, head_dim / 2].
 *
 * Under KERNEL_BF16 the tables must be bf16 (the official code casts them
 * to q's dtype) and every product and sum is rounded, as eager PyTorch
 * rounds each bf16 op: y1 = bf16(bf16(x1 c) + bf16(x2 s)). Under
 * KERNEL_ROUND_OUT alone the forward is float32 and its results are cast
 * to bf16: y1 = bf16(x1 c + x2 s) (F4: k at the attention's cast).
 *
 * Everything here is elementwise: the CUDA twins (rope.cu) compute every
 * table entry and every rotated pair with the shared functions below
 * (det_math_hd.h's exp, log and sincos included), so they equal the CPU
 * kernels bit for bit. */
#ifndef PGOLF_ROPE_H
#define PGOLF_ROPE_H

#include "kernels/bf16.h"
#include "kernels/det_math_hd.h"
#include "kernels/flags.h"
#include "kernels/hd.h"

/* The official inv_freq[j] after the buffer's bf16 round trip:
 * torch.arange(0, dim, 2, float32) / dim, then base ** that, then 1 / it:
 * three float32 operations, each correctly rounded. base ** e is taken as
 * exp(e log base) in double (det_math: relative error ~1e-15, no libm) and
 * rounded once. */
PGOLF_HD float rope_inv_freq(int j, int head_dim, float base) {
  float e = (float)(2 * j) / (float)head_dim;
  float p = (float)det_exp_hd((double)e * det_log_hd((double)base));
  return bf16_round(1.0f / p);
}

/* Table entry (t, j) from inv = rope_inv_freq(j, ...): see rope_table. */
PGOLF_HD void rope_table_entry(float *c, float *s, int t, float inv, int flags) {
  int bf16 = flags & KERNEL_BF16;
  float f = bf16 ? bf16_round(bf16_round((float)t) * inv) : (float)t * inv;
  det_sincosf_hd(f, s, c);
  if (bf16) {
    *c = bf16_round(*c);
    *s = bf16_round(*s);
  }
}

/* One rotated pair of the forward: (y1, y2) from (x1, x2), rounded. */
PGOLF_HD void rope_rotate(float *y1, float *y2, float x1, float x2, float c, float s, int flags) {
  float a = kernel_round(x1 * c, flags), b = kernel_round(x2 * s, flags);
  float e = kernel_round(x1 * -s, flags), f = kernel_round(x2 * c, flags);
  *y1 = kernel_round_out(a + b, flags);
  *y2 = kernel_round_out(e + f, flags);
}

/* One pair of the backward: (dx1, dx2) stored with the flags. */
PGOLF_HD void rope_rotate_back(float *d1, float *d2, float g1, float g2, float c, float s,
                               int flags) {
  float a = kernel_round(g1 * c, flags), b = kernel_round(g2 * -s, flags);
  float e = kernel_round(g1 * s, flags), f = kernel_round(g2 * c, flags);
  kernel_store(d1, a + b, flags);
  kernel_store(d2, e + f, flags);
}

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

/* The CUDA twins: device pointers, grid-stride loops over table entries or
 * rotated pairs, launched on stream; no allocation. y may be x and dx may
 * be dy (each pair is read, then written, by one thread). */
int rope_table_cuda(float *cos_t, float *sin_t, int T, int head_dim, float base, int flags,
                    cudaStream_t stream, pg_error *err);
int rope_forward_cuda(float *y, const float *x, const float *cos_t, const float *sin_t, int rows,
                      int T, int heads, int head_dim, int flags, cudaStream_t stream,
                      pg_error *err);
int rope_backward_cuda(float *dx, const float *dy, const float *cos_t, const float *sin_t, int rows,
                       int T, int heads, int head_dim, int flags, cudaStream_t stream,
                       pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
