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

/* 1 if the expression e[0..n) names one of d as a value: a word that is
 * not an attribute's base (`h` of `h.x` reads another name), not a
 * keyword argument's name (`seed` of `f(seed=3)`), not inside a string
 * literal. */
static int mentions(const char *e, size_t n, const names *d) {
  char *b = pysrc_blank_strings(e, n);
  if (!b) return 0;
  int hit = 0;
  for (size_t i = 0; i < n && !hit;) {
    if (!pysrc_word_char(b[i])) {
      i++;
      continue;
    }
    size_t j = i;
    while (j < n && pysrc_word_char(b[j])) j++;
    const int base = b[j] == '.', kwarg = j < n && b[j] == '=' && b[j + 1] != '=';
    if (!isdigit((unsigned char)b[i]) && !base && !kwarg) hit = has_name(d, b + i, j - i);
    i = j;
  }
  free(b);
  return hit;
}

/* The last name of the field `KEY:{EXPR}` in a string literal of t, into
 * out; 0 if t prints no such field or EXPR is no dotted name. */
static int printed_field(const py_stmt *t, const char *key, char *out, size_t cap) {
  const size_t kl = strlen(key);
  size_t pos = 0;
  py_str s;
  while (pysrc_next_string(t->text, t->len, &pos, &s)) {
    for (size_t i = 0; i + kl + 2 <= s.len; i++) {
      if (memcmp(s.body + i, key, kl) || s.body[i + kl] != ':' || s.body[i + kl + 1] != '{')
        continue;
      if (i && pysrc_word_char(s.body[i - 1])) continue;
      const size_t a = i + kl + 2;
      size_t last;
      const size_t k = pysrc_dotted_name(s.body + a, s.len - a, &last);
      if (!k || a + k >= s.len || !strchr("}:!", s.body[a + k]) || k - last >= cap) continue;
      memcpy(out, s.body + a + last, k - last);
      out[k - last] = 0;
      return 1;
    }
  }
  return 0;
}

int seed_derived_key(const py_src *src, const char *key) {
  char want[NAME_CAP];
  int found = 0;
  for (size_t i = 0; *key && i < src->n && !found; i++)
    found = printed_field(&src->v[i], key, want, sizeof want);
  if (!found) return 0;
  names *d = calloc(1, sizeof *d);
  if (!d) return 0;
  add_name(d, "seed", 4);
  int derived = 0;
  for (int round = 0; round < SEED_DERIVED_ROUNDS && !derived; round++) {
    const size_t before = d->n;
    for (size_t i = 0; i < src->n; i++) {
      const py_stmt *t = &src->v[i];
      size_t len, last, value;
      if (!pysrc_assignment(t, &len, &last, &value) || has_name(d, t->text + last, len - last))
        continue;
      if (mentions(t->text + value, t->len - value, d)) add_name(d, t->text + last, len - last);
    }
    derived = has_name(d, want, strlen(want));
    if (d->n == before) break;
  }
  free(d);
  return derived;
}
