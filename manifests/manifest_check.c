/* Verifying a manifest (its own consistency, then the files it names)
 * and comparing two manifests field by deterministic field. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/grow.h"
#include "common/hash_pool.h"
#include "manifests/loss_chain.h"
#include "manifests/manifest.h"
#include "formats/shard.h"
#include "formats/tokenizer.h"

static void add_item(verify_report *r, int failed, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add_item(verify_report *r, int failed, const char *file, const char *fmt, ...) {
  if (PG_GROW(r->items, r->cap, r->n + 1, 16)) abort(); /* a report of a few items; no useful way on */
  verify_item *it = &r->items[r->n++];
  memset(it, 0, sizeof *it);
  it->failed = failed;
  char msg[PG_ERR_MSG];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pg_fail(&it->e, file, -1, "%s", msg);
  if (failed) r->n_failed++;
}

void verify_report_free(verify_report *r) {
  free(r->items);
  memset(r, 0, sizeof *r);
}

static void hex(const uint8_t d[SHA256_LEN], char out[SHA256_HEX_LEN + 1]) { sha256_hex(d, out); }

/* ---- the chain and the subjects ---- */

/* Returns 1 when every recorded link is the one its step produces. */
static int check_links(const manifest *m, const char *name, verify_report *r, uint8_t c[SHA256_LEN]) {
  loss_chain_init(c);
  for (size_t i = 0; i < m->n_steps; i++) {
    const manifest_step *s = &m->steps[i];
    loss_chain_extend(c, s->step, s->loss_bits);
    if (memcmp(c, s->chain, SHA256_LEN) != 0) {
      add_item(r, 1, name,
               "predicate.losses.steps[%zu]: step %llu: loss_bits 0x%08x do not match the recorded "
               "chain link (the loss or the link was changed)",
               i, (unsigned long long)s->step, s->loss_bits);
      return 0;
    }
  }
  return 1;
}

static void check_subjects(const manifest *m, const char *name, verify_report *r) {
  int art_seen = 0;
  char a[SHA256_HEX_LEN + 1], b[SHA256_HEX_LEN + 1];
  for (size_t i = 0; i < json_array_size(m->subjects); i++) {
    json_t *s = json_array_get(m->subjects, i);
    const char *sn = json_string_value(json_object_get(s, "name"));
    uint8_t d[SHA256_LEN];
    sha256_from_hex(json_string_value(json_object_get(json_object_get(s, "digest"), "sha256")), d);
    const uint8_t *want = NULL;
    const char *what = NULL;
    if (strcmp(sn, MANIFEST_CHAIN_SUBJECT) == 0) {
      want = m->head, what = "the loss chain head predicate.losses.chain";
    } else if (m->has_artifact && !art_seen && strcmp(sn, m->artifact.name) == 0) {
      want = m->artifact.sha256, what = "predicate.artifact.sha256", art_seen = 1;
    } else {
      add_item(r, 1, name, "subject[%zu] '%.100s' is not described by the predicate", i, sn);
      continue;
    }
    if (memcmp(d, want, SHA256_LEN) != 0) {
      hex(d, a), hex(want, b);
      add_item(r, 1, name, "subject[%zu] '%.100s': digest %s disagrees with %s %s", i, sn, a, what, b);
    }
  }
  if (m->has_artifact && !art_seen)
    add_item(r, 1, name, "no subject names the artifact '%.100s'", m->artifact.name);
}

void manifest_verify_chain(const manifest *m, const char *name, verify_report *r) {
  uint8_t c[SHA256_LEN];
  char a[SHA256_HEX_LEN + 1], b[SHA256_HEX_LEN + 1];
  if (check_links(m, name, r, c)) {
    if (memcmp(c, m->head, SHA256_LEN) != 0) {
      hex(m->head, a), hex(c, b);
      add_item(r, 1, name, "predicate.losses.chain: wrong chain head %s; the %zu recorded steps give %s",
               a, m->n_steps, b);
    } else {
      r->n_checked++;
      add_item(r, 0, name, "loss chain of %zu steps matches its head", m->n_steps);
    }
  }
  check_subjects(m, name, r);
}

