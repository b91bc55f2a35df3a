/* Forward and backward of the baseline GPT over a batch of B sequences of
 * T tokens (the official model's forward, composed from kernels/).
 *
 * Precision modes:
 *   GPT_FP32   everything in float32: the reference for exact comparison;
 *   GPT_MIXED  the official rounding points: bf16 token-embedding storage,
 *              bf16 activations and matmul inputs with fp32 accumulation,
 *              fp32 loss; the reference the GPU path will match.
 * Determinism: for the same inputs the results are bit-identical for any
 * OpenMP thread count (every reduction runs in a fixed order). */
#ifndef PGOLF_GPT_H
#define PGOLF_GPT_H

#include <stdint.h>

#include "common/error.h"
#include "trainer/model.h"

typedef enum gpt_precision { GPT_FP32 = 0, GPT_MIXED = 1 } gpt_precision;

/* Activations saved by the forward pass for the backward pass, sized for
 * at most B x T tokens. Opaque. */
typedef struct gpt_acts gpt_acts;

gpt_acts *gpt_acts_new(const gpt_layout *l, int B, int T, pg_error *err);
void gpt_acts_free(gpt_acts *a);

/* From now on, forward and backward on a sum their reductions (the norms,
 * the cross-entropy, the per-channel parameter gradients) by the fixed
 * trees of the CUDA kernels (the kernels' *_tree_ref) instead of in index
 * order: the CPU model the CUDA model (trainer/gpt_cuda.h) equals bit for
 * bit where its products do. Slower; for the tests. */
void gpt_acts_use_tree_refs(gpt_acts *a);

/* Mean cross-entropy (nats) of targets y given inputs x, both B*T token
 * ids (row b is one sequence). nll_out, if not NULL, receives the B*T
 * per-token losses in order. Ids must be < vocab_size. */
float gpt_forward(const gpt_layout *l, const gpt_params *p, gpt_acts *a, const uint16_t *x,
                  const uint16_t *y, int B, int T, gpt_precision prec, float *nll_out);

/* Backward of the last gpt_forward on the same acts: ADDS
 * loss_scale * d(mean loss)/d(param) into grads (a buffer of the same
 * layout, bound with gpt_params_bind), as PyTorch accumulates .grad over
 * micro-steps with (loss * grad_scale).backward(). */
void gpt_backward(const gpt_layout *l, const gpt_params *p, gpt_params *grads, gpt_acts *a,
                  const uint16_t *x, const uint16_t *y, int B, int T, gpt_precision prec,
                  float loss_scale);

/* A saved activation, for tests and diagnostics: name is one of
 * "emb", "x0", "xf", "z" (layer ignored) or, for block `layer`, "x_in",
 * "x_mix", "n1", "q_raw", "k_raw", "v", "q_rope", "q_fin", "k_fin", "att",
 * "attn_out", "x_mid", "n2", "h_pre", "h_act", "mlp_out", "x_out". Sets *n
 * to its number of floats for the last forward's B x T; NULL if unknown. */
const float *gpt_acts_tensor(const gpt_acts *a, const gpt_layout *l, int layer, const char *name,
                             int B, int T, size_t *n);

#endif
