/* A submission's shipped Python texts (verifier/shipped_text.h). */
#include "verifier/shipped_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "verifier/code_count.h"

int shipped_texts_load(const submission *s, shipped_texts *out) {
  memset(out, 0, sizeof *out);
  if (!s->n_code) return 0;
  out->v = calloc(2 * s->n_code, sizeof *out->v);
  out->raw = calloc(s->n_code, sizeof *out->raw);
  out->wrap = calloc(s->n_code, sizeof *out->wrap);
  if (!out->v || !out->raw || !out->wrap) return -1;
  out->files = s->n_code;
  for (size_t i = 0; i < s->n_code; i++) {
    const char *rel = s->code[i].rel;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", s->dir, rel);
    size_t len;
    pg_error err;
    if (file_read_all(path, CODE_MAX_SOURCE_BYTES, &out->raw[i], &len, &err)) continue;
    out->v[out->n++] = (shipped_text){.name = rel, .text = (const char *)out->raw[i], .len = len};
    code_wrapper *w = &out->wrap[i];
    if (code_unwrap((const char *)out->raw[i], len, rel, w, &err))
      out->undecoded++;
    else if (w->found)
      out->v[out->n++] = (shipped_text){.name = rel, .decoded = 1, .text = w->text, .len = w->len};
  }
  for (size_t i = 0; i < out->n; i++) {
    shipped_text *x = &out->v[i];
    pg_error err;
    x->lexed = !pysrc_parse(x->text, x->len, x->name, &x->src, &err);
  }
  return 0;
}

int shipped_text_runs(const shipped_texts *t, size_t i) {
  const shipped_text *x = &t->v[i];
  return x->decoded || i + 1 >= t->n || !t->v[i + 1].decoded || strcmp(t->v[i + 1].name, x->name);
}

void shipped_texts_free(shipped_texts *t) {
  for (size_t i = 0; i < t->n; i++)
    if (t->v[i].lexed) pysrc_free(&t->v[i].src);
  for (size_t i = 0; i < t->files; i++) {
    free(t->raw[i]);
    code_wrapper_free(&t->wrap[i]);
  }
  free(t->raw);
  free(t->wrap);
  free(t->v);
  memset(t, 0, sizeof *t);
}
