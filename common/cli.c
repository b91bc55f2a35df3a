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

int cli_take_from_table(int argc, char **argv, int *i, const cli_value_opt *opts, size_t n,
                        const char **which) {
  for (size_t k = 0; k < n; k++) {
    const char *v = NULL;
    int r = cli_take_value(argc, argv, i, opts[k].name, &v);
    if (r == 0) continue;
    *which = opts[k].name;
    if (r < 0) return CLI_NO_VALUE;
    if (*opts[k].slot) return CLI_TWICE;
    *opts[k].slot = v;
    return CLI_TAKEN;
  }
  return CLI_UNKNOWN;
}
