/* Small helpers for verbs that parse their own long options. */
#ifndef PGOLF_CLI_H
#define PGOLF_CLI_H

#include <stddef.h>

/* argv[*i] is `name VALUE` or `name=VALUE`: point *val at VALUE (advancing
 * *i past a separate value) and return 1; 0 if argv[*i] is not this
 * option; -1 if the value is missing. */
int cli_take_value(int argc, char **argv, int *i, const char *name, const char **val);

/* A table of `--name VALUE` options, each filling a string slot. */
typedef struct cli_value_opt {
  const char *name;
  const char **slot;
} cli_value_opt;

enum { CLI_TAKEN = 1, CLI_UNKNOWN = 0, CLI_NO_VALUE = -1, CLI_TWICE = -2 };

/* Match argv[*i] against the table: CLI_TAKEN (slot set, *i advanced past
 * a separate value), CLI_UNKNOWN, CLI_NO_VALUE or CLI_TWICE (an option
 * given twice); *which names the option for the last two. */
int cli_take_from_table(int argc, char **argv, int *i, const cli_value_opt *opts, size_t n,
                        const char **which);

#endif
