/* Small helpers for verbs that parse their own long options. */
#ifndef PGOLF_CLI_H
#define PGOLF_CLI_H

/* argv[*i] is `name VALUE` or `name=VALUE`: point *val at VALUE (advancing
 * *i past a separate value) and return 1; 0 if argv[*i] is not this
 * option; -1 if the value is missing. */
int cli_take_value(int argc, char **argv, int *i, const char *name, const char **val);

#endif
