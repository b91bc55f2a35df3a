/* Run configuration: presets, strict JSON reading, printing back. One
 * table lists every key with its type, place and range, so reading,
 * checking and printing cannot disagree about what a key is. */
#include "trainer/train_config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json_read.h"

typedef enum key_type { K_INT, K_I64, K_U64, K_DBL, K_FLT, K_STR, K_PREC } key_type;

typedef struct key_spec {
  const char *name;
  key_type type;
  size_t offset;
  double lo, hi; /* inclusive, unless lo_open */
  int lo_open;
} key_spec;

#define F(field) offsetof(train_config, field)
#define INF HUGE_VAL
static const key_spec keys[] = {
    {"vocab_size", K_INT, F(model.vocab_size), 2, 65536, 0},
    {"num_layers", K_INT, F(model.num_layers), 1, 256, 0},
    {"model_dim", K_INT, F(model.model_dim), 2, 16384, 0},
    {"num_heads", K_INT, F(model.num_heads), 1, 4096, 0},
    {"num_kv_heads", K_INT, F(model.num_kv_heads), 1, 4096, 0},
    {"mlp_mult", K_INT, F(model.mlp_mult), 1, 64, 0},
    {"train_seq_len", K_INT, F(model.seq_len), 1, 1 << 20, 0},
    {"rope_base", K_FLT, F(model.rope_base), 0, 1e9, 1},
    {"logit_softcap", K_FLT, F(model.logit_softcap), 0, 1e6, 1},
    {"qk_gain_init", K_FLT, F(model.qk_gain_init), -1e6, 1e6, 0},
    {"tied_embed_init_std", K_FLT, F(model.tied_embed_init_std), 0, 1e3, 0},
    {"train_batch_tokens", K_I64, F(train_batch_tokens), 1, 17179869184.0, 0},
    {"grad_accum_steps", K_INT, F(grad_accum_steps), 1, 1024, 0},
    {"world_size", K_INT, F(world_size), 1, TRAIN_MAX_WORLD, 0},
    {"iterations", K_I64, F(opt.iterations), 1, TRAIN_MAX_ITERATIONS, 0},
    {"warmdown_iters", K_I64, F(opt.warmdown_iters), 0, TRAIN_MAX_ITERATIONS, 0},
    {"budget_seconds", K_DBL, F(budget_seconds), 0, 1e7, 0},
    {"tied_embed_lr", K_DBL, F(opt.tied_embed_lr), 0, 1e3, 0},
    {"matrix_lr", K_DBL, F(opt.matrix_lr), 0, 1e3, 0},
    {"scalar_lr", K_DBL, F(opt.scalar_lr), 0, 1e3, 0},
    {"muon_momentum", K_DBL, F(opt.muon_momentum), 0, 1, 0},
    {"muon_momentum_warmup_start", K_DBL, F(opt.muon_momentum_warmup_start), 0, 1, 0},
    {"muon_momentum_warmup_steps", K_INT, F(opt.muon_momentum_warmup_steps), 0, TRAIN_MAX_ITERATIONS, 0},
    {"muon_backend_steps", K_INT, F(opt.muon_backend_steps), 1, 100, 0},
    {"beta1", K_DBL, F(opt.beta1), 0, 1, 0},
    {"beta2", K_DBL, F(opt.beta2), 0, 1, 0},
    {"adam_eps", K_DBL, F(opt.adam_eps), 0, 1, 1},
    {"grad_clip_norm", K_DBL, F(opt.grad_clip_norm), 0, 1e9, 0},
    {"val_batch_size", K_I64, F(val_batch_size), 1, 17179869184.0, 0},
    {"val_loss_every", K_I64, F(val_loss_every), 0, TRAIN_MAX_ITERATIONS, 0},
    {"train_log_every", K_I64, F(train_log_every), 0, TRAIN_MAX_ITERATIONS, 0},
    {"seed", K_U64, F(seed), 0, 9223372036854775807.0, 0},
    {"precision", K_PREC, F(precision), 0, 0, 0},
    {"threads", K_INT, F(threads), 0, 1024, 0},
    {"data", K_STR, F(data), 0, 0, 0},
    {"tokenizer", K_STR, F(tokenizer), 0, 0, 0},
};
#undef F
#define N_KEYS (sizeof keys / sizeof keys[0])

const char *train_precision_name(train_precision p) { return p == TRAIN_MIXED ? "mixed" : "fp32"; }

/* The official Hyperparameters defaults (train_gpt.py), model from model.h. */
static void official_defaults(train_config *c) {
  memset(c, 0, sizeof *c);
  gpt_config_preset("baseline", &c->model);
  optim_hparams_default(&c->opt);
  c->train_batch_tokens = 524288;
  c->grad_accum_steps = 8;
  c->world_size = 1;
  c->val_batch_size = 524288;
  c->val_loss_every = 1000;
  c->train_log_every = 200;
  c->seed = 1337;
  c->precision = TRAIN_FP32;
}

