/* One option parser for every verb. A verb describes its options in a
 * table of cli_option (long name, optional short name, kind, destination,
 * value placeholder, help); cli_parse fills the destinations from argv and
 * the same table prints the usage, so the help cannot drift from what is
 * accepted. Parsing never exits: it returns CLI_OK, CLI_HELP (the usage
 * was printed on stdout) or CLI_ERROR with a pg_error whose file is the
 * verb's name, so that pg_error_print shows `pgolf: VERB: message`.
 *
 * Accepted forms: `--name VALUE`, `--name=VALUE`, `-n VALUE`, `-nVALUE`;
 * options and positional arguments mix in any order; `--` ends the
 * options (what follows is positional, or goes to a CLI_REST entry); `-`
 * alone is positional; `--help` and `-h` print the usage. A value is the
 * next argument whatever it looks like (`--budget -3` gives "-3"). */
#ifndef PGOLF_CLI_H
#define PGOLF_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"

typedef enum cli_kind {
  CLI_KIND_END = 0,  /* ends a table */
  CLI_KIND_FLAG,     /* int: set to 1; takes no value */
  CLI_KIND_STRING,   /* const char *: the value (the last one given wins) */
  CLI_KIND_INT,      /* a signed integer of sizeof *dest bytes, in [ilo, ihi] */
  CLI_KIND_UNSIGNED, /* an unsigned integer of sizeof *dest bytes, in [ulo, uhi] */
  CLI_KIND_DOUBLE,   /* double: finite, in [dlo, dhi] when dlo < dhi */
  CLI_KIND_LIST,     /* cli_list: every value, in order (repeatable) */
  CLI_KIND_ARGS,     /* cli_args: the positional arguments */
  CLI_KIND_REST,     /* cli_args: everything after `--` (v NULL if no `--`) */
  CLI_KIND_CALLBACK  /* the callback does the work (several values, a tail) */
} cli_kind;

/* Repeated values; the verb provides the storage (v with room for cap). */
typedef struct cli_list {
  const char **v;
  size_t n, cap;
} cli_list;

/* A run of arguments inside argv. */
typedef struct cli_args {
  char **v;
  int n;
} cli_args;

typedef struct cli_parser cli_parser;
typedef struct cli_option cli_option;

/* A callback option's handler: inline_value is VALUE of `--name=VALUE`
 * (or `-nVALUE`), else NULL; it may take further arguments with cli_value,
 * cli_next, cli_peek and cli_take_rest. Returns 0, or -1 after cli_error. */
typedef int (*cli_callback)(cli_parser *p, const cli_option *o, const char *inline_value);

struct cli_option {
  cli_kind kind;
  const char *name; /* long name without "--"; NULL for ARGS and REST */
  char short_name;  /* 0 for none */
  void *dest;
  size_t size;      /* sizeof *dest, for INT and UNSIGNED */
  const char *arg;  /* value placeholder ("N", "FILE"); NULL for flags */
  const char *help; /* help text, '\n' continues it on the next line; NULL hides the entry */
  int64_t ilo, ihi;
  uint64_t ulo, uhi;
  double dlo, dhi;
  cli_callback callback;
};

/* Table entries: long name, short name (or 0), destination, value
 * placeholder, then the inclusive range for numbers, then the help. An
 * integer's range is also clamped to what its destination can hold;
 * CLI_DOUBLE takes any finite number. */
#define CLI_FLAG(l, s, d, h) \
  { .kind = CLI_KIND_FLAG, .name = (l), .short_name = (s), .dest = (d), .help = (h) }
#define CLI_STRING(l, s, d, a, h) \
  { .kind = CLI_KIND_STRING, .name = (l), .short_name = (s), .dest = (d), .arg = (a), .help = (h) }
#define CLI_INT(l, s, d, a, lo, hi, h)                                                      \
  {                                                                                         \
    .kind = CLI_KIND_INT, .name = (l), .short_name = (s), .dest = (d), .size = sizeof *(d), \
    .arg = (a), .help = (h), .ilo = (lo), .ihi = (hi)                                       \
  }
#define CLI_UNSIGNED(l, s, d, a, lo, hi, h)                                                      \
  {                                                                                              \
    .kind = CLI_KIND_UNSIGNED, .name = (l), .short_name = (s), .dest = (d), .size = sizeof *(d), \
    .arg = (a), .help = (h), .ulo = (lo), .uhi = (hi)                                            \
  }
#define CLI_DOUBLE(l, s, d, a, h) \
  { .kind = CLI_KIND_DOUBLE, .name = (l), .short_name = (s), .dest = (d), .arg = (a), .help = (h) }
#define CLI_DOUBLE_RANGE(l, s, d, a, lo, hi, h)                                                    \
  {                                                                                                \
    .kind = CLI_KIND_DOUBLE, .name = (l), .short_name = (s), .dest = (d), .arg = (a), .help = (h), \
    .dlo = (lo), .dhi = (hi)                                                                       \
  }
