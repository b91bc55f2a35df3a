/* Reading and validating run manifests. Every field read is checked for
 * type, format and range, and every error names its JSON path. */
#include "manifests/manifest.h"

#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json_read.h"

#define MAX_TEXT 4096 /* longest name, path or version string we accept */

typedef struct rd {
  const char *name;
  pg_error *err;
} rd;

static int bad(rd *r, const char *prefix, const char *key, const char *what) {
  return pg_fail(r->err, r->name, -1, "%s%s%s: %s", prefix, *prefix && *key ? "." : "", key, what);
}

/* obj[key], which must exist and be of one of the json types in mask. */
#define T(t) (1u << (t))
static json_t *get(rd *r, json_t *obj, const char *prefix, const char *key, unsigned mask,
                   const char *expect) {
  json_t *v = json_object_get(obj, key);
  if (!v) {
    bad(r, prefix, key, "missing");
    return NULL;
  }
  if (!(mask & T(json_typeof(v)))) {
    char msg[128];
    snprintf(msg, sizeof msg, "expected %s", expect);
    bad(r, prefix, key, msg);
    return NULL;
  }
  return v;
}

static json_t *get_obj(rd *r, json_t *obj, const char *prefix, const char *key) {
  return get(r, obj, prefix, key, T(JSON_OBJECT), "an object");
}

static const char *get_str(rd *r, json_t *obj, const char *prefix, const char *key) {
  json_t *v = get(r, obj, prefix, key, T(JSON_STRING), "a string");
  if (!v) return NULL;
  if (json_string_length(v) > MAX_TEXT) {
    bad(r, prefix, key, "string longer than 4096 bytes");
    return NULL;
  }
  return json_string_value(v);
}

static int get_u64(rd *r, json_t *obj, const char *prefix, const char *key, uint64_t max,
                   uint64_t *out) {
  json_t *v = get(r, obj, prefix, key, T(JSON_INTEGER), "an integer");
  if (!v) return -1;
  json_int_t i = json_integer_value(v);
  if (i < 0 || (uint64_t)i > max) {
    char msg[96];
    snprintf(msg, sizeof msg, "%lld is outside [0, %llu]", (long long)i, (unsigned long long)max);
    return bad(r, prefix, key, msg);
  }
  *out = (uint64_t)i;
  return 0;
}

static int get_sha(rd *r, json_t *obj, const char *prefix, const char *key, uint8_t out[SHA256_LEN]) {
  const char *s = get_str(r, obj, prefix, key);
  if (!s) return -1;
  if (sha256_from_hex(s, out) != 0) return bad(r, prefix, key, "expected 64 lowercase hex digits");
  return 0;
}

