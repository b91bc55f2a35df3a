/* libFuzzer: the reader of trainers on the validation stream
 * (verifier/val_train.h) on any Python text, split at its first NUL byte
 * into two texts so that a function defined in one may be called from
 * the other. It must end, find no more trainers than asked, name only
 * texts and lines that exist, and keep every mark a string of five to
 * VT_MARK_LEN - 1 bytes that val_train_mark_at finds at the start of a
 * line holding it. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "verifier/val_train.h"

static size_t lines_of(const uint8_t *d, size_t n) {
  size_t l = 1;
  for (size_t i = 0; i < n; i++) l += d[i] == '\n';
  return l;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nul = memchr(data, 0, size);
  size_t n0 = nul ? (size_t)(nul - data) : size;
  const uint8_t *p[2] = {data, nul ? nul + 1 : data + size};
  size_t len[2] = {n0, nul ? size - n0 - 1 : 0};
  py_src src[2];
  pg_error e;
  if (pysrc_parse((const char *)p[0], len[0], "a.py", &src[0], &e)) return 0;
  if (pysrc_parse((const char *)p[1], len[1], "b.py", &src[1], &e)) {
    pysrc_free(&src[0]);
    return 0;
  }
  val_trainer t[3];
  size_t k = val_train_scan(src, 2, t, 3);
  if (k > 3) __builtin_trap();
  for (size_t i = 0; i < k; i++) {
    if (t[i].text > 1 || t[i].call_text > 1) __builtin_trap();
    size_t lines = lines_of(p[t[i].text], len[t[i].text]);
    if (!t[i].def_line || t[i].def_line > lines || t[i].read_line < t[i].def_line ||
        t[i].read_line > lines || t[i].backward_line > lines ||
        t[i].call_line > lines_of(p[t[i].call_text], len[t[i].call_text]))
      __builtin_trap();
    if (!t[i].func[0] || !t[i].stream[0] || strlen(t[i].read) >= sizeof t[i].read) __builtin_trap();
    if (t[i].n_marks > VT_MAX_MARKS) __builtin_trap();
    for (size_t m = 0; m < t[i].n_marks; m++) {
      size_t ml = strlen(t[i].marks[m]);
      if (ml < 5 || ml >= VT_MARK_LEN) __builtin_trap();
      if (val_train_mark_at(&t[i], t[i].marks[m], ml) < 0) __builtin_trap();
    }
  }
  pysrc_free(&src[0]);
  pysrc_free(&src[1]);
  return 0;
}
