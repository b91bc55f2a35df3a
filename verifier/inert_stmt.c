/* Statements that change no number (verifier/inert_stmt.h). */
#include "verifier/inert_stmt.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const INERT_PRINTERS[] = {
    "print",   "print0", "log",       "log0",         "log_rank0",   "info",
    "warning", "debug",  "log_print", "master_print", "rank0_print", "print_rank0"};
static const char *const INERT_PURE[] = {
    "set",     "frozenset", "range",      "len",       "max",   "min",      "int",
    "float",   "str",       "bool",       "tuple",     "list",  "dict",     "sorted",
    "sum",     "abs",       "round",      "enumerate", "zip",   "reversed", "any",
    "all",     "split",     "startswith", "endswith",  "strip", "lower",    "upper",
    "replace", "join",      "items",      "keys",      "values"};

static int ident(int c) { return isalnum((unsigned char)c) || c == '_'; }

static int in_list(const char *s, size_t n, const char *const *list, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (strlen(list[i]) == n && !memcmp(list[i], s, n)) return 1;
  return 0;
}

/* The length of the callee `a.b.name(` at the start of t, with name's
 * offset in *name, or 0 if t does not start with a call. */
static size_t callee(const char *t, size_t *name) {
  size_t k = 0, last = 0;
  if (!ident(t[0]) || isdigit((unsigned char)t[0])) return 0;
  while (ident(t[k]) || t[k] == '.') {
    if (t[k] == '.') last = k + 1;
    k++;
  }
  if (t[k] != '(' || last == k) return 0;
  *name = last;
  return k;
}

int inert_prints(const py_stmt *s) {
  size_t name = 0;
  const size_t k = s->header ? 0 : callee(s->text, &name);
  if (!k || s->text[s->len - 1] != ')') return 0;
  return in_list(s->text + name, k - name, INERT_PRINTERS,
                 sizeof INERT_PRINTERS / sizeof *INERT_PRINTERS);
}

/* t with every string literal's content blanked (its quotes kept), in a
 * malloc'd copy; NULL for memory. */
static char *without_strings(const char *t, size_t n) {
  char *b = malloc(n + 1);
  if (!b) return NULL;
  memcpy(b, t, n + 1);
  size_t pos = 0;
  py_str s;
  while (pysrc_next_string(b, n, &pos, &s))
    for (size_t i = (size_t)(s.body - b); i < (size_t)(s.body - b) + s.len && i < n; i++)
      b[i] = ' ';
  return b;
}

/* Runs of blanks squeezed to one, in place: string literals of other
 * lengths blank to runs of other lengths. */
static void squeeze(char *s) {
  size_t o = 0;
  for (size_t i = 0; s[i]; i++)
    if (s[i] != ' ' || !o || s[o - 1] != ' ') s[o++] = s[i];
  s[o] = 0;
}

int inert_same_print(const py_stmt *a, const py_stmt *b) {
  if (!inert_prints(a) || !inert_prints(b)) return 0;
  size_t na = 0, nb = 0;
  const size_t ka = callee(a->text, &na), kb = callee(b->text, &nb);
  if (ka != kb || memcmp(a->text, b->text, ka)) return 0;
  char *x = without_strings(a->text, a->len), *y = without_strings(b->text, b->len);
  int same = 0;
  if (x && y) {
    squeeze(x);
    squeeze(y);
    same = !strcmp(x, y);
  }
  free(x);
  free(y);
  return same;
}

/* 1 if word w[0..n) occurs in t outside a longer word. */
static int has_word(const char *t, const char *w, size_t n) {
  for (const char *p = strstr(t, w); p; p = strstr(p + 1, w)) {
    const int before = p > t && ident(p[-1]), after = ident(p[n]);
    if (!before && !after) return 1;
  }
  return 0;
}

int inert_dead_assignment(const py_src *src, size_t i) {
  const py_stmt *s = &src->v[i];
  if (s->header) return 0;
  const char *t = s->text;
  size_t k = 0;
  if (!ident(t[0]) || isdigit((unsigned char)t[0])) return 0;
  while (ident(t[k])) k++;
  if (t[k] != '=' || t[k + 1] == '=') return 0;
  char name[128];
  if (k >= sizeof name) return 0;
  memcpy(name, t, k);
  name[k] = 0;
  /* every call in the expression to a pure builtin or method */
  char *e = without_strings(t + k + 1, strlen(t + k + 1));
  if (!e) return 0;
  int pure = 1;
  for (size_t j = 0; e[j] && pure; j++) {
    if (e[j] != '(' || !j || !ident(e[j - 1])) continue;
    size_t b = j;
    while (b > 0 && ident(e[b - 1])) b--;
    pure = in_list(e + b, j - b, INERT_PURE, sizeof INERT_PURE / sizeof *INERT_PURE);
  }
  free(e);
  if (!pure) return 0;
  for (size_t j = 0; j < src->n; j++)
    if (j != i && has_word(src->v[j].text, name, k)) return 0;
  return 1;
}
