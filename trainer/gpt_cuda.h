/* The GPT's forward and backward on one GPU: trainer/gpt.c's sequence of
 * operations, each by its CUDA twin (kernels/<op>.cu), on device memory,
 * one stream, no allocation after gpt_cuda_new.
 *
 * Bits: every non-GEMM kernel equals its CPU reference (the CPU kernel, or
 * its *_tree_ref where the GPU sums by a tree), so with the CPU's products
 * the whole model equals gpt_forward/gpt_backward on acts set to
 * gpt_acts_use_tree_refs, bit for bit: the CPU stand-in of ci/cuda-emu.sh
 * (whose matmul is the CPU kernel) checks exactly that. On a GPU the
 * products are cuBLASLt's (kernels/matmul.h), bitwise run to run and
 * within its tolerance of the CPU.
 *
 * Precision as gpt.h: GPT_FP32, or GPT_MIXED with the official rounding
 * points; under GPT_MIXED the GEMMs read bf16 operands (the parameters'
 * bf16 copy; activations packed by the kernels that make them) and write
 * bf16 results, which the kernels that read them take packed or which
 * are unpacked to the float32 activations gpt.c keeps (gpt_cuda.c). */
#ifndef PGOLF_GPT_CUDA_H
#define PGOLF_GPT_CUDA_H

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <jansson.h>
#include <stdint.h>

#include "common/error.h"
#include "kernels/matmul.h"
#include "trainer/gpt.h"

typedef struct gpt_cuda gpt_cuda;

/* Device state for batches of B x T tokens: parameters, gradients,
 * activations and scratch, and a cuBLASLt context, on the current device,
 * working on stream. Fails with "no CUDA device: ..." where there is none. */
int gpt_cuda_new(gpt_cuda **out, const gpt_layout *l, int B, int T, gpt_precision prec,
                 cudaStream_t stream, pg_error *err);
void gpt_cuda_free(gpt_cuda *g);

/* The shape of the forwards and backwards from now on: B x T within
 * gpt_cuda_new's (which is the shape until this is called). The
 * sequences' bits do not depend on it: each is computed alone, by the
 * same kernels, as gpt_forward computes a smaller batch in its acts
 * (pgolf eval's short last batch and its first sliding windows). */
int gpt_cuda_set_shape(gpt_cuda *g, int B, int T, pg_error *err);

/* The device's flat parameter and gradient buffers (l->n_params floats
 * each, gpt_params_bind's layout). */
float *gpt_cuda_params(gpt_cuda *g);
float *gpt_cuda_grads(gpt_cuda *g);

/* Forward of host token ids x, y (B*T each): the mean loss into *loss
 * (waits for the stream). */
int gpt_cuda_forward(gpt_cuda *g, const uint16_t *x, const uint16_t *y, float *loss,
                     pg_error *err);

/* The same from device ids (x then y, B*T each), the mean loss written to
 * the device float *loss, nothing waited for: a trainer that stages its
 * batches itself overlaps the copy of the next with this one. ids must
 * stay unchanged until the backward of this forward has run. */
int gpt_cuda_forward_ids(gpt_cuda *g, const uint16_t *ids, float *loss, pg_error *err);

/* The device's B*T per-token losses of the last forward, in token order
 * (sequence after sequence): what the mean it wrote was taken over. */
const float *gpt_cuda_token_losses(const gpt_cuda *g);

/* Row `row` of the last forward's logits (vocab_size floats, the tied
 * head's output before the softcap; what a probe's distribution is
 * computed from) into host memory, waiting for the stream. In mixed
 * precision the logits are bf16 values, kept packed; the row's floats are
 * exactly those. */
int gpt_cuda_logits_row(gpt_cuda *g, size_t row, float *out, pg_error *err);

/* Backward of the last forward: ADDS loss_scale * d(mean loss)/d(param)
 * into the gradients, as gpt_backward does. Queued on the stream. */
int gpt_cuda_backward(gpt_cuda *g, float loss_scale, pg_error *err);

/* The cuBLASLt context the model's products use (the optimizer shares it:
 * one workspace, one set of plans). */
matmul_cuda_ctx *gpt_cuda_matmul(gpt_cuda *g);

/* cuBLASLt's plans so far (kernels/matmul.h), for the run manifest. */
json_t *gpt_cuda_plans_json(const gpt_cuda *g);

/* Which attention kernels the model runs (kernels/attention.h):
 * "tensor_cores" (mixed precision, head_dim up to 64) or "cuda_cores".
 * The manifest records it: the two paths give different bits. */
const char *gpt_cuda_attention_kind(const gpt_cuda *g);
#endif

#endif