static int hex_lower(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

static int get_bits32(rd *r, json_t *obj, const char *prefix, const char *key, uint32_t *out) {
  const char *s = get_str(r, obj, prefix, key);
  if (!s) return -1;
  uint32_t v = 0;
  int ok = strlen(s) == 10 && s[0] == '0' && s[1] == 'x';
  for (int i = 2; ok && i < 10; i++) {
    int d = hex_lower(s[i]);
    ok = d >= 0;
    v = v << 4 | (uint32_t)(d & 15);
  }
  if (!ok) return bad(r, prefix, key, "expected \"0x\" and 8 hex digits");
  *out = v;
  return 0;
}

static int get_nullable_u64(rd *r, json_t *obj, const char *prefix, const char *key, int64_t *out) {
  json_t *v = get(r, obj, prefix, key, T(JSON_INTEGER) | T(JSON_NULL), "an integer or null");
  if (!v) return -1;
  uint64_t u = 0;
  if (json_is_null(v)) {
    *out = -1;
    return 0;
  }
  if (get_u64(r, obj, prefix, key, INT64_MAX, &u) != 0) return -1;
  *out = (int64_t)u;
  return 0;
}

/* ---- statement and subjects ---- */

static int read_subjects(rd *r, json_t *root, manifest *m) {
  json_t *subj = get(r, root, "", "subject", T(JSON_ARRAY), "an array");
  if (!subj) return -1;
  size_t n = json_array_size(subj);
  if (n == 0 || n > MANIFEST_MAX_SUBJECTS) return bad(r, "", "subject", "expected 1 to 16 entries");
  size_t chains = 0;
  for (size_t i = 0; i < n; i++) {
    char p[64], pd[80];
    snprintf(p, sizeof p, "subject[%zu]", i);
    snprintf(pd, sizeof pd, "subject[%zu].digest", i);
    json_t *s = json_array_get(subj, i);
    if (!json_is_object(s)) return bad(r, p, "", "expected an object");
    const char *name = get_str(r, s, p, "name");
    json_t *dg = name ? get_obj(r, s, p, "digest") : NULL;
    uint8_t d[SHA256_LEN];
    if (!dg || get_sha(r, dg, pd, "sha256", d) != 0) return -1;
    if (strcmp(name, MANIFEST_CHAIN_SUBJECT) == 0) chains++;
  }
  if (chains != 1) return bad(r, "", "subject", "expected exactly one subject named \"loss-chain\"");
  m->subjects = subj;
  return 0;
}

static int read_statement(rd *r, json_t *root, json_t **pred) {
  if (!json_is_object(root)) return pg_fail(r->err, r->name, -1, "expected a JSON object");
  const char *type = get_str(r, root, "", "_type");
  if (!type) return -1;
  if (strcmp(type, MANIFEST_STATEMENT_TYPE) != 0)
    return bad(r, "", "_type", "expected \"" MANIFEST_STATEMENT_TYPE "\"");
  const char *pt = get_str(r, root, "", "predicateType");
  if (!pt) return -1;
  if (strcmp(pt, MANIFEST_PREDICATE_TYPE) != 0)
    return bad(r, "", "predicateType", "expected \"" MANIFEST_PREDICATE_TYPE "\"");
  *pred = get_obj(r, root, "", "predicate");
  return *pred ? 0 : -1;
}

/* ---- data ---- */

static int read_tokenizer(rd *r, json_t *data, manifest *m) {
  json_t *t = get_obj(r, data, "predicate.data", "tokenizer");
  if (!t) return -1;
  const char *p = "predicate.data.tokenizer";
  uint64_t vocab = 0;
  m->tokenizer.path = get_str(r, t, p, "path");
  m->tokenizer.name = m->tokenizer.path;
  if (!m->tokenizer.path || get_sha(r, t, p, "sha256", m->tokenizer.sha256) != 0) return -1;
  if (get_u64(r, t, p, "vocab_size", 1u << 24, &vocab) != 0) return -1;
  m->vocab_size = (uint32_t)vocab;
  return 0;
}

static int read_shard(rd *r, json_t *s, size_t i, manifest_file *f) {
  char p[64];
  snprintf(p, sizeof p, "predicate.data.shards[%zu]", i);
  if (!json_is_object(s)) return bad(r, p, "", "expected an object");
  if (!(f->name = get_str(r, s, p, "name")) || !(f->path = get_str(r, s, p, "path"))) return -1;
  if (!(f->split = get_str(r, s, p, "split"))) return -1;
  if (strcmp(f->split, "train") && strcmp(f->split, "val") && strcmp(f->split, "other"))
    return bad(r, p, "split", "expected \"train\", \"val\" or \"other\"");
  if (get_u64(r, s, p, "tokens", UINT32_MAX, &f->tokens) != 0) return -1;
  return get_sha(r, s, p, "sha256", f->sha256);
}

static int read_data(rd *r, json_t *pred, manifest *m) {
  json_t *data = get_obj(r, pred, "predicate", "data");
  if (!data || read_tokenizer(r, data, m) != 0) return -1;
  json_t *sh = get(r, data, "predicate.data", "shards", T(JSON_ARRAY), "an array");
  if (!sh) return -1;
  size_t n = json_array_size(sh);
  if (n > MANIFEST_MAX_SHARDS) return bad(r, "predicate.data", "shards", "too many entries");
  m->shards = calloc(n ? n : 1, sizeof *m->shards);
  if (!m->shards) return pg_fail(r->err, r->name, -1, "out of memory");
  m->n_shards = n;
  for (size_t i = 0; i < n; i++)
    if (read_shard(r, json_array_get(sh, i), i, &m->shards[i]) != 0) return -1;
  int64_t consumed;
  return get_nullable_u64(r, data, "predicate.data", "tokens_consumed", &consumed);
}

/* ---- losses ---- */

static int read_step(rd *r, json_t *s, size_t i, manifest_step *st) {
  char p[64];
  snprintf(p, sizeof p, "predicate.losses.steps[%zu]", i);
  if (!json_is_object(s)) return bad(r, p, "", "expected an object");
  if (get_u64(r, s, p, "step", UINT64_MAX >> 1, &st->step) != 0) return -1;
  if (get_bits32(r, s, p, "loss_bits", &st->loss_bits) != 0) return -1;
  if (json_object_get(s, "lr_mult_bits")) {
    if (get_bits32(r, s, p, "lr_mult_bits", &st->lr_mult_bits) != 0) return -1;
    st->has_lr_mult = 1;
  }
  json_t *w = json_object_get(s, "wall_ms");
  if (w && !(json_is_number(w) && json_number_value(w) >= 0))
    return bad(r, p, "wall_ms", "expected a non-negative number");
  return get_sha(r, s, p, "chain", st->chain);
}

static int read_losses(rd *r, json_t *pred, manifest *m) {
  json_t *l = get_obj(r, pred, "predicate", "losses");
  if (!l || get_sha(r, l, "predicate.losses", "chain", m->head) != 0) return -1;
  json_t *steps = get(r, l, "predicate.losses", "steps", T(JSON_ARRAY), "an array");
  if (!steps) return -1;
  size_t n = json_array_size(steps);
  if (n > MANIFEST_MAX_STEPS) return bad(r, "predicate.losses", "steps", "more than 1000000 entries");
  m->steps = calloc(n ? n : 1, sizeof *m->steps);
  if (!m->steps) return pg_fail(r->err, r->name, -1, "out of memory");
  for (size_t i = 0; i < n; i++) {
    if (read_step(r, json_array_get(steps, i), i, &m->steps[i]) != 0) return -1;
    if (i && m->steps[i].step <= m->steps[i - 1].step) {
      char p[64];
      snprintf(p, sizeof p, "predicate.losses.steps[%zu]", i);
      return bad(r, p, "step", "not greater than the previous step");
    }
    m->n_steps = i + 1;
  }
  return 0;
}

/* ---- the rest of the predicate ---- */

static int read_artifact(rd *r, json_t *pred, manifest *m) {
  json_t *a = get(r, pred, "predicate", "artifact", T(JSON_OBJECT) | T(JSON_NULL), "an object or null");
  if (!a) return -1;
  if (json_is_null(a)) return 0;
  const char *p = "predicate.artifact";
  manifest_file *f = &m->artifact;
  if (!(f->name = get_str(r, a, p, "name")) || !(f->path = get_str(r, a, p, "path"))) return -1;
  if (get_u64(r, a, p, "bytes", INT64_MAX, &f->bytes) != 0) return -1;
  if (get_sha(r, a, p, "sha256", f->sha256) != 0) return -1;
  m->has_artifact = 1;
  return 0;
}

static int read_code(rd *r, json_t *pred, manifest *m) {
  const char *p = "predicate.code";
  if (!(m->code = get_obj(r, pred, "predicate", "code"))) return -1;
  if (!get_str(r, m->code, p, "pgolf_version") || !get_str(r, m->code, p, "source_digest") ||
      !get_str(r, m->code, p, "compiler"))
    return -1;
  json_t *b = get(r, m->code, p, "binary_sha256", T(JSON_STRING) | T(JSON_NULL), "a string or null");
  uint8_t d[SHA256_LEN];
  if (!b) return -1;
  return json_is_null(b) ? 0 : get_sha(r, m->code, p, "binary_sha256", d);
}

static int read_scalars(rd *r, json_t *pred, manifest *m) {
  if (get_u64(r, pred, "predicate", "seed", INT64_MAX, &m->seed) != 0) return -1;
  if (!get_obj(r, pred, "predicate", "derived_seeds")) return -1;
  if (!(m->config = get_obj(r, pred, "predicate", "config"))) return -1;
  if (!(m->environment = get_obj(r, pred, "predicate", "environment"))) return -1;
  if (!(m->timing = get_obj(r, pred, "predicate", "timing"))) return -1;
  m->evaluation = get(r, pred, "predicate", "evaluation", T(JSON_OBJECT) | T(JSON_NULL),
                      "an object or null");
  if (!m->evaluation) return -1;
  json_t *sch = get_obj(r, pred, "predicate", "schedule");
  if (!sch) return -1;
  return get_nullable_u64(r, sch, "predicate.schedule", "total_steps", &m->total_steps);
}

/* predicate.init is optional (manifests made by `pgolf manifest create`
 * have none); when present its digest must be well formed. */
static int read_init(rd *r, json_t *pred, manifest *m) {
  json_t *init = json_object_get(pred, "init");
  if (!init) return 0;
  if (!json_is_object(init)) return bad(r, "predicate", "init", "expected an object");
  if (get_sha(r, init, "predicate.init", "sha256", m->init_sha256) != 0) return -1;
  if (!get(r, init, "predicate.init", "tensors", T(JSON_ARRAY), "an array")) return -1;
  m->has_init = 1;
  return 0;
}

int manifest_from_json(json_t *root, const char *name, manifest *m, pg_error *err) {
  rd r = {name, err};
  json_t *pred = NULL;
  memset(m, 0, sizeof *m);
  m->root = json_incref(root);
  if (read_statement(&r, root, &pred) != 0 || read_subjects(&r, root, m) != 0 ||
      read_scalars(&r, pred, m) != 0 || read_code(&r, pred, m) != 0 || read_data(&r, pred, m) != 0 ||
      read_losses(&r, pred, m) != 0 || read_artifact(&r, pred, m) != 0 || read_init(&r, pred, m) != 0) {
    manifest_free(m);
    return -1;
  }
  return 0;
}

int manifest_parse(const uint8_t *buf, size_t len, const char *name, manifest *m, pg_error *err) {
  json_t *root = NULL;
  memset(m, 0, sizeof *m);
  if (len > MANIFEST_MAX_BYTES)
    return pg_fail(err, name, -1, "manifest larger than the limit of %zu bytes", MANIFEST_MAX_BYTES);
  if (json_read_buf(buf, len, name, &root, err) != 0) return -1;
  int rc = manifest_from_json(root, name, m, err);
  json_decref(root);
  return rc;
}

void manifest_free(manifest *m) {
  free(m->shards);
  free(m->steps);
  json_decref(m->root);
  memset(m, 0, sizeof *m);
}

/* ---- either a manifest or an envelope ---- */

static int load_envelope(json_t *root, const char *path, manifest_doc *d, pg_error *err) {
  d->is_envelope = 1;
  if (dsse_from_json(root, path, &d->env, err) != 0) return -1;
  snprintf(d->name, sizeof d->name, "%s (payload)", path);
  d->payload_ok =
      manifest_parse(d->env.payload, d->env.payload_len, d->name, &d->m, &d->payload_err) == 0;
  return 0;
}

int manifest_load(const char *path, manifest_doc *d, pg_error *err) {
  uint8_t *buf = NULL;
  size_t len = 0;
  json_t *root = NULL;
  memset(d, 0, sizeof *d);
  snprintf(d->name, sizeof d->name, "%s", path);
  if (file_read_all(path, MANIFEST_ENVELOPE_MAX_BYTES, &buf, &len, err) != 0) return -1;
  int rc = json_read_buf(buf, len, path, &root, err);
  free(buf);
  if (rc != 0) return -1;
  if (dsse_is_envelope(root))
    rc = load_envelope(root, path, d, err);
  else if (len > MANIFEST_MAX_BYTES)
    rc = pg_fail(err, path, -1, "manifest larger than the limit of %zu bytes", MANIFEST_MAX_BYTES);
  else
    rc = manifest_from_json(root, path, &d->m, err);
  if (rc == 0 && !d->is_envelope) d->payload_ok = 1;
  json_decref(root);
  if (rc != 0) manifest_doc_free(d);
  return rc;
}

void manifest_doc_free(manifest_doc *d) {
  if (d->is_envelope) dsse_free(&d->env);
  manifest_free(&d->m);
  d->is_envelope = 0;
}