/* ---- files ---- */

static char *resolve(const char *root, const char *path) {
  size_t n = strlen(root) + strlen(path) + 2;
  char *p = malloc(n);
  if (!p) abort();
  if (path[0] == '/' || !root[0] || strcmp(root, ".") == 0)
    snprintf(p, n, "%s", path);
  else
    snprintf(p, n, "%s/%s", root, path);
  return p;
}

static int present(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 || errno != ENOENT;
}

/* The files to recheck: tokenizer, shards, artifact (in that order). */
typedef struct targets {
  const manifest_file **f;
  const char **kind;
  char **path;
  size_t n;
} targets;

static void add_target(targets *t, const char *root, const manifest_file *f, const char *kind,
                       verify_report *r) {
  char *p = resolve(root, f->path);
  if (!present(p)) {
    r->n_skipped++;
    add_item(r, 0, p, "%s absent, skipped", kind);
    free(p);
    return;
  }
  t->f[t->n] = f, t->kind[t->n] = kind, t->path[t->n++] = p;
}

static void compare_one(const manifest *m, const manifest_file *f, const char *kind, const char *path,
                        const hash_result *h, verify_report *r);

void manifest_verify_files(const manifest *m, const char *root, verify_report *r) {
  size_t cap = m->n_shards + 2;
  targets t = {calloc(cap, sizeof *t.f), calloc(cap, sizeof *t.kind), calloc(cap, sizeof *t.path), 0};
  if (!t.f || !t.kind || !t.path) abort();
  add_target(&t, root, &m->tokenizer, "tokenizer", r);
  for (size_t i = 0; i < m->n_shards; i++) add_target(&t, root, &m->shards[i], "shard", r);
  if (m->has_artifact) add_target(&t, root, &m->artifact, "artifact", r);
  hash_result *h = calloc(t.n ? t.n : 1, sizeof *h);
  if (!h) abort();
  hash_pool_run((const char *const *)t.path, t.n, 0, h);
  for (size_t i = 0; i < t.n; i++) compare_one(m, t.f[i], t.kind[i], t.path[i], &h[i], r);
  for (size_t i = 0; i < t.n; i++) free(t.path[i]);
  free(h), free(t.f), free(t.kind), free(t.path);
}

/* After a digest matches: the recorded counts must match the file too. */
static void compare_counts(const manifest *m, const manifest_file *f, const char *kind,
                           const char *path, verify_report *r) {
  pg_error e;
  if (strcmp(kind, "shard") == 0) {
    shard s;
    if (shard_open(path, m->vocab_size, &s, &e) != 0) {
      add_item(r, 1, path, "shard is no longer valid: %s", e.msg);
      return;
    }
    if (s.n_tokens != f->tokens)
      add_item(r, 1, path, "shard %s: recorded %llu tokens, the file has %llu", f->name,
               (unsigned long long)f->tokens, (unsigned long long)s.n_tokens);
    shard_close(&s);
  } else if (strcmp(kind, "tokenizer") == 0) {
    sp_model sp;
    if (sp_model_load(path, &sp, &e) != 0) {
      add_item(r, 1, path, "tokenizer no longer loads: %s", e.msg);
      return;
    }
    if (sp.n_pieces != m->vocab_size)
      add_item(r, 1, path, "tokenizer: recorded vocab_size %u, the model has %u pieces", m->vocab_size,
               sp.n_pieces);
    sp_model_free(&sp);
  }
}

