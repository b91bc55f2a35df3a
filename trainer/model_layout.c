#include "trainer/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The official CONTROL_TENSOR_NAME_PATTERNS (substring match). */
static const char *const control_patterns[] = {
    "attn_scale", "attn_scales", "mlp_scale", "mlp_scales", "resid_mix",
    "resid_mixes", "q_gain", "skip_weight", "skip_weights",
};

static int is_control_name(const char *name) {
  for (size_t i = 0; i < sizeof control_patterns / sizeof control_patterns[0]; i++)
    if (strstr(name, control_patterns[i])) return 1;
  return 0;
}

int gpt_config_preset(const char *name, gpt_config *cfg) {
  gpt_config base = {
      .vocab_size = 1024, .num_layers = 9, .model_dim = 512, .num_heads = 8,
      .num_kv_heads = 4, .mlp_mult = 2, .seq_len = 1024, .rope_base = 10000.0f,
      .logit_softcap = 30.0f, .qk_gain_init = 1.5f, .tied_embed_init_std = 0.005f,
  };
  if (!strcmp(name, "baseline")) {
    *cfg = base;
    return 0;
  }
  if (!strcmp(name, "tiny")) {
    base.num_layers = 4;
    base.model_dim = 64;
    base.num_heads = 4;
    base.num_kv_heads = 2;
    base.seq_len = 128;
    *cfg = base;
    return 0;
  }
  return -1;
}

static int check_config(const gpt_config *c, pg_error *err) {
  if (c->vocab_size < 2 || c->vocab_size > 65536)
    return pg_fail(err, "config", -1, "vocab_size %d outside [2, 65536]", c->vocab_size);
  if (c->num_layers < 1 || c->num_layers > 256)
    return pg_fail(err, "config", -1, "num_layers %d outside [1, 256]", c->num_layers);
  if (c->model_dim < 2 || c->model_dim > 16384)
    return pg_fail(err, "config", -1, "model_dim %d outside [2, 16384]", c->model_dim);
  if (c->num_heads < 1 || c->model_dim % c->num_heads)
    return pg_fail(err, "config", -1, "model_dim %d is not divisible by num_heads %d",
                   c->model_dim, c->num_heads);
  if (c->num_kv_heads < 1 || c->num_heads % c->num_kv_heads)
    return pg_fail(err, "config", -1, "num_heads %d is not divisible by num_kv_heads %d",
                   c->num_heads, c->num_kv_heads);
  if ((c->model_dim / c->num_heads) % 2)
    return pg_fail(err, "config", -1, "head_dim %d must be even for RoPE",
                   c->model_dim / c->num_heads);
  if (c->mlp_mult < 1 || c->mlp_mult > 64)
    return pg_fail(err, "config", -1, "mlp_mult %d outside [1, 64]", c->mlp_mult);
  if (c->seq_len < 1 || c->seq_len > (1 << 20))
    return pg_fail(err, "config", -1, "seq_len %d outside [1, 1048576]", c->seq_len);
  if (!(c->logit_softcap > 0.0f))
    return pg_fail(err, "config", -1, "logit_softcap must be positive");
  if (!(c->rope_base > 0.0f)) return pg_fail(err, "config", -1, "rope_base must be positive");
  return 0;
}

static void add_tensor(gpt_layout *l, const char *name, int ndim, int rows, int cols,
                       gpt_param_group group) {
  gpt_tensor *t = &l->tensors[l->n_tensors++];
  snprintf(t->name, sizeof t->name, "%s", name);
  t->ndim = ndim;
  t->rows = rows;
  t->cols = cols;
  t->numel = (size_t)rows * (size_t)cols;
  t->offset = l->n_params;
  t->is_control = is_control_name(name);
  t->group = group;
  l->n_params += t->numel;
}

