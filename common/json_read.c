#include "common/json_read.h"

#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"

int json_read_buf(const uint8_t *buf, size_t len, const char *name, json_t **out, pg_error *err) {
  json_error_t je;
  *out = json_loadb((const char *)buf, len, JSON_REJECT_DUPLICATES, &je);
  if (*out) return 0;
  if (je.line > 0)
    return pg_fail_line(err, name, je.line, "invalid JSON: %s (column %d)", je.text, je.column);
  return pg_fail(err, name, -1, "invalid JSON: %s", je.text);
}

int json_read_file(const char *path, size_t max_bytes, json_t **out, pg_error *err) {
  uint8_t *buf = NULL;
  size_t len = 0;
  *out = NULL;
  if (file_read_all(path, max_bytes, &buf, &len, err) != 0) return -1;
  int rc = json_read_buf(buf, len, path, out, err);
  free(buf);
  return rc;
}

int json_write_pretty(const json_t *j, char **out, size_t *len, pg_error *err) {
  char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  if (!s) return pg_fail(err, "", -1, "cannot serialise JSON (out of memory?)");
  size_t n = strlen(s);
  char *r = realloc(s, n + 2);
  if (!r) {
    free(s);
    return pg_fail(err, "", -1, "out of memory");
  }
  r[n] = '\n';
  r[n + 1] = 0;
  *out = r;
  *len = n + 1;
  return 0;
}
