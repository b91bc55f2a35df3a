/* libFuzzer target: the --new/--record value-list parser. Whatever the
 * text, it either fails with a message or returns that many finite values,
 * one per comma-separated item. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/value_list.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0; /* the command line hands over C strings */
  size_t commas = 0;
  for (size_t i = 0; text[i]; i++) commas += text[i] == ',';
  double *v;
  size_t n;
  pg_error err;
  if (parse_value_list(text, "--new", &v, &n, &err) == 0) {
    if (n != commas + 1) abort();
    for (size_t i = 0; i < n; i++)
      if (!isfinite(v[i])) abort();
    free(v);
  } else if (v != NULL || !err.msg[0]) {
    abort();
  }
  free(text);
  return 0;
}