static void compare_one(const manifest *m, const manifest_file *f, const char *kind, const char *path,
                        const hash_result *h, verify_report *r) {
  char a[SHA256_HEX_LEN + 1], b[SHA256_HEX_LEN + 1];
  if (h->failed) {
    add_item(r, 1, path, "%s cannot be read: %s", kind, h->err.msg);
    return;
  }
  if (memcmp(h->digest, f->sha256, SHA256_LEN) != 0) {
    hex(f->sha256, a), hex(h->digest, b);
    add_item(r, 1, path, "%s %s changed: recorded sha256 %s, actual %s", kind, f->name, a, b);
    return;
  }
  if (strcmp(kind, "artifact") == 0 && h->size != f->bytes) {
    add_item(r, 1, path, "artifact: recorded %llu bytes, the file has %llu",
             (unsigned long long)f->bytes, (unsigned long long)h->size);
    return;
  }
  size_t before = r->n_failed;
  compare_counts(m, f, kind, path, r);
  if (r->n_failed == before) {
    r->n_checked++;
    add_item(r, 0, path, "%s sha256 matches", kind);
  }
}

/* ---- diff ---- */

static void differ(manifest_difference *d, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void differ(manifest_difference *d, const char *field, const char *fmt, ...) {
  d->equal = 0;
  snprintf(d->field, sizeof d->field, "%s", field);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->detail, sizeof d->detail, fmt, ap);
  va_end(ap);
}

/* Path of the first place two JSON values differ ("" if equal). */
static int json_first_diff(json_t *a, json_t *b, char *path, size_t cap) {
  if (json_equal(a, b)) return 0;
  size_t len = strlen(path);
  if (json_is_object(a) && json_is_object(b)) {
    const char *k;
    json_t *v;
    json_object_foreach(a, k, v) {
      snprintf(path + len, cap - len, ".%s", k);
      json_t *w = json_object_get(b, k);
      if (!w || json_first_diff(v, w, path, cap)) return 1;
    }
    json_object_foreach(b, k, v) {
      snprintf(path + len, cap - len, ".%s", k);
      if (!json_object_get(a, k)) return 1;
    }
    path[len] = 0;
    return 1;
  }
  if (json_is_array(a) && json_is_array(b) && json_array_size(a) == json_array_size(b)) {
    for (size_t i = 0; i < json_array_size(a); i++) {
      snprintf(path + len, cap - len, "[%zu]", i);
      if (json_first_diff(json_array_get(a, i), json_array_get(b, i), path, cap)) return 1;
    }
  }
  path[len] = 0;
  return 1;
}

static int diff_config(const manifest *a, const manifest *b, manifest_difference *d) {
  char path[160] = "predicate.config";
  if (!json_first_diff(a->config, b->config, path, sizeof path)) return 0;
  differ(d, path, "configuration differs at %s", path);
  return 1;
}

static int diff_file(const manifest_file *x, const manifest_file *y, const char *field,
                     manifest_difference *d) {
  char hx[SHA256_HEX_LEN + 1], hy[SHA256_HEX_LEN + 1];
  if (strcmp(x->name, y->name) != 0) {
    differ(d, field, "%s: name '%.100s' vs '%.100s'", field, x->name, y->name);
    return 1;
  }
  if (memcmp(x->sha256, y->sha256, SHA256_LEN) != 0) {
    hex(x->sha256, hx), hex(y->sha256, hy);
    differ(d, field, "%s (%.100s): sha256 %s vs %s", field, x->name, hx, hy);
    return 1;
  }
  if (x->tokens != y->tokens || x->bytes != y->bytes) {
    differ(d, field, "%s (%.100s): token or byte counts differ", field, x->name);
    return 1;
  }
  return 0;
}

static int diff_data(const manifest *a, const manifest *b, manifest_difference *d) {
  if (diff_file(&a->tokenizer, &b->tokenizer, "predicate.data.tokenizer", d)) return 1;
  if (a->vocab_size != b->vocab_size) {
    differ(d, "predicate.data.tokenizer.vocab_size", "vocab_size %u vs %u", a->vocab_size, b->vocab_size);
    return 1;
  }
  size_t n = a->n_shards < b->n_shards ? a->n_shards : b->n_shards;
  for (size_t i = 0; i < n; i++) {
    char f[64];
    snprintf(f, sizeof f, "predicate.data.shards[%zu]", i);
    if (diff_file(&a->shards[i], &b->shards[i], f, d)) return 1;
  }
  if (a->n_shards != b->n_shards) {
    differ(d, "predicate.data.shards", "%zu shards vs %zu", a->n_shards, b->n_shards);
    return 1;
  }
  return 0;
}

