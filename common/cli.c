#include "common/cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct cli_parser {
  const cli_command *cmd;
  int argc;
  char **argv;
  int i;         /* the argument being handled */
  int n_pos;     /* positional arguments moved to argv[1..] so far */
  int stopped;   /* a callback took the rest */
  char name[80]; /* the option as spelled, for messages */
  unsigned char seen[CLI_MAX_OPTIONS];
  pg_error *err;
};

/* ---- messages ---- */

/* Every usage error ends with the same hint, so the reader knows where
 * the options are described. */
static int vfail(pg_error *err, const cli_command *c, const char *fmt, va_list ap) {
  char msg[PG_ERR_MSG];
  vsnprintf(msg, sizeof msg, fmt, ap);
  return pg_fail(err, c->name, -1, "%s (try `pgolf %s --help`)", msg, c->name);
}

int cli_fail(pg_error *err, const cli_command *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(err, c, fmt, ap);
  va_end(ap);
  return -1;
}

int cli_usage_error(const cli_command *c, const char *fmt, ...) {
  pg_error err;
  va_list ap;
  va_start(ap, fmt);
  vfail(&err, c, fmt, ap);
  va_end(ap);
  pg_error_print(&err);
  return PG_EXIT_USAGE;
}

int cli_error(cli_parser *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(p->err, p->cmd, fmt, ap);
  va_end(ap);
  return -1;
}

int cli_status(int parse_result, const pg_error *err) {
  if (parse_result == CLI_HELP) return PG_EXIT_OK;
  pg_error_print(err);
  return PG_EXIT_USAGE;
}

/* ---- numbers ---- */

