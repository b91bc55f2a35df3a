/* The official script's starting parameters, bit for bit, and their hash.
 *
 * gpt_init_params redoes, for a seed, what the official train_gpt.py does
 * between torch.manual_seed(seed) and the first training step:
 *   1. GPT(...) construction, which draws from PyTorch's CPU generator in
 *      module-construction order: nn.Embedding's reset (tok_emb normal_(0,1)),
 *      then per block c_q, c_k, c_v, attn.proj, mlp.fc, mlp.proj, each
 *      nn.Linear's default kaiming_uniform_(a=sqrt(5)) (no biases); the
 *      scales, mixes, q_gain and skip_weights are constants and draw nothing;
 *   2. GPT._init_weights: tok_emb normal_(0, tied_embed_init_std), then
 *      zeros on the _zero_init projections (attn.proj, mlp.proj);
 *   3. the dtype round trip of main(): .bfloat16() on the whole model, the
 *      CastedLinear weights and the low-dim/control tensors back to float32,
 *      tok_emb.weight left in bf16. Every value is therefore bf16-rounded
 *      (round to nearest even); the flat buffer holds them as float32.
 * The result is what the official training loop starts from, for the same
 * seed, on any machine (see trainer/torch_init.h for the one PyTorch
 * configuration whose normal_ differs: ATEN_CPU_CAPABILITY=default).
 *
 * predicate.init.sha256 is SHA-256 over the flat buffer as float32
 * little-endian, which is the official state_dict tensors (tok_emb as
 * float32) concatenated in state_dict order. Checked against the official
 * code by golden/init.json (tests/test_torch_init.c). */
#ifndef PGOLF_MODEL_INIT_H
#define PGOLF_MODEL_INIT_H

#include <jansson.h>
#include <stdint.h>

#include "common/error.h"
#include "common/sha256.h"
#include "trainer/model.h"

/* Fill flat (l->n_params floats) with the official starting parameters. */
int gpt_init_params(const gpt_layout *l, float *flat, uint64_t seed, pg_error *err);

/* SHA-256 of n floats as little-endian float32 bytes (any host order). */
void gpt_floats_sha256(const float *x, size_t n, uint8_t out[SHA256_LEN]);
/* predicate.init.sha256: the whole flat buffer. */
void gpt_params_sha256(const gpt_layout *l, const float *flat, uint8_t out[SHA256_LEN]);
/* One tensor's values (for locating a difference). */
void gpt_tensor_sha256(const gpt_tensor *t, const float *flat, uint8_t out[SHA256_LEN]);

/* predicate.init as JSON: {"sha256": hex, "tensors": [{"name": ..,
 * "shape": [..]}, ...]} in state_dict order; shapes as PyTorch reports them
 * ([n] for vectors, [rows, cols] for matrices). NULL on allocation failure. */
json_t *gpt_init_predicate_json(const gpt_layout *l, const float *flat);

#endif
