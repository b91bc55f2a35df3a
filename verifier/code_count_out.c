/* The code count as text and JSON; see code_count.h. */
#include <stdio.h>
#include <string.h>

#include "verifier/code_count.h"

/* 1234567 -> "1,234,567". */
static const char *grouped(int64_t v, char *buf, size_t cap) {
  char raw[32];
  snprintf(raw, sizeof raw, "%lld", (long long)(v < 0 ? -v : v));
  size_t n = strlen(raw), k = 0;
  if (v < 0 && k < cap - 1) buf[k++] = '-';
  for (size_t i = 0; i < n && k < cap - 2; i++) {
    if (i && (n - i) % 3 == 0) buf[k++] = ',';
    buf[k++] = raw[i];
  }
  buf[k] = 0;
  return buf;
}

static int name_width(const code_count *c) {
  size_t w = 8;
  for (size_t i = 0; i < c->n_sets; i++)
    for (size_t j = 0; j < c->sets[i].n; j++)
      if (strlen(c->sets[i].files[j].rel) > w) w = strlen(c->sets[i].files[j].rel);
  for (size_t i = 0; i < c->n_unused; i++)
    if (strlen(c->unused[i].rel) > w) w = strlen(c->unused[i].rel);
  return w > 48 ? 48 : (int)w;
}

static void print_file(FILE *out, const code_file *f, int w) {
  char b[32];
  fprintf(out, "    %-*s %11s  %s%s%s\n", w, f->rel, grouped(f->bytes, b, sizeof b),
          f->state == CODE_COUNTED ? "" : code_state_name(f->state),
          f->state == CODE_COUNTED ? "" : ": ", f->why);
}

void code_count_print(FILE *out, const code_count *c) {
  if (!c->n_sets && !c->n_unused) return;
  int w = name_width(c);
  char b[32], d[32];
  for (size_t i = 0; i < c->n_sets; i++) {
    const code_set *s = &c->sets[i];
    fprintf(out, "  counted code, entry %s: %s bytes", s->files[0].rel, grouped(s->counted, b, sizeof b));
    if (s->maybe) fprintf(out, " (+%s possibly loaded)", grouped(s->maybe, d, sizeof d));
    if (s->wrap.found)
      fprintf(out, "; self-extracting, %s %s, %s bytes decoded with %s", s->wrap.encoding,
              s->wrap.codec, grouped((int64_t)s->wrap.len, d, sizeof d), s->wrap.library);
    fputc('\n', out);
    for (size_t j = 0; j < s->n; j++) print_file(out, &s->files[j], w);
  }
  if (c->n_unused) fprintf(out, "  shipped code no entry script loads:\n");
  for (size_t i = 0; i < c->n_unused; i++) print_file(out, &c->unused[i], w);
  for (size_t i = 0; i < c->n_problems; i++)
    fprintf(out, "  unreadable code: %s: %s\n", c->problems[i].rel, c->problems[i].msg);
}

static json_t *file_json(const code_file *f) {
  json_t *o = json_object();
  json_object_set_new(o, "file", json_string(f->rel));
  json_object_set_new(o, "bytes", json_integer(f->bytes));
  json_object_set_new(o, "state", json_string(code_state_name(f->state)));
  json_object_set_new(o, "why", json_string(f->why));
  return o;
}

json_t *code_count_json(const code_count *c) {
  json_t *o = json_object(), *sets = json_array(), *unused = json_array(), *probs = json_array();
  json_object_set_new(o, "entry_rule", json_string(c->entry_rule));
  for (size_t i = 0; i < c->n_sets; i++) {
    const code_set *s = &c->sets[i];
    json_t *x = json_object(), *files = json_array();
    json_object_set_new(x, "entry", json_string(s->files[0].rel));
    json_object_set_new(x, "counted_bytes", json_integer(s->counted));
    json_object_set_new(x, "maybe_bytes", json_integer(s->maybe));
    json_t *dec = json_null();
    if (s->wrap.found) {
      dec = json_object();
      json_object_set_new(dec, "encoding", json_string(s->wrap.encoding));
      json_object_set_new(dec, "codec", json_string(s->wrap.codec));
      json_object_set_new(dec, "library", json_string(s->wrap.library));
      json_object_set_new(dec, "bytes", json_integer((json_int_t)s->wrap.len));
      json_object_set_new(dec, "line", json_integer(s->wrap.line));
    }
    json_object_set_new(x, "decoded", dec);
    for (size_t j = 0; j < s->n; j++) json_array_append_new(files, file_json(&s->files[j]));
    json_object_set_new(x, "files", files);
    json_array_append_new(sets, x);
  }
  for (size_t i = 0; i < c->n_unused; i++) json_array_append_new(unused, file_json(&c->unused[i]));
  for (size_t i = 0; i < c->n_problems; i++) {
    json_t *p = json_object();
    json_object_set_new(p, "file", json_string(c->problems[i].rel));
    json_object_set_new(p, "message", json_string(c->problems[i].msg));
    json_array_append_new(probs, p);
  }
  json_object_set_new(o, "sets", sets);
  json_object_set_new(o, "not_counted", unused);
  json_object_set_new(o, "problems", probs);
  return o;
}