int train_config_preset(const char *name, train_config *c, pg_error *err) {
  official_defaults(c);
  if (!strcmp(name, "baseline")) {
    /* the official defaults as they are */
  } else if (!strcmp(name, "tiny")) {
    gpt_config_preset("tiny", &c->model);
    c->train_batch_tokens = 8192; /* 8 micro-steps of 8 sequences of 128 */
    c->opt.iterations = 200;
    c->opt.warmdown_iters = 60;
    c->val_batch_size = 65536;
    c->val_loss_every = 0;
    c->train_log_every = 20;
  } else {
    return pg_fail(err, "", -1, "unknown preset \"%s\" (presets: baseline, tiny)", name);
  }
  snprintf(c->preset, sizeof c->preset, "%s", name);
  return 0;
}

/* ---- reading ---- */

static int key_error(pg_error *err, const char *name, const char *key, const char *what) {
  return pg_fail(err, name, -1, "config key \"%s\": %s", key, what);
}

static int in_range(const key_spec *k, double v) {
  return (k->lo_open ? v > k->lo : v >= k->lo) && v <= k->hi;
}

static int range_error(pg_error *err, const char *name, const key_spec *k, double v) {
  char msg[160];
  snprintf(msg, sizeof msg, "%.17g is outside %s%.17g, %.17g]", v, k->lo_open ? "(" : "[", k->lo,
           k->hi);
  return key_error(err, name, k->name, msg);
}

static int set_integer(train_config *c, const key_spec *k, json_t *v, const char *name,
                       pg_error *err) {
  if (!json_is_integer(v)) return key_error(err, name, k->name, "expected an integer");
  json_int_t i = json_integer_value(v);
  if (!in_range(k, (double)i) || (k->type == K_U64 && i < 0)) return range_error(err, name, k, (double)i);
  char *p = (char *)c + k->offset;
  if (k->type == K_INT) *(int *)(void *)p = (int)i;
  else if (k->type == K_I64) *(int64_t *)(void *)p = (int64_t)i;
  else *(uint64_t *)(void *)p = (uint64_t)i;
  return 0;
}

static int set_real(train_config *c, const key_spec *k, json_t *v, const char *name, pg_error *err) {
  if (!json_is_number(v)) return key_error(err, name, k->name, "expected a number");
  double d = json_number_value(v);
  if (!isfinite(d) || !in_range(k, d)) return range_error(err, name, k, d);
  /* A float key is checked again as the float it becomes: 2e-101 is above
   * an open 0 but rounds to 0, which would print back as a refused value. */
  if (k->type == K_FLT && !in_range(k, (double)(float)d)) {
    char msg[200];
    snprintf(msg, sizeof msg, "%.17g rounds to the float %.9g, outside %s%.17g, %.17g]", d,
             (double)(float)d, k->lo_open ? "(" : "[", k->lo, k->hi);
    return key_error(err, name, k->name, msg);
  }
  char *p = (char *)c + k->offset;
  if (k->type == K_DBL) *(double *)(void *)p = d;
  else *(float *)(void *)p = (float)d;
  return 0;
}

static int set_string(train_config *c, const key_spec *k, json_t *v, const char *name, pg_error *err) {
  if (k->type == K_STR && json_is_null(v)) { /* printed back for "not set" */
    ((char *)c + k->offset)[0] = 0;
    return 0;
  }
  if (!json_is_string(v)) return key_error(err, name, k->name, "expected a string");
  const char *s = json_string_value(v);
  size_t n = json_string_length(v);
  if (k->type == K_PREC) {
    if (!strcmp(s, "fp32")) c->precision = TRAIN_FP32;
    else if (!strcmp(s, "mixed")) c->precision = TRAIN_MIXED;
    else return key_error(err, name, k->name, "expected \"fp32\" or \"mixed\"");
    return 0;
  }
  if (n == 0 || n >= TRAIN_PATH_MAX || strlen(s) != n)
    return key_error(err, name, k->name, "expected a path of 1 to 1023 bytes without NUL");
  memcpy((char *)c + k->offset, s, n + 1);
  return 0;
}

static const key_spec *find_key(const char *name) {
  for (size_t i = 0; i < N_KEYS; i++)
    if (!strcmp(keys[i].name, name)) return &keys[i];
  return NULL;
}

static int set_key(train_config *c, const key_spec *k, json_t *v, const char *name, pg_error *err) {
  switch (k->type) {
  case K_INT:
  case K_I64:
  case K_U64: return set_integer(c, k, v, name, err);
  case K_DBL:
  case K_FLT: return set_real(c, k, v, name, err);
  default: return set_string(c, k, v, name, err);
  }
}

