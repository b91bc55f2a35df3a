/* libFuzzer: the Python statement lexer. Every statement lies within the
 * text's lines, its parent is an earlier header, and the string literals
 * of its text are found inside it. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "verifier/pysrc.h"

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
  }
  pysrc_free(&s);
  return 0;
}
