/* The challenge's baseline GPT: configuration, presets, and the parameters
 * in one flat float32 allocation addressed through a struct.
 *
 * The flat order is the official script's state_dict order, so the SHA-256
 * of the flat buffer (float32 little-endian) is comparable with any
 * implementation that hashes the state_dict tensors in order:
 *   skip_weights [S, D]                     S = min(L/2, L - L/2)
 *   tok_emb.weight [V, D]
 *   for each block i:
 *     blocks.i.attn_scale [D]
 *     blocks.i.mlp_scale [D]
 *     blocks.i.resid_mix [2, D]
 *     blocks.i.attn.q_gain [H]
 *     blocks.i.attn.c_q.weight [D, D]
 *     blocks.i.attn.c_k.weight [KV*hd, D]
 *     blocks.i.attn.c_v.weight [KV*hd, D]
 *     blocks.i.attn.proj.weight [D, D]
 *     blocks.i.mlp.fc.weight [M*D, D]
 *     blocks.i.mlp.proj.weight [D, M*D]
 * (PyTorch lists a module's own parameters before its children's; the
 * golden init file checks this order against the official code.)
 * Linear weights are [out, in], row-major, as PyTorch stores them. */
#ifndef PGOLF_MODEL_H
#define PGOLF_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef struct gpt_config {
  int vocab_size;
  int num_layers;
  int model_dim;
  int num_heads;
  int num_kv_heads;
  int mlp_mult;
  int seq_len;
  float rope_base;           /* 10000 */
  float logit_softcap;       /* 30 */
  float qk_gain_init;        /* 1.5 */
  float tied_embed_init_std; /* 0.005 */
} gpt_config;

/* Which optimizer and learning rate a tensor gets (the official split). */
typedef enum gpt_param_group {
  GPT_GROUP_EMBED,  /* tok_emb.weight: Adam, tied_embed_lr */
  GPT_GROUP_MATRIX, /* 2-D block matrices: Muon, matrix_lr */
  GPT_GROUP_SCALAR, /* vectors, control tensors, skip_weights: Adam, scalar_lr */
} gpt_param_group;

typedef struct gpt_tensor {
  char name[48];    /* official state_dict name */
  int ndim;         /* 1 or 2 */
  int rows, cols;   /* shape; for ndim 1, rows = 1 and cols = numel */
  size_t offset;    /* in floats, into the flat buffer */
  size_t numel;
  gpt_param_group group;
  int is_control;   /* name matches the official CONTROL_TENSOR_NAME_PATTERNS */
} gpt_tensor;

typedef struct gpt_block_params {
  float *attn_scale, *mlp_scale, *resid_mix, *q_gain;
  float *c_q, *c_k, *c_v, *attn_proj, *fc, *mlp_proj;
} gpt_block_params;

/* Pointers into one flat buffer (params, or grads with the same layout). */
typedef struct gpt_params {
  float *skip_weights;
  float *tok_emb;
  gpt_block_params *blocks; /* num_layers entries */
} gpt_params;

typedef struct gpt_layout {
  gpt_config cfg;
  int head_dim, kv_dim, hidden, num_encoder, num_decoder, num_skip;
  size_t n_params;
  gpt_tensor *tensors; /* official order */
  int n_tensors;
} gpt_layout;

/* Check a configuration (divisibility, even head_dim, ranges) and build
 * its tensor table. Errors name the offending field. */
int gpt_layout_init(gpt_layout *l, const gpt_config *cfg, pg_error *err);
void gpt_layout_free(gpt_layout *l);

/* Address a flat buffer of l->n_params floats through the struct. p->blocks
 * is allocated here; free with gpt_params_free. */
void gpt_params_bind(gpt_params *p, const gpt_layout *l, float *flat);
void gpt_params_free(gpt_params *p);

/* Find a tensor by its official name; NULL if none. */
const gpt_tensor *gpt_layout_find(const gpt_layout *l, const char *name);

/* Presets. "baseline": 9 layers, width 512, 8 heads, 4 KV heads, MLP 2x,
 * vocab 1024, seq 1024. "tiny": small enough for useful steps on 2 cores
 * in a minute. Returns -1 for an unknown name. */
int gpt_config_preset(const char *name, gpt_config *cfg);

#endif
