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

/* 1 if a and b differ only inside string literals (and in how many
 * blanks a literal of another length leaves). */
static int same_but_strings(const py_stmt *a, const py_stmt *b) {
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

int inert_same_print(const py_stmt *a, const py_stmt *b) {
  if (!inert_prints(a) || !inert_prints(b)) return 0;
  size_t na = 0, nb = 0;
  const size_t ka = callee(a, &na), kb = callee(b, &nb);
  return ka == kb && !memcmp(a->text, b->text, ka) && same_but_strings(a, b);
}

int inert_same_raise(const py_stmt *a, const py_stmt *b) {
  if (a->header || b->header || strncmp(a->text, "raise ", 6) || strncmp(b->text, "raise ", 6))
    return 0;
  return same_but_strings(a, b);
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

/* ---- imports and their guards ---- */

static int is_kw(const py_stmt *s, const char *kw) { return !strcmp(pysrc_keyword(s), kw); }

static int is_import(const py_stmt *s) {
  return !s->header && (is_kw(s, "import") || is_kw(s, "from"));
}

/* `A=None`, `A=B=False`, `HAS_X=True`: a flag, or a name set to None in
 * place of a module that did not import. */
static int constant_assignment(const py_stmt *s) {
  if (s->header) return 0;
  const char *t = s->text;
  size_t i = 0, targets = 0;
  for (;;) {
    size_t k = i;
    while (pysrc_word_char(t[k])) k++;
    if (k == i || t[k] != '=' || t[k + 1] == '=') break;
    targets++;
    i = k + 1;
  }
  return targets && (!strcmp(t + i, "None") || !strcmp(t + i, "False") || !strcmp(t + i, "True"));
}

/* `except`, `except ImportError`, `except(ImportError,ModuleNotFoundError)as e`:
 * a clause that catches a failed import (Exception included) and nothing
 * narrower that a computation would raise. */
static int import_except(const py_stmt *s) {
  if (!s->header || !is_kw(s, "except")) return 0;
  const char *t = s->text + strlen("except");
  if (!*t) return 1;
  static const char *const OK[] = {"ImportError", "ModuleNotFoundError", "Exception"};
  const char *end = strstr(t, "as ");
  size_t n = end ? (size_t)(end - t) : strlen(t);
  for (size_t i = 0; i < n;) {
    if (t[i] == ' ' || t[i] == '(' || t[i] == ')' || t[i] == ',') {
      i++;
      continue;
    }
    size_t k = i;
    while (k < n && pysrc_word_char(t[k])) k++;
    if (k == i || !in_list(t + i, k - i, OK, sizeof OK / sizeof *OK)) return 0;
    i = k;
  }
  return 1;
}

/* 1 if every statement whose parent is header h is an import or a
 * constant assignment (allow_import 0: only constants and `pass`), and
 * (need_import) one of them is an import. */
static int body_is(const py_src *src, size_t h, int allow_import, int need_import) {
  int imports = 0, any = 0;
  for (size_t j = h + 1; j < src->n && src->v[j].depth > src->v[h].depth; j++) {
    const py_stmt *b = &src->v[j];
    if (b->parent != (int32_t)h) return 0; /* a nested block: more than a guard */
    any = 1;
    if (allow_import && is_import(b))
      imports = 1;
    else if (!constant_assignment(b) && strcmp(b->text, "pass"))
      return 0;
  }
  return any && (imports || !need_import);
}

/* The `try` header an `except` header i belongs to, or -1. */
static long try_of(const py_src *src, size_t i) {
  for (size_t j = i; j-- > 0;) {
    const py_stmt *t = &src->v[j];
    if (t->depth > src->v[i].depth) continue;
    if (t->depth < src->v[i].depth || t->parent != src->v[i].parent || !t->header) return -1;
    if (!strcmp(t->text, "try")) return (long)j;
    if (!is_kw(t, "except")) return -1;
  }
  return -1;
}

/* A `try` whose body only imports (and sets flags), every clause after it
 * an import_except with only constants in its body: an import guard. */
static int import_guard(const py_src *src, size_t t) {
  const py_stmt *s = &src->v[t];
  if (!s->header || strcmp(s->text, "try") || !body_is(src, t, 1, 1)) return 0;
  int clauses = 0;
  for (size_t j = t + 1; j < src->n && src->v[j].depth >= s->depth; j++) {
    const py_stmt *c = &src->v[j];
    if (c->depth > s->depth) continue;
    if (c->parent != s->parent || !c->header || !is_kw(c, "except")) break;
    if (!import_except(c) || !body_is(src, j, 0, 0)) return 0;
    clauses++;
  }
  return clauses > 0;
}

/* The names `import a.b as c, d` or `from m import(x as y,z)` binds, each
 * tested unused (mentioned by no other statement of src). 0 for `*`. */
static int import_unused(const py_src *src, size_t i) {
  const py_stmt *s = &src->v[i];
  const char *t = s->text, *p;
  if (is_kw(s, "from")) {
    p = strstr(t, " import");
    if (!p) return 0;
    p += strlen(" import");
  } else {
    p = t + strlen("import");
  }
  if (strchr(p, '*')) return 0;
  while (*p) {
    while (*p == ' ' || *p == '(' || *p == ')' || *p == ',') p++;
    if (!*p) break;
    const char *name = p;
    size_t n = 0;
    while (pysrc_word_char(p[n])) n++;
    if (!n) return 0;
    const char *end = p + n;
    while (*end == '.' || pysrc_word_char(*end)) end++; /* a.b.c binds a */
    if (!strncmp(end, " as ", 4)) {
      name = end + 4;
      n = 0;
      while (pysrc_word_char(name[n])) n++;
      if (!n) return 0;
      end = name + n;
    }
    char w[128];
    if (n >= sizeof w) return 0;
    memcpy(w, name, n);
    w[n] = 0;
    for (size_t j = 0; j < src->n; j++)
      if (j != i && has_word(src->v[j].text, w, n)) return 0;
    p = end;
  }
  return 1;
}

int inert_import(const py_src *src, size_t i) {
  const py_stmt *s = &src->v[i];
  const int32_t up = s->parent;
  if (is_import(s)) return (up >= 0 && import_guard(src, (size_t)up)) || import_unused(src, i);
  if (s->header && !strcmp(s->text, "try")) return import_guard(src, i);
  if (import_except(s)) {
    long t = try_of(src, i);
    return t >= 0 && import_guard(src, (size_t)t);
  }
  if (up < 0 || !(constant_assignment(s) || !strcmp(s->text, "pass"))) return 0;
  const py_stmt *h = &src->v[up];
  if (h->header && !strcmp(h->text, "try")) return import_guard(src, (size_t)up);
  long t = import_except(h) ? try_of(src, (size_t)up) : -1;
  return t >= 0 && import_guard(src, (size_t)t);
}
