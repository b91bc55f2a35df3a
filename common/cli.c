#include "common/cli.h"

#include <string.h>

int cli_take_value(int argc, char **argv, int *i, const char *name, const char **val) {
  size_t n = strlen(name);
  const char *a = argv[*i];
  if (strncmp(a, name, n) != 0) return 0;
  if (a[n] == '=') {
    *val = a + n + 1;
    return 1;
  }
  if (a[n]) return 0;
  if (*i + 1 >= argc) return -1;
  *val = argv[++*i];
  return 1;
}
