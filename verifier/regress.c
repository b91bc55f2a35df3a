/* The golden file of `pgolf regress` and the judgement of one run against
 * it (format and the choice of k: regress.h). */
#include "verifier/regress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json_read.h"
#include "verifier/student_t.h"

/* Mean and sd of the stored seeds must reproduce the stored summary to
 * this relative tolerance (they were printed with 17 digits). */
#define SUMMARY_RTOL 1e-12

double regress_default_k(size_t n, double p) {
  if (n < 2 || !(p > 0 && p < 1)) return NAN;
  return student_t_isf(p, (double)(n - 1)) * sqrt(1.0 + 1.0 / (double)n);
}

static int hex_nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

static int parse_head(const char *s, uint8_t out[SHA256_LEN]) {
  if (strlen(s) != 2 * SHA256_LEN) return -1;
  for (size_t i = 0; i < SHA256_LEN; i++) {
    int hi = hex_nibble(s[2 * i]), lo = hex_nibble(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return -1;
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  return 0;
}

/* A finite number at obj.key; 'where' names obj in errors. */
static int get_number(json_t *obj, const char *key, const char *file, const char *where,
                      double *out, pg_error *err) {
  json_t *v = json_object_get(obj, key);
  if (!json_is_number(v))
    return pg_fail(err, file, -1, "%s.%s: missing or not a number", where, key);
  *out = json_number_value(v);
  if (!isfinite(*out)) return pg_fail(err, file, -1, "%s.%s: not finite", where, key);
  return 0;
}

static int parse_seed(json_t *s, const char *file, const char *where, regress_seed *out,
                      pg_error *err) {
  if (!json_is_object(s)) return pg_fail(err, file, -1, "%s: not an object", where);
  json_t *seed = json_object_get(s, "seed");
  if (!json_is_integer(seed) || json_integer_value(seed) < 0)
    return pg_fail(err, file, -1, "%s.seed: missing or not a non-negative integer", where);
  out->seed = (uint64_t)json_integer_value(seed);
  if (get_number(s, "val_bpb", file, where, &out->val_bpb, err)) return -1;
  json_t *h = json_object_get(s, "loss_chain_head");
  if (!h || json_is_null(h)) return 0;
  if (!json_is_string(h) || parse_head(json_string_value(h), out->head))
    return pg_fail(err, file, -1, "%s.loss_chain_head: not 64 lowercase hex digits", where);
  out->has_head = 1;
  return 0;
}

/* The stored mean and sd must be what the stored seeds give. */
static int check_summary(const regress_config *c, const char *file, pg_error *err) {
  double sum = 0, ss = 0;
  for (size_t i = 0; i < c->n; i++) sum += c->seeds[i].val_bpb;
  double mean = sum / (double)c->n;
  for (size_t i = 0; i < c->n; i++) ss += (c->seeds[i].val_bpb - mean) * (c->seeds[i].val_bpb - mean);
  double sd = sqrt(ss / (double)(c->n - 1));
  if (fabs(mean - c->mean) > SUMMARY_RTOL * fabs(mean) ||
      fabs(sd - c->sd) > SUMMARY_RTOL * fabs(mean))
    return pg_fail(err, file, -1,
                   "configs.%s.val_bpb: mean %.17g and sd %.17g disagree with its seeds "
                   "(mean %.17g, sd %.17g)",
                   c->name, c->mean, c->sd, mean, sd);
  return 0;
}

static int parse_seeds(json_t *arr, const char *file, regress_config *c, pg_error *err) {
  if (!json_is_array(arr))
    return pg_fail(err, file, -1, "configs.%s.seeds: missing or not an array", c->name);
  c->n = json_array_size(arr);
  if (c->n < REGRESS_MIN_SEEDS)
    return pg_fail(err, file, -1, "configs.%s.seeds: %zu seeds, at least %d needed for an sd",
                   c->name, c->n, REGRESS_MIN_SEEDS);
  c->seeds = calloc(c->n, sizeof *c->seeds);
  if (!c->seeds) return pg_fail(err, file, -1, "out of memory");
  char where[200];
  for (size_t i = 0; i < c->n; i++) {
    snprintf(where, sizeof where, "configs.%s.seeds[%zu]", c->name, i);
    if (parse_seed(json_array_get(arr, i), file, where, &c->seeds[i], err)) return -1;
    for (size_t j = 0; j < i; j++)
      if (c->seeds[j].seed == c->seeds[i].seed)
        return pg_fail(err, file, -1, "%s: seed %llu appears twice", where,
                       (unsigned long long)c->seeds[i].seed);
  }
  return 0;
}

static int parse_config(const char *name, json_t *o, const char *file, double p,
                        regress_config *c, pg_error *err) {
  c->name = name;
  if (!json_is_object(o)) return pg_fail(err, file, -1, "configs.%s: not an object", name);
  json_t *det = json_object_get(o, "deterministic");
  if (!json_is_boolean(det))
    return pg_fail(err, file, -1, "configs.%s.deterministic: missing or not a boolean", name);
  c->deterministic = json_is_true(det);
  c->match = json_object_get(o, "match");
  if (c->match && !json_is_object(c->match))
    return pg_fail(err, file, -1, "configs.%s.match: not an object", name);
  json_t *vb = json_object_get(o, "val_bpb");
  char where[160];
  snprintf(where, sizeof where, "configs.%s.val_bpb", name);
  if (!json_is_object(vb)) return pg_fail(err, file, -1, "%s: missing or not an object", where);
  if (get_number(vb, "mean", file, where, &c->mean, err) ||
      get_number(vb, "sd", file, where, &c->sd, err))
    return -1;
  if (c->sd < 0) return pg_fail(err, file, -1, "%s.sd: negative", where);
  if (parse_seeds(json_object_get(o, "seeds"), file, c, err) || check_summary(c, file, err))
    return -1;
  json_t *n = json_object_get(vb, "n");
  if (!json_is_integer(n) || (size_t)json_integer_value(n) != c->n)
    return pg_fail(err, file, -1, "%s.n: missing or not the number of seeds (%zu)", where, c->n);
  c->k = regress_default_k(c->n, p);
  if (!isfinite(c->k) || c->k < 0) /* p so small that the quantile overflows */
    return pg_fail(err, file, -1,
                   "%s: false_failure_probability %g gives no finite band (k = %g) for %zu seeds",
                   where, p, c->k, c->n);
  if (json_object_get(o, "k")) {
    snprintf(where, sizeof where, "configs.%s", name);
    if (get_number(o, "k", file, where, &c->k, err)) return -1;
    if (c->k < 0) return pg_fail(err, file, -1, "%s.k: negative", where);
  }
  return 0;
}

static int parse_root(json_t *root, const char *file, regress_golden *g, pg_error *err) {
  if (!json_is_object(root)) return pg_fail(err, file, -1, "not a JSON object");
  json_t *fmt = json_object_get(root, "format");
  if (!json_is_string(fmt) || strcmp(json_string_value(fmt), REGRESS_FORMAT))
    return pg_fail(err, file, -1, "format: not \"%s\"", REGRESS_FORMAT);
  g->p_false = REGRESS_DEFAULT_P;
  if (json_object_get(root, "false_failure_probability") &&
      (get_number(root, "false_failure_probability", file, "", &g->p_false, err) ||
       !(g->p_false > 0 && g->p_false < 0.5)))
    /* At p >= 0.5 the t quantile is <= 0: a band at or below the mean. */
    return pg_fail(err, file, -1, "false_failure_probability: must be in (0, 0.5)");
  json_t *configs = json_object_get(root, "configs");
  if (!json_is_object(configs) || json_object_size(configs) == 0)
    return pg_fail(err, file, -1, "configs: missing, empty or not an object");
  g->configs = calloc(json_object_size(configs), sizeof *g->configs);
  if (!g->configs) return pg_fail(err, file, -1, "out of memory");
  const char *name;
  json_t *c;
  json_object_foreach(configs, name, c) {
    if (parse_config(name, c, file, g->p_false, &g->configs[g->n_configs++], err)) return -1;
  }
  return 0;
}

int regress_golden_parse(const uint8_t *buf, size_t len, const char *name, regress_golden *g,
                         pg_error *err) {
  memset(g, 0, sizeof *g);
  if (json_read_buf(buf, len, name, &g->root, err)) return -1;
  if (parse_root(g->root, name, g, err)) {
    regress_golden_free(g);
    return -1;
  }
  return 0;
}

int regress_golden_load(const char *path, regress_golden *g, pg_error *err) {
  uint8_t *buf;
  size_t len;
  if (file_read_all(path, REGRESS_MAX_BYTES, &buf, &len, err)) return -1;
  int rc = regress_golden_parse(buf, len, path, g, err);
  free(buf);
  return rc;
}

void regress_golden_free(regress_golden *g) {
  for (size_t i = 0; i < g->n_configs; i++) free(g->configs[i].seeds);
  free(g->configs);
  json_decref(g->root);
  memset(g, 0, sizeof *g);
}

const regress_config *regress_find_config(const regress_golden *g, const char *name) {
  for (size_t i = 0; i < g->n_configs; i++)
    if (!strcmp(g->configs[i].name, name)) return &g->configs[i];
  return NULL;
}

/* ---- judging one run ---- */

/* Every key of c->match must equal the run's predicate.config value. */
static int check_match(const regress_config *c, const manifest *m, const char *run,
                       pg_error *err) {
  if (!c->match) return 0;
  const char *key;
  json_t *want;
  json_object_foreach(c->match, key, want) {
    json_t *got = json_is_object(m->config) ? json_object_get(m->config, key) : NULL;
    if (!got || !json_equal(got, want)) {
      char *g = got ? json_dumps(got, JSON_ENCODE_ANY) : NULL, *w = json_dumps(want, JSON_ENCODE_ANY);
      pg_fail(err, run, -1, "not a run of configuration '%s': predicate.config.%s is %s, wanted %s",
              c->name, key, g ? g : "absent", w ? w : "?");
      free(g);
      free(w);
      return -1;
    }
  }
  return 0;
}

static void judge_chain(const regress_config *c, const manifest *m, regress_result *r) {
  r->chain = CHAIN_NOT_CHECKED;
  if (!c->deterministic) {
    snprintf(r->chain_note, sizeof r->chain_note, "configuration not deterministic");
    return;
  }
  const regress_seed *s = NULL;
  for (size_t i = 0; i < c->n; i++)
    if (c->seeds[i].seed == m->seed) s = &c->seeds[i];
  if (!s || !s->has_head) {
    snprintf(r->chain_note, sizeof r->chain_note, "no golden chain head for seed %llu",
             (unsigned long long)m->seed);
    return;
  }
  char got[SHA256_HEX_LEN + 1], want[SHA256_HEX_LEN + 1];
  sha256_hex(m->head, got);
  sha256_hex(s->head, want);
  r->chain = memcmp(m->head, s->head, SHA256_LEN) ? CHAIN_DIFFERS : CHAIN_SAME;
  snprintf(r->chain_note, sizeof r->chain_note, "head %.16s..., golden %.16s...", got, want);
}

int regress_judge(const regress_config *c, const manifest *m, const char *run,
                  regress_result *r, pg_error *err) {
  memset(r, 0, sizeof *r);
  snprintf(r->run, sizeof r->run, "%s", run);
  r->config = c->name;
  r->seed = m->seed;
  r->n_steps = m->n_steps;
  if (check_match(c, m, run, err)) return -1;
  json_t *vb = json_is_object(m->evaluation) ? json_object_get(m->evaluation, "val_bpb") : NULL;
  if (!json_is_number(vb) || !isfinite(json_number_value(vb)))
    return pg_fail(err, run, -1, "predicate.evaluation.val_bpb: missing or not a finite number");
  r->val_bpb = json_number_value(vb);
  r->limit = c->mean + c->k * c->sd;
  r->band_failed = !(r->val_bpb <= r->limit);
  judge_chain(c, m, r);
  return 0;
}
