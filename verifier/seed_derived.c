/* Settings printed from the seed (verifier/seed_derived.h). */
#include "verifier/seed_derived.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/pysrc.h"

#define MAX_NAMES 64
#define NAME_CAP 64

typedef struct names {
  char v[MAX_NAMES][NAME_CAP];
  size_t n;
} names;

static int ident(int c) { return isalnum((unsigned char)c) || c == '_'; }

static int has_name(const names *n, const char *s, size_t len) {
  for (size_t i = 0; i < n->n; i++)
    if (strlen(n->v[i]) == len && !memcmp(n->v[i], s, len)) return 1;
  return 0;
}

static void add_name(names *n, const char *s, size_t len) {
  if (n->n < MAX_NAMES && len < NAME_CAP && !has_name(n, s, len)) {
    memcpy(n->v[n->n], s, len);
    n->v[n->n++][len] = 0;
  }
}

/* The target's last name and the right side of t, a normalized statement
 * (blanks removed): `a.b.c=...` or `x:int=...`. 0 if t is no assignment
 * to one name (a tuple, an augmented assignment, a comparison). */
static int assignment(const char *t, const char **name, size_t *nlen, const char **rhs) {
  size_t k = 0, last = 0;
  if (!ident(t[0]) || isdigit((unsigned char)t[0])) return 0;
  while (ident(t[k]) || t[k] == '.') {
    if (t[k] == '.') last = k + 1;
    k++;
  }
  const size_t end = k;
  if (last == end) return 0;
  if (t[k] == ':') { /* an annotation, up to the '=' outside its brackets */
    int depth = 0;
    for (k++; t[k]; k++) {
      if (t[k] == '[' || t[k] == '(')
        depth++;
      else if (t[k] == ']' || t[k] == ')')
        depth--;
      else if (!depth && t[k] == '=')
        break;
    }
  }
  if (t[k] != '=' || t[k + 1] == '=') return 0;
  *name = t + last;
  *nlen = end - last;
  *rhs = t + k + 1;
  return 1;
}

/* 1 if the expression e names one of d as a value: a word that is not an
 * attribute's base (`h` of `h.x` reads another name), not a keyword
 * argument's name (`seed` of `f(seed=3)`), not inside a string literal. */
static int mentions(const char *e, const names *d) {
  size_t n = strlen(e);
  char *b = malloc(n + 1);
  if (!b) return 0;
  memcpy(b, e, n + 1);
  size_t pos = 0;
  py_str s;
  while (pysrc_next_string(b, n, &pos, &s))
    for (size_t i = s.at; i < s.end && i < n; i++) b[i] = ' ';
  int hit = 0;
  for (size_t i = 0; i < n && !hit;) {
    if (!ident(b[i])) {
      i++;
      continue;
    }
    size_t j = i;
    while (j < n && ident(b[j])) j++;
    const int base = b[j] == '.', kwarg = j < n && b[j] == '=' && b[j + 1] != '=';
    if (!isdigit((unsigned char)b[i]) && !base && !kwarg) hit = has_name(d, b + i, j - i);
    i = j;
  }
  free(b);
  return hit;
}

/* The last name of the field `KEY:{EXPR}` in a string literal of t, into
 * out; 0 if t prints no such field or EXPR is no dotted name. */
static int printed_field(const char *t, const char *key, char *out, size_t cap) {
  const size_t tl = strlen(t), kl = strlen(key);
  size_t pos = 0;
  py_str s;
  while (pysrc_next_string(t, tl, &pos, &s)) {
    for (size_t i = 0; i + kl + 2 <= s.len; i++) {
      if (memcmp(s.body + i, key, kl) || s.body[i + kl] != ':' || s.body[i + kl + 1] != '{')
        continue;
      if (i && ident(s.body[i - 1])) continue;
      size_t a = i + kl + 2, j = a, last = a;
      while (j < s.len && (ident(s.body[j]) || s.body[j] == '.')) {
        if (s.body[j] == '.') last = j + 1;
        j++;
      }
      if (j >= s.len || (s.body[j] != '}' && s.body[j] != ':' && s.body[j] != '!') || last == j ||
          j - last >= cap)
        continue;
      memcpy(out, s.body + last, j - last);
      out[j - last] = 0;
      return 1;
    }
  }
  return 0;
}

int seed_derived_key(const char *text, size_t len, const char *key) {
  py_src src;
  pg_error err;
  if (!*key || pysrc_parse(text, len, "script", &src, &err)) return 0;
  char want[NAME_CAP];
  int found = 0;
  for (size_t i = 0; i < src.n && !found; i++)
    found = printed_field(src.v[i].text, key, want, sizeof want);
  int derived = 0;
  if (found) {
    names *d = calloc(1, sizeof *d);
    if (d) {
      add_name(d, "seed", 4);
      for (int round = 0; round < SEED_DERIVED_ROUNDS && !derived; round++) {
        const size_t before = d->n;
        for (size_t i = 0; i < src.n; i++) {
          const char *name, *rhs;
          size_t nl;
          if (src.v[i].header || !assignment(src.v[i].text, &name, &nl, &rhs)) continue;
          if (!has_name(d, name, nl) && mentions(rhs, d)) add_name(d, name, nl);
        }
        derived = has_name(d, want, strlen(want));
        if (d->n == before) break;
      }
      free(d);
    }
  }
  pysrc_free(&src);
  return derived;
}
