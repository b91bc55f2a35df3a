/* Causal scaled-dot-product attention with grouped KV heads, as
 * F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=...)
 * with the default scale 1/sqrt(head_dim). Query head h reads KV head
 * h / (heads / kv_heads).
 *
 * Layout: q and y are [B*T, heads*hd], k and v are [B*T, kv_heads*hd]
 * (token-major, as the projections produce them). The forward saves only
 * lse[b, h, t] = log(sum_j exp(s_tj)) per query row; the backward
 * recomputes the probabilities from it (T = 1024 makes stored
 * probabilities too big).
 *
 * Order: s_tj = dot(q_t, k_j) (d ascending) * scale; the max, the sum of
 * exponentials and y_t = sum_j p_tj v_j run over j ascending. Every sum
 * of products (the dot products, y, dq, dk, dv, D) adds each term by one
 * fused multiply-add (fmaf's rounding; kernels/gemm.h). Backward:
 * D_t = dot(dy_t, y_t); ds_tj = p_tj (dot(dy_t, v_j) - D_t);
 * dq_t = scale * sum_j ds_tj k_j (j ascending, then scaled);
 * dk_j = scale * sum_{h in group} sum_{t >= j} ds_tj q_t and
 * dv_j = sum_{h in group} sum_{t >= j} p_tj dy_t (h, then t ascending).
 * Each output row belongs to one thread (the forward parallelises over
 * (sequence, head) pairs, the backward over (sequence, KV head) pairs):
 * bit-identical for any thread count and any x86-64.
 *
 * KERNEL_BF16: q, k, v, dy are bf16; scores, softmax and sums are float32,
 * and the products' other factors are rounded to bf16 where PyTorch's
 * flash attention kernels (CPU and CUDA) round them: the forward sums
 * bf16(e_tj) v_j with e_tj = exp(s_tj - m_t) unnormalised and divides by
 * l_t after the sum; the backward rounds p_tj and ds_tj before their
 * products. y, dq, dk, dv are rounded to bf16. (On bf16 inputs, T = 128,
 * head_dim 16, PyTorch 2.15's CPU SDPA under autocast agreed bitwise with
 * this forward on 93% of the outputs, with float32 normalised
 * probabilities on 64%, when its exponential was det_expf's.)
 *
 * The exponential: det_expf (correctly rounded) in float32; under
 * KERNEL_BF16 det_expf32_hd (kernels/det_expf32.h: float32 arithmetic
 * alone, within one unit in the last place of det_expf, equal on all but
 * 0.42% of the floats), on the CPU and in the GPU kernels alike, so that
 * the tensor-core attention does no float64 work per pair. */
#ifndef PGOLF_ATTENTION_H
#define PGOLF_ATTENTION_H

#include <math.h>

#include "kernels/flags.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SDPA's default scale, 1/sqrt(head_dim), in float32 (sqrtf is correctly
 * rounded): one definition for the CPU kernels and the GPU launchers. */
static inline float attention_scale(int head_dim) { return 1.0f / sqrtf((float)head_dim); }

void attention_forward(float *y, float *lse, const float *q, const float *k, const float *v, int B,
                       int T, int heads, int kv_heads, int head_dim, int flags);
/* Writes dq, dk, dv (KERNEL_ACCUMULATE is ignored: they are overwritten). */
void attention_backward(float *dq, float *dk, float *dv, const float *dy, const float *y,
                        const float *lse, const float *q, const float *k, const float *v, int B,
                        int T, int heads, int kv_heads, int head_dim, int flags);

/* The plain forward (one thread per query row, scalar dot products). */
void attention_forward_simple(float *y, float *lse, const float *q, const float *k, const float *v,
                              int B, int T, int heads, int kv_heads, int head_dim, int flags);
/* The plain two-pass backward (dq by query rows, then dk and dv by key
 * rows, recomputing the probabilities in each): the definition the
 * parallel version must equal bit for bit (kept for the tests). */
void attention_backward_simple(float *dq, float *dk, float *dv, const float *dy, const float *y,
                               const float *lse, const float *q, const float *k, const float *v,
                               int B, int T, int heads, int kv_heads, int head_dim, int flags);

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

/* The CUDA entry points (kernels/attention.cu): device pointers,
 * launched on stream. In fp32, and wherever the tensor-core kernels below
 * do not apply, the CUDA-core kernels: the same bits as
 * attention_forward_simple and attention_backward_simple. head_dim must be a multiple of 16 up to
 * 128 and q, k, v (and dy) 16-byte aligned (else err, before any launch: the kernels read them a
 * float4 at a time). The backward takes caller-supplied scratch of
 * attention_backward_scratch_bytes (16-byte aligned) and allocates nothing. y16 (may be NULL):
 * y's packed copy (kernels/flags.h), for the output projection. */
int attention_forward_cuda(float *y, uint16_t *y16, float *lse, const float *q, const float *k,
                           const float *v, int B, int T, int heads, int kv_heads, int head_dim,
                           int flags, cudaStream_t stream, pg_error *err);
int attention_backward_cuda(float *dq, float *dk, float *dv, const float *dy, const float *y,
                            const float *lse, const float *q, const float *k, const float *v,
                            float *scratch, int B, int T, int heads, int kv_heads, int head_dim,
                            int flags, cudaStream_t stream, pg_error *err);

