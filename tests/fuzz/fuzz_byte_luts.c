/* libFuzzer: the byte-table reader (verifier/byte_luts.h) on any Python
 * text. It must end (its steps are bounded), name only tables and lines of
 * the text, give each kind either BL_UNSET or a count no larger than the
 * stand-in piece's text could make, and find the space table's names and
 * the statement adding them within the text; a constant bytes-per-token
 * ratio, when found, is a statement of the text and within its bounds. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "verifier/byte_luts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  py_src s;
  pg_error e;
  if (pysrc_parse((const char *)data, size, "fuzz.py", &s, &e)) return 0;
  size_t lines = 1;
  for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
  byte_luts l;
  byte_luts_scan(&s, &l);
  if (l.n > BL_MAX_FNS) __builtin_trap();
  for (size_t i = 0; i < l.n; i++) {
    const byte_lut_fn *fn = &l.fn[i];
    if (!fn->base_table[0] || !fn->line || fn->line > lines || fn->end_line < fn->line ||
        fn->end_line > lines)
      __builtin_trap();
    for (int k = 0; k < BL_KINDS; k++) {
      /* Sums of small counts: a wild value means an unbounded loop or
       * uninitialised state. */
      if (fn->base[k] != BL_UNSET && (fn->base[k] < -(1LL << 40) || fn->base[k] > (1LL << 40)))
        __builtin_trap();
      if (fn->base_line[k] > lines || strlen(fn->base_stmt[k]) >= sizeof fn->base_stmt[k])
        __builtin_trap();
    }
    char names[8][BL_MAX_NAME];
    size_t n = byte_luts_space_names(&s, fn, names, 0, 8);
    if (n > 8) __builtin_trap();
    for (size_t k = 0; k < n; k++)
      if (!names[k][0] || strlen(names[k]) >= BL_MAX_NAME) __builtin_trap();
    long j = byte_luts_space_added(&s, names, n, fn);
    if (j >= (long)s.n) __builtin_trap();
  }
  double bpt = 0;
  long c = byte_luts_constant_ratio(&s, &bpt);
  if (c >= (long)s.n || (c >= 0 && (bpt < 1.4 || bpt > 8.1))) __builtin_trap();
  pysrc_free(&s);
  return 0;
}