#define CLI_LIST(l, s, d, a, h) \
  { .kind = CLI_KIND_LIST, .name = (l), .short_name = (s), .dest = (d), .arg = (a), .help = (h) }
#define CLI_ARGS(d, a, h) \
  { .kind = CLI_KIND_ARGS, .dest = (d), .arg = (a), .help = (h) }
#define CLI_REST(d, a, h) \
  { .kind = CLI_KIND_REST, .dest = (d), .arg = (a), .help = (h) }
#define CLI_CALLBACK(l, s, d, a, cb, h)                                                 \
  {                                                                                     \
    .kind = CLI_KIND_CALLBACK, .name = (l), .short_name = (s), .dest = (d), .arg = (a), \
    .help = (h), .callback = (cb)                                                       \
  }
#define CLI_END \
  { .kind = CLI_KIND_END }

/* Every option that takes a value may be given only once ("option given
 * twice: --NAME"); without it the last value wins. Flags, lists and
 * callbacks are exempt. */
#define CLI_ONCE 1u

/* At most this many entries in a table (the parser tracks repeats). */
#define CLI_MAX_OPTIONS 64

typedef struct cli_command {
  const char *name;          /* "bpb", "manifest create": the prefix of every message */
  const char *usage;         /* synopsis lines, each from "pgolf"; continuations indented */
  const char *about;         /* prose after the synopsis, or NULL */
  const cli_option *options; /* ends with CLI_END */
  const char *footer;        /* text after the options (exit codes), or NULL */
  unsigned flags;            /* CLI_ONCE */
} cli_command;

enum { CLI_OK = 0, CLI_HELP = 1, CLI_ERROR = -1 };

/* Parse argv[1..argc) against c's table. CLI_OK: destinations filled,
 * positional arguments moved to the front of argv (after argv[0]) and
 * described by the ARGS entry; CLI_HELP: the usage went to stdout;
 * CLI_ERROR: err holds `VERB: message (try ...)`. Destinations of options
 * not given keep what the caller put there, so defaults and "was it
 * given" sentinels are the caller's. */
int cli_parse(const cli_command *c, int argc, char **argv, pg_error *err);

/* The exit code for cli_parse's result: PG_EXIT_OK after --help; for an
 * error it prints err first and gives PG_EXIT_USAGE. Not for CLI_OK. */
int cli_status(int parse_result, const pg_error *err);

/* The usage generated from the table: synopsis, prose, one line per
 * visible option (and -h, --help), footer. */
void cli_usage(const cli_command *c, FILE *out);

/* A verb's own usage error after parsing: fill err with
 * `VERB: message (try `pgolf VERB --help`)` and return -1 ... */
int cli_fail(pg_error *err, const cli_command *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* ... or print it at once and return PG_EXIT_USAGE. */
int cli_usage_error(const cli_command *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* For callbacks. The option as the user spelled it ("--seed", "-o"). */
const char *cli_option_name(const cli_parser *p);
/* The option's value: inline_value, else the next argument; NULL (and an
 * error "needs a value") when there is none. */
const char *cli_value(cli_parser *p, const char *inline_value);
/* The next argument without taking it, or NULL at the end. */
const char *cli_peek(const cli_parser *p);
/* Take the next argument (NULL at the end). */
const char *cli_next(cli_parser *p);
/* Take every remaining argument into rest and end the parse. */
void cli_take_rest(cli_parser *p, cli_args *rest);
/* Record a usage error for the option being parsed; returns -1. */
int cli_error(cli_parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Strict numbers, also for callbacks: digits only (a leading '-' for the
 * signed one), no sign, space or trailing text, no overflow; 0 if the
 * value is in [lo, hi], -1 otherwise. */
int cli_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
int cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);
/* A finite number in strtod's syntax, with nothing after it. */
int cli_parse_double(const char *s, double *out);

/* Verbs with sub-verbs (`pgolf manifest create ...`): each sub-verb has
 * its own table; the group lists their synopses and prose. */
typedef struct cli_sub {
  const char *name;                  /* "create" */
  int (*run)(int argc, char **argv); /* argv[0] is the sub-verb */
  const char *usage, *about;         /* the same text as its cli_command's */
} cli_sub;

typedef struct cli_group {
  const char *name;  /* "manifest" */
  const char *usage; /* "pgolf manifest SUBCOMMAND [OPTIONS]" */
  const char *about; /* or NULL */
  const cli_sub *subs;
  size_t n_subs;
  const char *footer; /* or NULL */
} cli_group;

void cli_group_usage(const cli_group *g, FILE *out);

/* The verb's entry: argv[0] is the verb, argv[1] the sub-verb. Runs the
 * sub-verb with argv + 1 and returns its exit code; with no sub-verb the
 * usage goes to stderr (2); --help, -h or help print it on stdout (0); an
 * unknown sub-verb is `pgolf: VERB: unknown subcommand 'X'` (2). */
int cli_dispatch(const cli_group *g, int argc, char **argv);

#endif