/* The tensor-core kernels (kernels/attention_mma.cu), which the two entry
 * points above run instead of the CUDA-core ones when
 * attention_mma_supported(head_dim, flags): KERNEL_BF16 (every product
 * then has two bf16 factors), head_dim 16, 32, 48 or 64, and not
 * KERNEL_CUDA_CORES. The same sums in the same order as the CPU's simple
 * kernels, but a tensor core adds each group of 16 products its own way:
 * on a GPU each output d is within ATTENTION_MMA_TOL of the CPU's c,
 *   |d - c| <= ATTENTION_MMA_TOL * (|c| + rms(c over the tensor)),
 * (a bf16 output can round the other way: one bf16 step is 2^-8 of it,
 * and the backward's sums carry such steps of their terms), and equal run
 * to run; on ci/cuda-emu.sh's stand-in, whose mma is an fmaf chain, equal
 * to the CPU bit for bit. NaN is the one exception to "the CPU's
 * roundings": the probabilities and ds, which are only mma operands, are
 * rounded by bf16_pack2_mma (kernels/bf16.h), whose NaN on a GPU is the
 * hardware's, so an output that is NaN on the CPU is NaN there too, not
 * necessarily the same NaN. The backward takes D[b, h, t] = dot(dy_t, y_t)
 * (attention_backward_cuda computes it in its scratch) and ds, room for
 * every head's matrix ds[j][t] (B * heads * T rows of attention_ds_stride(T)
 * bf16s, 16-byte aligned): the dk/dv kernel stores there the ds it
 * computes, and dq is summed from it, not from a second evaluation of the
 * scores and exponentials. Shapes are checked by the callers above; these
 * check only the head width, the flags and ds's alignment. */
enum { ATTENTION_MMA_HD_MAX = 64 };
#define ATTENTION_MMA_TOL (1.0 / 128)
int attention_mma_supported(int head_dim, int flags);

/* ds's row stride: T rounded up to 8 bf16s, so each row starts 16-byte
 * aligned (its tiles are copied 16 bytes at a time). */
static inline size_t attention_ds_stride(int T) { return ((size_t)T + 7) / 8 * 8; }

/* The backward's scratch: D's B * heads * T floats, rounded up to 16
 * bytes (where ds starts), then, where the tensor-core kernels run, ds
 * (above): at the baseline's micro-batch (64 sequences of 1,024, 8 heads)
 * 1.07 GB, half of it causal pairs. */
static inline size_t attention_d_bytes(int B, int T, int heads) {
  return ((size_t)B * (size_t)heads * (size_t)T * sizeof(float) + 15) / 16 * 16;
}
static inline size_t attention_backward_scratch_bytes(int B, int T, int heads, int head_dim,
                                                      int flags) {
  const size_t rows = (size_t)B * (size_t)heads * (size_t)T;
  return attention_d_bytes(B, T, heads) +
         (attention_mma_supported(head_dim, flags) ? rows * attention_ds_stride(T) * 2 : 0);
}

/* ds's place in that scratch. */
static inline uint16_t *attention_ds_scratch(float *scratch, int B, int T, int heads) {
  return (uint16_t *)((char *)scratch + attention_d_bytes(B, T, heads));
}
int attention_mma_forward_cuda(float *y, uint16_t *y16, float *lse, const float *q, const float *k,
                               const float *v, int B, int T, int heads, int kv_heads, int head_dim,
                               int flags, cudaStream_t stream, pg_error *err);
int attention_mma_backward_cuda(float *dq, float *dk, float *dv, uint16_t *ds, const float *dy,
                                const float *D, const float *lse, const float *q, const float *k,
                                const float *v, int B, int T, int heads, int kv_heads, int head_dim,
                                int flags, cudaStream_t stream, pg_error *err);
/* The same kernels reading packed operands (bf16 arrays; see below). */
int attention_mma_forward16_cuda(float *y, uint16_t *y16, float *lse, const uint16_t *q,
                                 const uint16_t *k, const uint16_t *v, int B, int T, int heads,
                                 int kv_heads, int head_dim, int flags, cudaStream_t stream,
                                 pg_error *err);
int attention_mma_backward16_cuda(uint16_t *dq, uint16_t *dk, uint16_t *dv, uint16_t *ds,
                                  const uint16_t *dy, const float *D, const float *lse,
                                  const uint16_t *q, const uint16_t *k, const uint16_t *v, int B,
                                  int T, int heads, int kv_heads, int head_dim, int flags,
                                  cudaStream_t stream, pg_error *err);

/* Attention with packed operands, where the tensor-core kernels apply
 * (attention_mma_supported; else refused): q, k, v, and for the backward
 * dy and y, as bf16 arrays, as qk_norm, the GEMMs and the forward's
 * packed copy leave them (q, k, v and dy 16-byte aligned: the kernels
 * copy them to shared memory 16 bytes at a time; y 8). The kernels stage bf16s
 * either way, and the row dots take the same floats in the same order,
 * so the results are the float entry points' bits on the same values.
 * The forward's y may be NULL where y16 is given. The backward's dq, dk
 * and dv are packed too (8-byte aligned): B4's bf16 gradients, each the
 * float entry point's value (every one rounded to bf16 before it is
 * stored), where their readers (qk_norm's and q_gain's backwards, the
 * GEMMs) read them. */
int attention_forward_packed_cuda(float *y, uint16_t *y16, float *lse, const uint16_t *q,
                                  const uint16_t *k, const uint16_t *v, int B, int T, int heads,
                                  int kv_heads, int head_dim, int flags, cudaStream_t stream,
                                  pg_error *err);
int attention_backward_packed_cuda(uint16_t *dq, uint16_t *dk, uint16_t *dv, const uint16_t *dy,
                                   const uint16_t *y, const float *lse, const uint16_t *q,
                                   const uint16_t *k, const uint16_t *v, float *scratch, int B,
                                   int T, int heads, int kv_heads, int head_dim, int flags,
                                   cudaStream_t stream, pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
