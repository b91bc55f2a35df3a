/* Comma-separated number lists: each item is one strtod number, whole. */
#include "verifier/value_list.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ITEM_ECHO 40 /* characters of a bad item quoted back in messages */

/* Parse the item text[0..len) (blanks trimmed) as the k-th value. */
static int parse_item(const char *text, size_t len, size_t k, const char *option, double *v,
                      pg_error *err) {
  while (len && isspace((unsigned char)*text)) text++, len--;
  while (len && isspace((unsigned char)text[len - 1])) len--;
  if (!len) return pg_fail(err, option, -1, "item %zu is empty", k);
  char buf[64];
  if (len >= sizeof buf)
    return pg_fail(err, option, -1, "item %zu ('%.*s...') is too long to be a number", k,
                   ITEM_ECHO, text);
  memcpy(buf, text, len);
  buf[len] = 0;
  char *end;
  *v = strtod(buf, &end);
  if (end == buf || *end)
    return pg_fail(err, option, -1, "item %zu ('%.*s') is not a number", k, ITEM_ECHO, buf);
  if (!isfinite(*v))
    return pg_fail(err, option, -1, "item %zu ('%.*s') is not a finite number", k, ITEM_ECHO, buf);
  return 0;
}

int parse_value_list(const char *text, const char *option, double **out, size_t *n,
                     pg_error *err) {
  *out = NULL;
  *n = 0;
  size_t cap = 1;
  for (const char *p = text; *p; p++) cap += (*p == ',');
  double *v = malloc(cap * sizeof *v);
  if (!v) return pg_fail(err, option, -1, "out of memory for %zu values", cap);
  const char *item = text;
  for (size_t k = 0; k < cap; k++) {
    const char *comma = strchr(item, ',');
    size_t len = comma ? (size_t)(comma - item) : strlen(item);
    if (parse_item(item, len, k + 1, option, &v[k], err)) {
      free(v);
      return -1;
    }
    item += len + 1;
  }
  *out = v;
  *n = cap;
  return 0;
}
