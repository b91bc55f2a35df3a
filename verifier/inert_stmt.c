/* Statements that change no number (verifier/inert_stmt.h). */
#include "verifier/inert_stmt.h"

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

static int in_list(const char *s, size_t n, const char *const *list, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (strlen(list[i]) == n && !memcmp(list[i], s, n)) return 1;
  return 0;
}

/* The length of the callee `a.b.name` before the '(' that follows it at
 * the start of s, with name's offset in *name; 0 if s does not start
 * with a call. */
static size_t callee(const py_stmt *s, size_t *name) {
  const size_t k = s->header ? 0 : pysrc_dotted_name(s->text, s->len, name);
  return k && s->text[k] == '(' ? k : 0;
}

int inert_prints(const py_stmt *s) {
  size_t name = 0;
  const size_t k = callee(s, &name);
  if (!k || s->text[s->len - 1] != ')') return 0;
  return in_list(s->text + name, k - name, INERT_PRINTERS,
                 sizeof INERT_PRINTERS / sizeof *INERT_PRINTERS);
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
  const size_t ka = callee(a, &na), kb = callee(b, &nb);
  if (ka != kb || memcmp(a->text, b->text, ka)) return 0;
  char *x = pysrc_blank_strings(a->text, a->len), *y = pysrc_blank_strings(b->text, b->len);
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
    const int before = p > t && pysrc_word_char(p[-1]), after = pysrc_word_char(p[n]);
    if (!before && !after) return 1;
  }
  return 0;
}

int inert_dead_assignment(const py_src *src, size_t i) {
  const py_stmt *s = &src->v[i];
  size_t k, last, value;
  char name[128];
  if (!pysrc_assignment(s, &k, &last, &value) || last || k >= sizeof name) return 0;
  memcpy(name, s->text, k);
  name[k] = 0;
  /* every call in the expression to a pure builtin or method */
  char *e = pysrc_blank_strings(s->text + value, s->len - value);
  if (!e) return 0;
  int pure = 1;
  for (size_t j = 0; e[j] && pure; j++) {
    if (e[j] != '(' || !j || !pysrc_word_char(e[j - 1])) continue;
    size_t b = j;
    while (b > 0 && pysrc_word_char(e[b - 1])) b--;
    pure = in_list(e + b, j - b, INERT_PURE, sizeof INERT_PURE / sizeof *INERT_PURE);
  }
  free(e);
  if (!pure) return 0;
  for (size_t j = 0; j < src->n; j++)
    if (j != i && has_word(src->v[j].text, name, k)) return 0;
  return 1;
}