int cli_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out) {
  if (!isdigit((unsigned char)s[0])) return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end || errno || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

int cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  if (!isdigit((unsigned char)(s[0] == '-' ? s[1] : s[0]))) return -1;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (*end || errno || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

int cli_parse_double(const char *s, double *out) {
  if (!s[0] || isspace((unsigned char)s[0])) return -1;
  char *end;
  double v = strtod(s, &end);
  /* An underflow to 0 or a subnormal is a number; an overflow is not finite. */
  if (end == s || *end || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

/* ---- storing one value ---- */

static uint64_t max_of_size(size_t size) {
  return size >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * size)) - 1;
}

/* Store v in the destination's own width (the range check has made it fit). */
static void store_unsigned(const cli_option *o, uint64_t v) {
  uint8_t b8 = (uint8_t)v;
  uint16_t b16 = (uint16_t)v;
  uint32_t b32 = (uint32_t)v;
  const void *src = o->size == 1   ? (const void *)&b8
                    : o->size == 2 ? (const void *)&b16
                    : o->size == 4 ? (const void *)&b32
                                   : (const void *)&v;
  memcpy(o->dest, src, o->size);
}

static int set_unsigned(cli_parser *p, const cli_option *o, const char *v) {
  uint64_t hi = o->uhi < max_of_size(o->size) ? o->uhi : max_of_size(o->size), x;
  if (cli_parse_u64(v, o->ulo, hi, &x))
    return cli_error(p, "%s wants an integer from %llu to %llu, got '%.200s'", p->name,
                     (unsigned long long)o->ulo, (unsigned long long)hi, v);
  store_unsigned(o, x);
  return 0;
}

static int set_int(cli_parser *p, const cli_option *o, const char *v) {
  int64_t lim = o->size >= 8 ? INT64_MAX : (int64_t)(max_of_size(o->size) >> 1);
  int64_t lo = o->ilo > -lim - 1 ? o->ilo : -lim - 1, hi = o->ihi < lim ? o->ihi : lim, x;
  if (cli_parse_i64(v, lo, hi, &x))
    return cli_error(p, "%s wants an integer from %lld to %lld, got '%.200s'", p->name,
                     (long long)lo, (long long)hi, v);
  /* Two's complement: the low bytes of x are the narrower value. */
  store_unsigned(o, (uint64_t)x);
  return 0;
}

static int set_double(cli_parser *p, const cli_option *o, const char *v) {
  double x;
  int ranged = o->dlo < o->dhi;
  if (cli_parse_double(v, &x) || (ranged && (x < o->dlo || x > o->dhi))) {
    if (!ranged) return cli_error(p, "%s wants a finite number, got '%.200s'", p->name, v);
    if (isinf(o->dhi))
      return cli_error(p, "%s wants a number >= %g, got '%.200s'", p->name, o->dlo, v);
    return cli_error(p, "%s wants a number from %g to %g, got '%.200s'", p->name, o->dlo, o->dhi,
                     v);
  }
  *(double *)o->dest = x;
  return 0;
}

static int set_list(cli_parser *p, const cli_option *o, const char *v) {
  cli_list *l = o->dest;
  if (l->n >= l->cap) return cli_error(p, "%s given more than %zu times", p->name, l->cap);
  l->v[l->n++] = v;
  return 0;
}

/* ---- the parse ---- */

const char *cli_option_name(const cli_parser *p) { return p->name; }

const char *cli_peek(const cli_parser *p) { return p->i + 1 < p->argc ? p->argv[p->i + 1] : NULL; }

const char *cli_next(cli_parser *p) { return p->i + 1 < p->argc ? p->argv[++p->i] : NULL; }

const char *cli_value(cli_parser *p, const char *inline_value) {
  const char *v = inline_value ? inline_value : cli_next(p);
  if (!v) cli_error(p, "%s needs a value", p->name);
  return v;
}

void cli_take_rest(cli_parser *p, cli_args *rest) {
  rest->v = p->argv + p->i + 1;
  rest->n = p->argc - p->i - 1;
  p->i = p->argc;
  p->stopped = 1;
}

static const cli_option *find_kind(const cli_command *c, cli_kind k) {
  for (const cli_option *o = c->options; o->kind != CLI_KIND_END; o++)
    if (o->kind == k) return o;
  return NULL;
}

static int positional(cli_parser *p, char *a) {
  if (!find_kind(p->cmd, CLI_KIND_ARGS)) return cli_error(p, "unexpected argument '%.200s'", a);
  p->argv[1 + p->n_pos++] = a; /* a slot already read: argv[1 + n_pos] <= argv[i] */
  return 0;
}

/* Give option o (spelled p->name) its value, taking the next argument
 * when it needs one and has none inline. */
static int apply(cli_parser *p, const cli_option *o, const char *inline_value) {
  if (o->kind == CLI_KIND_FLAG) {
    if (inline_value) return cli_error(p, "%s takes no value", p->name);
    *(int *)o->dest = 1;
    return 0;
  }
  if (o->kind == CLI_KIND_CALLBACK) return o->callback(p, o, inline_value);
  const char *v = cli_value(p, inline_value);
  if (!v) return -1;
  size_t k = (size_t)(o - p->cmd->options);
  if ((p->cmd->flags & CLI_ONCE) && o->kind != CLI_KIND_LIST && p->seen[k])
    return cli_error(p, "option given twice: %s", p->name);
  p->seen[k] = 1;
  switch (o->kind) {
  case CLI_KIND_STRING: *(const char **)o->dest = v; return 0;
  case CLI_KIND_INT: return set_int(p, o, v);
  case CLI_KIND_UNSIGNED: return set_unsigned(p, o, v);
  case CLI_KIND_DOUBLE: return set_double(p, o, v);
  case CLI_KIND_LIST: return set_list(p, o, v);
  default: return cli_error(p, "%s: not an option", p->name);
  }
}

static int is_option(const cli_option *o) {
  return o->kind != CLI_KIND_ARGS && o->kind != CLI_KIND_REST && o->kind != CLI_KIND_END;
}

/* "name" or "name=value" after "--". */
static int long_option(cli_parser *p, const char *a) {
  const char *eq = strchr(a, '=');
  size_t n = eq ? (size_t)(eq - a) : strlen(a);
  for (const cli_option *o = p->cmd->options; o->kind != CLI_KIND_END; o++) {
    if (!is_option(o) || !o->name || strlen(o->name) != n || strncmp(o->name, a, n)) continue;
    snprintf(p->name, sizeof p->name, "--%s", o->name);
    return apply(p, o, eq ? eq + 1 : NULL);
  }
  return cli_error(p, "unknown option '--%.200s'", a);
}

/* "x", "xVALUE" or "x=VALUE" after "-". */
static int short_option(cli_parser *p, const char *a) {
  for (const cli_option *o = p->cmd->options; o->kind != CLI_KIND_END; o++) {
    if (!is_option(o) || !o->short_name || o->short_name != a[0]) continue;
    snprintf(p->name, sizeof p->name, "-%c", a[0]);
    const char *v = a[1] == '=' ? a + 2 : a[1] ? a + 1 : NULL;
    if (o->kind == CLI_KIND_FLAG && a[1]) break; /* no bundled flags */
    return apply(p, o, v);
  }
  return cli_error(p, "unknown option '-%.200s'", a);
}

static int rest_after_dash(cli_parser *p, const cli_option *rest) {
  if (rest) {
    cli_take_rest(p, rest->dest);
    return 0;
  }
  while (++p->i < p->argc)
    if (positional(p, p->argv[p->i])) return -1;
  return 0;
}

int cli_parse(const cli_command *c, int argc, char **argv, pg_error *err) {
  cli_parser p = {.cmd = c, .argc = argc, .argv = argv, .i = 1, .err = err};
  size_t n = 0;
  while (c->options[n].kind != CLI_KIND_END) n++;
  if (n > CLI_MAX_OPTIONS) return cli_fail(err, c, "internal: %zu options in one table", n);
  const cli_option *args = find_kind(c, CLI_KIND_ARGS), *rest = find_kind(c, CLI_KIND_REST);
  if (rest) *(cli_args *)rest->dest = (cli_args){NULL, 0};
  for (; p.i < argc && !p.stopped; p.i++) {
    char *a = argv[p.i];
    int r;
    if (!strcmp(a, "--")) {
      r = rest_after_dash(&p, rest);
      p.stopped = 1;
    } else if (a[0] != '-' || !a[1]) {
      r = positional(&p, a);
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      cli_usage(c, stdout);
      return CLI_HELP;
    } else {
      r = a[1] == '-' ? long_option(&p, a + 2) : short_option(&p, a + 1);
    }
    if (r) return CLI_ERROR;
  }
  if (args) *(cli_args *)args->dest = (cli_args){argv + 1, p.n_pos};
  return CLI_OK;
}

/* ---- usage ---- */

/* Text with a final newline, each line after a prefix. */
static void put_lines(FILE *out, const char *first, const char *rest, const char *text) {
  const char *pre = first;
  while (*text) {
    const char *nl = strchr(text, '\n');
    size_t len = nl ? (size_t)(nl - text) : strlen(text);
    fprintf(out, "%s%.*s\n", len ? pre : "", (int)len, text);
    text += len + (nl != NULL);
    pre = rest;
  }
}

/* The left column of an entry: "  -o, --output FILE", "      --json". */
static void left_column(const cli_option *o, char *buf, size_t cap) {
  if (o->kind == CLI_KIND_ARGS) {
    snprintf(buf, cap, "  %s", o->arg ? o->arg : "ARGS...");
    return;
  }
  if (o->kind == CLI_KIND_REST) {
    snprintf(buf, cap, "  -- %s", o->arg ? o->arg : "ARGS...");
    return;
  }
  char s[8] = "    ";
  if (o->short_name) snprintf(s, sizeof s, "-%c, ", o->short_name);
  snprintf(buf, cap, "  %s--%s%s%s", s, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

/* Widest left column that still shares its line with the help. */
#define CLI_COLUMN_MAX 28

static void put_entry(FILE *out, const char *left, const char *help, int col) {
  int w = (int)strlen(left);
  if (w + 2 > col) {
    fprintf(out, "%s\n", left);
    w = 0;
    left = "";
  }
  char pad[64];
  snprintf(pad, sizeof pad, "%*s", col, "");
  fprintf(out, "%s%*s", left, col - w, "");
  put_lines(out, "", pad, help);
}

void cli_usage(const cli_command *c, FILE *out) {
  put_lines(out, "usage: ", "       ", c->usage);
  if (c->about) {
    fputc('\n', out);
    put_lines(out, "", "", c->about);
  }
  char left[160];
  int col = 14; /* "  -h, --help" + 2 */
  for (const cli_option *o = c->options; o->kind != CLI_KIND_END; o++) {
    if (!o->help) continue;
    left_column(o, left, sizeof left);
    int w = (int)strlen(left) + 2;
    if (w > col && w <= CLI_COLUMN_MAX + 2) col = w;
  }
  fputc('\n', out);
  for (const cli_option *o = c->options; o->kind != CLI_KIND_END; o++) {
    if (!o->help) continue;
    left_column(o, left, sizeof left);
    put_entry(out, left, o->help, col);
  }
  put_entry(out, "  -h, --help", "print this help", col);
  if (c->footer) {
    fputc('\n', out);
    put_lines(out, "", "", c->footer);
  }
}

void cli_group_usage(const cli_group *g, FILE *out) {
  put_lines(out, "usage: ", "       ", g->usage);
  if (g->about) {
    fputc('\n', out);
    put_lines(out, "", "", g->about);
  }
  fputc('\n', out);
  for (size_t i = 0; i < g->n_subs; i++) {
    put_lines(out, "  ", "  ", g->subs[i].usage);
    if (g->subs[i].about) put_lines(out, "      ", "      ", g->subs[i].about);
  }
  fputc('\n', out);
  if (g->footer) put_lines(out, "", "", g->footer);
  fprintf(out, "Run `pgolf %s SUBCOMMAND --help` for its options.\n", g->name);
}

int cli_dispatch(const cli_group *g, int argc, char **argv) {
  if (argc < 2) {
    cli_group_usage(g, stderr);
    return PG_EXIT_USAGE;
  }
  const char *sub = argv[1];
  if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
    cli_group_usage(g, stdout);
    return PG_EXIT_OK;
  }
  for (size_t i = 0; i < g->n_subs; i++)
    if (!strcmp(sub, g->subs[i].name)) return g->subs[i].run(argc - 1, argv + 1);
  pg_error err;
  pg_fail(&err, g->name, -1, "unknown subcommand '%.200s' (try `pgolf %s --help`)", sub, g->name);
  pg_error_print(&err);
  return PG_EXIT_USAGE;
}
