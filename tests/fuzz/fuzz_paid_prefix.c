/* libFuzzer: the reader of stored validation targets
 * (verifier/paid_prefix.h) on any Python text, and its log-line test on
 * the same bytes. It must end, name only lines of the text (the zeroing
 * after the comparison), keep its statements and stem within their
 * buffers, and give the line test a plain yes or no. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "verifier/paid_prefix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  py_src s;
  pg_error e;
  if (pysrc_parse((const char *)data, size, "fuzz.py", &s, &e)) return 0;
  size_t lines = 1;
  for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
  paid_prefix p;
  memset(&p, 0, sizeof p);
  if (paid_prefix_scan(&s, &p)) {
    if (!p.mask_line || p.mask_line > lines || p.zero_line < p.mask_line || p.zero_line > lines)
      __builtin_trap();
    if (strlen(p.mask) >= sizeof p.mask || strlen(p.zero) >= sizeof p.zero ||
        strlen(p.stem) >= sizeof p.stem || (p.stem[0] && strlen(p.stem) < 6))
      __builtin_trap();
    int r = paid_prefix_line(p.stem, (const char *)data, size);
    if (r != 0 && r != 1) __builtin_trap();
  }
  int r = paid_prefix_line("paid_prefix", (const char *)data, size);
  if (r != 0 && r != 1) __builtin_trap();
  pysrc_free(&s);
  return 0;
}