int train_config_apply_json(train_config *c, json_t *obj, const char *name, pg_error *err) {
  if (!json_is_object(obj)) return pg_fail(err, name, -1, "configuration: expected a JSON object");
  json_t *pv = json_object_get(obj, "preset");
  if (pv && !json_is_null(pv)) {
    if (!json_is_string(pv)) return key_error(err, name, "preset", "expected a string");
    pg_error pe;
    if (train_config_preset(json_string_value(pv), c, &pe) != 0)
      return key_error(err, name, "preset", pe.msg);
  }
  const char *key;
  json_t *v;
  json_object_foreach(obj, key, v) {
    if (!strcmp(key, "preset")) continue;
    const key_spec *k = find_key(key);
    if (!k) return key_error(err, name, key, "unknown key");
    if (set_key(c, k, v, name, err) != 0) return -1;
  }
  return 0;
}

int train_config_parse(train_config *c, const uint8_t *buf, size_t len, const char *name,
                       pg_error *err) {
  json_t *root = NULL;
  if (len > TRAIN_CONFIG_MAX_BYTES)
    return pg_fail(err, name, -1, "configuration larger than %zu bytes", TRAIN_CONFIG_MAX_BYTES);
  if (json_read_buf(buf, len, name, &root, err) != 0) return -1;
  int rc = train_config_apply_json(c, root, name, err);
  json_decref(root);
  return rc;
}

int train_config_load(train_config *c, const char *path, pg_error *err) {
  uint8_t *buf = NULL;
  size_t len = 0;
  if (file_read_all(path, TRAIN_CONFIG_MAX_BYTES, &buf, &len, err) != 0) return -1;
  int rc = train_config_parse(c, buf, len, path, err);
  free(buf);
  return rc;
}

/* ---- checks across keys ---- */

int64_t train_config_micro_tokens(const train_config *c) {
  return c->train_batch_tokens / ((int64_t)c->world_size * c->grad_accum_steps);
}

int train_config_micro_batch(const train_config *c) {
  return (int)(train_config_micro_tokens(c) / c->model.seq_len);
}

int train_config_check(const train_config *c, pg_error *err) {
  if (optim_hparams_check(&c->opt, err) != 0) return -1;
  gpt_layout l;
  if (gpt_layout_init(&l, &c->model, err) != 0) return -1;
  gpt_layout_free(&l);
  /* The official script's rule: grad_accum_steps = 8 // world_size needs
   * a world size that divides 8. */
  if (TRAIN_MAX_WORLD % c->world_size != 0)
    return pg_fail(err, "config", -1, "config key \"world_size\": %d does not divide %d", c->world_size,
                   TRAIN_MAX_WORLD);
  int64_t per_step = (int64_t)c->world_size * c->grad_accum_steps * c->model.seq_len;
  if (c->train_batch_tokens % per_step != 0)
    return pg_fail(err, "config", -1,
                   "config key \"train_batch_tokens\": %lld is not a multiple of world_size (%d) x "
                   "grad_accum_steps (%d) x train_seq_len (%d)",
                   (long long)c->train_batch_tokens, c->world_size, c->grad_accum_steps,
                   c->model.seq_len);
  if (train_config_micro_batch(c) > 65536)
    return pg_fail(err, "config", -1, "config key \"train_batch_tokens\": more than 65536 sequences per micro-step");
  if (c->val_batch_size < per_step)
    return pg_fail(err, "config", -1,
                   "config key \"val_batch_size\": %lld is smaller than world_size x "
                   "grad_accum_steps x train_seq_len (%lld), which the official evaluation needs",
                   (long long)c->val_batch_size, (long long)per_step);
  return 0;
}

/* ---- printing ---- */

/* The shortest decimal that reads back to the same float32 (0.005, not
 * 0.004999999888241291), so the printed configuration reads as written
 * and still converts back to the same bits. */
static double short_float(float f) {
  char buf[32];
  for (int p = 1; p <= 9; p++) {
    snprintf(buf, sizeof buf, "%.*g", p, (double)f);
    if ((float)strtod(buf, NULL) == f) return strtod(buf, NULL);
  }
  return (double)f;
}

static json_t *key_value(const train_config *c, const key_spec *k) {
  const char *p = (const char *)c + k->offset;
  switch (k->type) {
  case K_INT: return json_integer(*(const int *)(const void *)p);
  case K_I64: return json_integer((json_int_t)*(const int64_t *)(const void *)p);
  case K_U64: return json_integer((json_int_t)*(const uint64_t *)(const void *)p);
  case K_DBL: return json_real(*(const double *)(const void *)p);
  case K_FLT: return json_real(short_float(*(const float *)(const void *)p));
  case K_PREC: return json_string(train_precision_name(c->precision));
  default: return *p ? json_string(p) : json_null();
  }
}

json_t *train_config_to_json(const train_config *c) {
  json_t *o = json_object();
  if (!o) return NULL;
  json_object_set_new(o, "preset", c->preset[0] ? json_string(c->preset) : json_null());
  for (size_t i = 0; i < N_KEYS; i++) json_object_set_new(o, keys[i].name, key_value(c, &keys[i]));
  return o;
}
