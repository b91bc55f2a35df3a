/* Human and JSON summaries of manifests and of diffs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifests/manifest.h"

#define MAX_WARNINGS 10

void manifest_f32_text(uint32_t bits, char *buf, size_t cap) {
  float f;
  memcpy(&f, &bits, sizeof f);
  if (isnan(f))
    snprintf(buf, cap, "nan");
  else if (isinf(f))
    snprintf(buf, cap, "%sinf", f < 0 ? "-" : "");
  else
    snprintf(buf, cap, "%.9g", (double)f);
}

static int f32_finite(uint32_t bits) { return (bits & 0x7f800000u) != 0x7f800000u; }

static const char *str_or(json_t *obj, const char *key, const char *dflt) {
  const char *s = json_string_value(json_object_get(obj, key));
  return s ? s : dflt;
}

static void show_envelope(const dsse_envelope *e, FILE *out) {
  fprintf(out, "envelope:    DSSE, payloadType %s, %zu signature(s), not verified here\n",
          e->payload_type, e->n_sigs);
  for (size_t i = 0; i < e->n_sigs; i++) fprintf(out, "  keyid:     %.100s\n", e->sigs[i].keyid);
}

static void show_data(const manifest *m, FILE *out) {
  char h[SHA256_HEX_LEN + 1];
  sha256_hex(m->tokenizer.sha256, h);
  fprintf(out, "tokenizer:   %s (vocab %u, sha256 %s)\n", m->tokenizer.path, m->vocab_size, h);
  fprintf(out, "shards:      %zu\n", m->n_shards);
  for (size_t i = 0; i < m->n_shards; i++) {
    sha256_hex(m->shards[i].sha256, h);
    fprintf(out, "  %-5s %12llu tokens  %s  %s\n", m->shards[i].split,
            (unsigned long long)m->shards[i].tokens, h, m->shards[i].name);
  }
}

static void show_step(const char *label, const manifest_step *s, FILE *out) {
  char f[64];
  manifest_f32_text(s->loss_bits, f, sizeof f);
  fprintf(out, "%-12s step %llu, loss 0x%08x (%s)\n", label, (unsigned long long)s->step,
          s->loss_bits, f);
}

static void show_losses(const manifest *m, FILE *out) {
  char h[SHA256_HEX_LEN + 1];
  if (m->total_steps >= 0)
    fprintf(out, "steps:       %zu recorded, schedule %lld\n", m->n_steps, (long long)m->total_steps);
  else
    fprintf(out, "steps:       %zu recorded, schedule unknown\n", m->n_steps);
  if (m->n_steps) {
    show_step("first loss:", &m->steps[0], out);
    show_step("last loss:", &m->steps[m->n_steps - 1], out);
  }
  sha256_hex(m->head, h);
  fprintf(out, "chain head:  %s\n", h);
  size_t bad = 0;
  for (size_t i = 0; i < m->n_steps; i++) {
    if (f32_finite(m->steps[i].loss_bits)) continue;
    if (bad++ < MAX_WARNINGS) {
      char f[64];
      manifest_f32_text(m->steps[i].loss_bits, f, sizeof f);
      fprintf(out, "warning:     step %llu: loss is %s (0x%08x)\n",
              (unsigned long long)m->steps[i].step, f, m->steps[i].loss_bits);
    }
  }
  if (bad > MAX_WARNINGS) fprintf(out, "warning:     %zu steps in all have a non-finite loss\n", bad);
}

void manifest_show_text(const manifest_doc *d, FILE *out) {
  const manifest *m = &d->m;
  char h[SHA256_HEX_LEN + 1];
  if (d->is_envelope) show_envelope(&d->env, out);
  fprintf(out, "seed:        %llu\n", (unsigned long long)m->seed);
  char *cfg = json_dumps(m->config, JSON_COMPACT | JSON_PRESERVE_ORDER);
  fprintf(out, "config:      %.400s%s\n", cfg ? cfg : "?", cfg && strlen(cfg) > 400 ? "..." : "");
  free(cfg);
  fprintf(out, "code:        pgolf %s, source %s, %s\n", str_or(m->code, "pgolf_version", "?"),
          str_or(m->code, "source_digest", "?"), str_or(m->code, "compiler", "?"));
  show_data(m, out);
  show_losses(m, out);
  if (m->has_artifact) {
    sha256_hex(m->artifact.sha256, h);
    fprintf(out, "artifact:    %s, %llu bytes, sha256 %s\n", m->artifact.name,
            (unsigned long long)m->artifact.bytes, h);
  } else {
    fprintf(out, "artifact:    none\n");
  }
  json_t *env = m->environment;
  fprintf(out, "environment: %s, %lld online CPUs, %lld threads, world size %lld\n",
          str_or(env, "cpu_model", "unknown CPU"),
          (long long)json_integer_value(json_object_get(env, "online_cpus")),
          (long long)json_integer_value(json_object_get(env, "threads")),
          (long long)json_integer_value(json_object_get(env, "world_size")));
  fprintf(out, "kernel:      %s\n", str_or(env, "kernel", "unknown"));
}

static json_t *step_json(const manifest_step *s) {
  char f[64], b[16];
  manifest_f32_text(s->loss_bits, f, sizeof f);
  snprintf(b, sizeof b, "0x%08x", s->loss_bits);
  return json_pack("{s:I, s:s, s:s}", "step", (json_int_t)s->step, "loss_bits", b, "loss", f);
}

static json_t *warnings_json(const manifest *m) {
  json_t *w = json_array();
  for (size_t i = 0; i < m->n_steps; i++)
    if (!f32_finite(m->steps[i].loss_bits)) json_array_append_new(w, step_json(&m->steps[i]));
  return w;
}

json_t *manifest_show_json(const manifest_doc *d) {
  const manifest *m = &d->m;
  char h[SHA256_HEX_LEN + 1];
  sha256_hex(m->head, h);
  json_t *o = json_pack("{s:b, s:I, s:O, s:O, s:O, s:I, s:o, s:o, s:s, s:o, s:O}", "envelope",
                        d->is_envelope, "seed", (json_int_t)m->seed, "config", m->config, "code", m->code,
                        "data", json_object_get(json_object_get(m->root, "predicate"), "data"),
                        "steps", (json_int_t)m->n_steps, "first",
                        m->n_steps ? step_json(&m->steps[0]) : json_null(), "last",
                        m->n_steps ? step_json(&m->steps[m->n_steps - 1]) : json_null(),
                        "chain", h, "nonfinite_losses", warnings_json(m), "environment",
                        m->environment);
  if (o && d->is_envelope) {
    json_t *ids = json_array();
    for (size_t i = 0; i < d->env.n_sigs; i++) json_array_append_new(ids, json_string(d->env.sigs[i].keyid));
    json_object_set_new(o, "keyids", ids);
  }
  return o;
}

void manifest_diff_text(const manifest_difference *d, FILE *out) {
  if (d->equal)
    fprintf(out, "equal in every deterministic field\n");
  else
    fprintf(out, "differ: %s\n  %s\n", d->field, d->detail);
  if (d->info[0]) fprintf(out, "note: %s differ (not deterministic fields, not counted)\n", d->info);
}

json_t *manifest_diff_json(const manifest_difference *d) {
  json_t *info = json_array();
  char copy[sizeof d->info], *save = NULL;
  snprintf(copy, sizeof copy, "%s", d->info);
  for (char *t = strtok_r(copy, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
    json_array_append_new(info, json_string(t));
  json_t *o = json_pack("{s:b, s:s?, s:s?, s:o}", "equal", d->equal, "field",
                        d->equal ? NULL : d->field, "detail", d->equal ? NULL : d->detail,
                        "informational", info);
  if (o && d->is_step) {
    char a[16], b[16], fa[64], fb[64];
    snprintf(a, sizeof a, "0x%08x", d->a_bits);
    snprintf(b, sizeof b, "0x%08x", d->b_bits);
    manifest_f32_text(d->a_bits, fa, sizeof fa);
    manifest_f32_text(d->b_bits, fb, sizeof fb);
    json_object_set_new(o, "step", json_pack("{s:I, s:s, s:s, s:s, s:s}", "step", (json_int_t)d->step,
                                             "a_bits", a, "b_bits", b, "a_loss", fa, "b_loss", fb));
  }
  return o;
}
