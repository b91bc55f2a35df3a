/* See model_init.h: the official initialisation, in the official order. */
#include "trainer/model_init.h"

#include <string.h>

#include "kernels/bf16.h"
#include "trainer/torch_init.h"

static void fill(float *x, size_t n, float v) {
  for (size_t i = 0; i < n; i++) x[i] = v;
}

/* Draw one block's Linear weights in construction order. attn.proj and
 * mlp.proj are drawn too (the generator advances) and zeroed later by
 * _init_weights, as in the official model. */
static void draw_block_linears(torch_rng *g, const gpt_layout *l, const gpt_block_params *b) {
  const int D = l->cfg.model_dim;
  torch_kaiming_uniform_linear(g, b->c_q, D, D);
  torch_kaiming_uniform_linear(g, b->c_k, l->kv_dim, D);
  torch_kaiming_uniform_linear(g, b->c_v, l->kv_dim, D);
  torch_kaiming_uniform_linear(g, b->attn_proj, D, D);
  torch_kaiming_uniform_linear(g, b->fc, l->hidden, D);
  torch_kaiming_uniform_linear(g, b->mlp_proj, D, l->hidden);
}

static void set_block_constants(const gpt_layout *l, const gpt_block_params *b) {
  const int D = l->cfg.model_dim;
  fill(b->attn_scale, (size_t)D, 1.0f);
  fill(b->mlp_scale, (size_t)D, 1.0f);
  fill(b->resid_mix, (size_t)D, 1.0f); /* row 0: the stream */
  fill(b->resid_mix + D, (size_t)D, 0.0f); /* row 1: the embedding output */
  fill(b->q_gain, (size_t)l->cfg.num_heads, l->cfg.qk_gain_init);
}

int gpt_init_params(const gpt_layout *l, float *flat, uint64_t seed, pg_error *err) {
  if (!l || !flat || !l->tensors) return pg_fail(err, "init", -1, "no layout or buffer");
  if (!(l->cfg.tied_embed_init_std >= 0.0f))
    return pg_fail(err, "config", -1, "tied_embed_init_std must be >= 0");
  gpt_params p;
  gpt_params_bind(&p, l, flat);
  const size_t emb_n = (size_t)l->cfg.vocab_size * (size_t)l->cfg.model_dim;
  torch_rng g;
  torch_rng_seed(&g, seed);

  /* GPT.__init__: nn.Embedding reset, skip_weights, then the blocks. */
  torch_normal_f32(&g, p.tok_emb, emb_n, 0.0, 1.0);
  fill(p.skip_weights, (size_t)l->num_skip * (size_t)l->cfg.model_dim, 1.0f);
  for (int i = 0; i < l->cfg.num_layers; i++) {
    draw_block_linears(&g, l, &p.blocks[i]);
    set_block_constants(l, &p.blocks[i]);
  }

  /* GPT._init_weights. Official std is a Python float; the config keeps
   * it as float32. The >= 16-element normal_ rounds std to float32 first,
   * so the widened float gives the same values; only the < 16-element path
   * (vocab_size * model_dim < 16) would use the double itself. */
  torch_normal_f32(&g, p.tok_emb, emb_n, 0.0, (double)l->cfg.tied_embed_init_std);
  for (int i = 0; i < l->cfg.num_layers; i++) {
    memset(p.blocks[i].attn_proj, 0, (size_t)l->cfg.model_dim * l->cfg.model_dim * sizeof(float));
    memset(p.blocks[i].mlp_proj, 0, (size_t)l->cfg.model_dim * l->hidden * sizeof(float));
  }
  gpt_params_free(&p);

  /* main(): .bfloat16(), then float32 again for everything but tok_emb.
   * Either way every value passes through bf16 once. */
  bf16_round_array(flat, l->n_params);
  return 0;
}

void gpt_floats_sha256(const float *x, size_t n, uint8_t out[SHA256_LEN]) {
  sha256_ctx *c = sha256_new();
  uint8_t buf[4096];
  size_t used = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &x[i], sizeof u);
    buf[used++] = (uint8_t)u;
    buf[used++] = (uint8_t)(u >> 8);
    buf[used++] = (uint8_t)(u >> 16);
    buf[used++] = (uint8_t)(u >> 24);
    if (used == sizeof buf) {
      sha256_update(c, buf, used);
      used = 0;
    }
  }
  sha256_update(c, buf, used);
  sha256_final(c, out);
  sha256_free(c);
}

void gpt_params_sha256(const gpt_layout *l, const float *flat, uint8_t out[SHA256_LEN]) {
  gpt_floats_sha256(flat, l->n_params, out);
}

void gpt_tensor_sha256(const gpt_tensor *t, const float *flat, uint8_t out[SHA256_LEN]) {
  gpt_floats_sha256(flat + t->offset, t->numel, out);
}

static json_t *tensor_json(const gpt_tensor *t) {
  json_t *shape = t->ndim == 1 ? json_pack("[i]", t->cols) : json_pack("[ii]", t->rows, t->cols);
  if (!shape) return NULL;
  return json_pack("{s:s, s:o}", "name", t->name, "shape", shape);
}

json_t *gpt_init_predicate_json(const gpt_layout *l, const float *flat) {
  uint8_t d[SHA256_LEN];
  char hex[SHA256_HEX_LEN + 1];
  gpt_params_sha256(l, flat, d);
  sha256_hex(d, hex);
  json_t *tensors = json_array();
  if (!tensors) return NULL;
  for (int i = 0; i < l->n_tensors; i++) {
    json_t *t = tensor_json(&l->tensors[i]);
    if (!t || json_array_append_new(tensors, t)) {
      json_decref(tensors);
      return NULL;
    }
  }
  return json_pack("{s:s, s:o}", "sha256", hex, "tensors", tensors);
}
