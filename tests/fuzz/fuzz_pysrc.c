/* libFuzzer: the Python statement lexer. Every statement lies within the
 * text's lines, its parent is an earlier header, and the string literals
 * of its text are found inside it. The seed-derived settings reader
 * (verifier/seed_derived.h) runs on the same text, for a fixed key and for
 * the text's first word, and must answer 0 or 1; so must the inert
 * statement tests (verifier/inert_stmt.h) on every statement. An
 * assignment's target and value lie inside its statement, and blanking a
 * statement's strings keeps its length. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/inert_stmt.h"
#include "verifier/pysrc.h"
#include "verifier/seed_derived.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  py_src s;
  pg_error e;
  if (pysrc_parse((const char *)data, size, "fuzz.py", &s, &e)) return 0;
  size_t lines = 1;
  for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
  for (size_t i = 0; i < s.n; i++) {
    const py_stmt *t = &s.v[i];
    if (!t->line || t->line > lines || strlen(t->text) != t->len || !t->len) __builtin_trap();
    if (t->parent >= (int32_t)i || (t->parent >= 0 && !s.v[t->parent].header)) __builtin_trap();
    size_t pos = 0;
    py_str str;
    while (pysrc_next_string(t->text, t->len, &pos, &str))
      if (str.end > t->len || str.at >= str.end || str.body + str.len > t->text + t->len)
        __builtin_trap();
    (void)pysrc_keyword(t);
    const int p = inert_prints(t), d = inert_dead_assignment(&s, i);
    const int same = i ? inert_same_print(&s.v[i - 1], t) : 0;
    if ((p | d | same) & ~1) __builtin_trap();
    size_t len, last, value;
    if (pysrc_assignment(t, &len, &last, &value) && (last >= len || value > t->len))
      __builtin_trap();
    char *blank = pysrc_blank_strings(t->text, t->len);
    if (blank && strlen(blank) != t->len) __builtin_trap();
    free(blank);
  }
  char key[32];
  size_t k = 0;
  while (k < size && k < sizeof key - 1 && (data[k] == '_' || (data[k] >= 'a' && data[k] <= 'z')))
    key[k] = (char)data[k], k++;
  key[k] = 0;
  const int a = seed_derived_key(&s, "batch_stride"), b = seed_derived_key(&s, key);
  if ((a != 0 && a != 1) || (b != 0 && b != 1)) __builtin_trap();
  pysrc_free(&s);
  return 0;
}