/* Block tensors in the official order; see model.h. */
static void add_block(gpt_layout *l, int i) {
  const gpt_config *c = &l->cfg;
  const int D = c->model_dim;
  char n[48];
#define BLOCK_TENSOR(suffix, ndim, rows, cols, group)  \
  do {                                                 \
    snprintf(n, sizeof n, "blocks.%d.%s", i, suffix); \
    add_tensor(l, n, ndim, rows, cols, group);         \
  } while (0)
  BLOCK_TENSOR("attn_scale", 1, 1, D, GPT_GROUP_SCALAR);
  BLOCK_TENSOR("mlp_scale", 1, 1, D, GPT_GROUP_SCALAR);
  BLOCK_TENSOR("resid_mix", 2, 2, D, GPT_GROUP_SCALAR); /* 2-D but a control tensor */
  BLOCK_TENSOR("attn.q_gain", 1, 1, c->num_heads, GPT_GROUP_SCALAR);
  BLOCK_TENSOR("attn.c_q.weight", 2, D, D, GPT_GROUP_MATRIX);
  BLOCK_TENSOR("attn.c_k.weight", 2, l->kv_dim, D, GPT_GROUP_MATRIX);
  BLOCK_TENSOR("attn.c_v.weight", 2, l->kv_dim, D, GPT_GROUP_MATRIX);
  BLOCK_TENSOR("attn.proj.weight", 2, D, D, GPT_GROUP_MATRIX);
  BLOCK_TENSOR("mlp.fc.weight", 2, l->hidden, D, GPT_GROUP_MATRIX);
  BLOCK_TENSOR("mlp.proj.weight", 2, D, l->hidden, GPT_GROUP_MATRIX);
#undef BLOCK_TENSOR
}

int gpt_layout_init(gpt_layout *l, const gpt_config *cfg, pg_error *err) {
  memset(l, 0, sizeof *l);
  if (check_config(cfg, err)) return -1;
  l->cfg = *cfg;
  l->head_dim = cfg->model_dim / cfg->num_heads;
  l->kv_dim = cfg->num_kv_heads * l->head_dim;
  l->hidden = cfg->mlp_mult * cfg->model_dim;
  l->num_encoder = cfg->num_layers / 2;
  l->num_decoder = cfg->num_layers - l->num_encoder;
  l->num_skip = l->num_encoder < l->num_decoder ? l->num_encoder : l->num_decoder;
  l->tensors = calloc((size_t)2 + 10 * (size_t)cfg->num_layers, sizeof *l->tensors);
  if (!l->tensors) return pg_fail(err, "config", -1, "out of memory");
  /* skip_weights exists even when empty (one layer), as in the official model. */
  add_tensor(l, "skip_weights", 2, l->num_skip, cfg->model_dim, GPT_GROUP_SCALAR);
  add_tensor(l, "tok_emb.weight", 2, cfg->vocab_size, cfg->model_dim, GPT_GROUP_EMBED);
  for (int i = 0; i < cfg->num_layers; i++) add_block(l, i);
  return 0;
}

void gpt_layout_free(gpt_layout *l) {
  free(l->tensors);
  l->tensors = NULL;
  l->n_tensors = 0;
}

void gpt_params_bind(gpt_params *p, const gpt_layout *l, float *flat) {
  p->skip_weights = flat + l->tensors[0].offset;
  p->tok_emb = flat + l->tensors[1].offset;
  p->blocks = calloc((size_t)l->cfg.num_layers, sizeof *p->blocks);
  if (!p->blocks) abort();
  for (int i = 0; i < l->cfg.num_layers; i++) {
    const gpt_tensor *t = &l->tensors[2 + 10 * i];
    gpt_block_params *b = &p->blocks[i];
    float **slots[10] = {&b->attn_scale, &b->mlp_scale, &b->resid_mix, &b->q_gain, &b->c_q,
                         &b->c_k,        &b->c_v,       &b->attn_proj, &b->fc,     &b->mlp_proj};
    for (int k = 0; k < 10; k++) *slots[k] = flat + t[k].offset;
  }
}

void gpt_params_free(gpt_params *p) {
  free(p->blocks);
  p->blocks = NULL;
}

const gpt_tensor *gpt_layout_find(const gpt_layout *l, const char *name) {
  for (int i = 0; i < l->n_tensors; i++)
    if (!strcmp(l->tensors[i].name, name)) return &l->tensors[i];
  return NULL;
}