static void step_diff(const manifest_step *x, const manifest_step *y, size_t i, manifest_difference *d) {
  char fx[64], fy[64], f[80];
  manifest_f32_text(x->loss_bits, fx, sizeof fx);
  manifest_f32_text(y->loss_bits, fy, sizeof fy);
  snprintf(f, sizeof f, "predicate.losses.steps[%zu].loss_bits", i);
  differ(d, f, "step %llu: loss_bits 0x%08x (%s) vs 0x%08x (%s)", (unsigned long long)x->step,
         x->loss_bits, fx, y->loss_bits, fy);
  d->is_step = 1;
  d->step = x->step;
  d->a_bits = x->loss_bits;
  d->b_bits = y->loss_bits;
}

static int diff_steps(const manifest *a, const manifest *b, manifest_difference *d) {
  size_t n = a->n_steps < b->n_steps ? a->n_steps : b->n_steps;
  for (size_t i = 0; i < n; i++) {
    const manifest_step *x = &a->steps[i], *y = &b->steps[i];
    char f[80];
    snprintf(f, sizeof f, "predicate.losses.steps[%zu]", i);
    if (x->step != y->step) {
      differ(d, f, "step numbers differ at index %zu: %llu vs %llu", i, (unsigned long long)x->step,
             (unsigned long long)y->step);
      return 1;
    }
    if (x->loss_bits != y->loss_bits) {
      step_diff(x, y, i, d);
      return 1;
    }
    if (x->has_lr_mult != y->has_lr_mult || x->lr_mult_bits != y->lr_mult_bits) {
      differ(d, f, "step %llu: lr_mult_bits differ", (unsigned long long)x->step);
      return 1;
    }
  }
  if (a->n_steps != b->n_steps) {
    differ(d, "predicate.losses.steps", "%zu steps vs %zu", a->n_steps, b->n_steps);
    return 1;
  }
  if (memcmp(a->head, b->head, SHA256_LEN) != 0) {
    differ(d, "predicate.losses.chain", "chain heads differ although every step agrees");
    return 1;
  }
  return 0;
}

static int diff_rest(const manifest *a, const manifest *b, manifest_difference *d) {
  if (a->total_steps != b->total_steps) {
    differ(d, "predicate.schedule.total_steps", "total steps %lld vs %lld", (long long)a->total_steps,
           (long long)b->total_steps);
    return 1;
  }
  if (a->has_artifact != b->has_artifact ||
      (a->has_artifact && diff_file(&a->artifact, &b->artifact, "predicate.artifact", d))) {
    if (d->equal) differ(d, "predicate.artifact", "only one manifest records an artifact");
    return 1;
  }
  if (!json_equal(a->evaluation, b->evaluation)) {
    differ(d, "predicate.evaluation", "evaluation results differ");
    return 1;
  }
  return 0;
}

static void note_info(const manifest *a, const manifest *b, manifest_difference *d) {
  struct { const char *name; json_t *x, *y; } parts[] = {
      {"code", a->code, b->code},
      {"environment", a->environment, b->environment},
      {"timing", a->timing, b->timing},
  };
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
    if (json_equal(parts[i].x, parts[i].y)) continue;
    size_t l = strlen(d->info);
    snprintf(d->info + l, sizeof d->info - l, "%s%s", l ? ", " : "", parts[i].name);
  }
}

void manifest_diff(const manifest *a, const manifest *b, manifest_difference *d) {
  memset(d, 0, sizeof *d);
  d->equal = 1;
  if (!diff_config(a, b, d) && a->seed != b->seed)
    differ(d, "predicate.seed", "seed %llu vs %llu", (unsigned long long)a->seed,
           (unsigned long long)b->seed);
  if (d->equal && !diff_data(a, b, d) && !diff_steps(a, b, d)) diff_rest(a, b, d);
  note_info(a, b, d);
}
