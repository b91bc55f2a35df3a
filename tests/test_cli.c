/* The option parser of every verb (common/cli.h): each kind of option,
 * both value forms, the errors (with the option named), `--`, and the
 * usage generated from the table. */
#include <fcntl.h>
#include <math.h>

#include "common/cli.h"
#include "tests/test_util.h"

/* One table with every kind, filled into a fresh `opts`. */
typedef struct opts {
  int json;
  const char *out;
  int64_t delta;
  uint32_t count;
  uint8_t small;
  double rate;
  double frac;
  const char *tags_v[3];
  cli_list tags;
  cli_args args, rest;
  const char *pair[2];
} opts;

/* --pair A B: a callback taking two values. */
static int take_pair(cli_parser *p, const cli_option *o, const char *inline_value) {
  const char **pair = o->dest;
  if (!(pair[0] = cli_value(p, inline_value))) return -1;
  if (!(pair[1] = cli_next(p))) return cli_error(p, "%s wants two values", cli_option_name(p));
  return 0;
}

/* Defaults and sentinels; tags keeps its values in o itself. */
static void fresh(opts *o) {
  memset(o, 0, sizeof *o);
  o->delta = -1;
  o->rate = NAN;
  o->tags = (cli_list){o->tags_v, 0, 3};
}

#define TABLE(o)                                                                            \
  {                                                                                         \
    CLI_FLAG("json", 'j', &(o).json, "print JSON"),                                         \
        CLI_STRING("output", 'o', &(o).out, "FILE", "where to write\nsecond line of help"), \
        CLI_INT("delta", 0, &(o).delta, "D", -5, 5, "a signed step"),                       \
        CLI_UNSIGNED("count", 'c', &(o).count, "N", 1, 100, "how many"),                    \
        CLI_UNSIGNED("small", 0, &(o).small, "B", 0, 1000, "fits a byte"),                  \
        CLI_DOUBLE("rate", 0, &(o).rate, "R", "any finite number"),                         \
        CLI_DOUBLE_RANGE("frac", 0, &(o).frac, "F", 0.0, 1.0, "a fraction"),                \
        CLI_LIST("tag", 't', &(o).tags, "T", "repeatable"),                                 \
        CLI_CALLBACK("pair", 0, (o).pair, "A B", take_pair, "two values"),                  \
        CLI_ARGS(&(o).args, "FILE...", NULL), CLI_REST(&(o).rest, "CMD...", "the command"), \
        CLI_END                                                                             \
  }

static const char USAGE[] = "pgolf demo [OPTIONS] FILE... [-- CMD...]";

/* Parse a NULL-terminated list (copied: the parser reorders argv). */
static int run(opts *o, unsigned flags, pg_error *err, const char *const *words) {
  static char *argv[32];
  int argc = 0;
  argv[argc++] = "demo";
  for (; *words; words++) argv[argc++] = (char *)*words;
  argv[argc] = NULL;
  cli_option table[] = TABLE(*o);
  cli_command c = {.name = "demo", .usage = USAGE, .options = table, .flags = flags};
  memset(err, 0, sizeof *err);
  return cli_parse(&c, argc, argv, err);
}

#define PARSE(o, err, ...) run(&(o), 0, &(err), (const char *const[]){__VA_ARGS__, NULL})

static void test_every_kind(void **state) {
  (void)state;
  opts o;
  fresh(&o);
  pg_error e;
  assert_int_equal(PARSE(o, e, "a", "--json", "--output", "x.txt", "--delta", "-3", "--count", "42",
                         "--small", "255", "--rate", "-2.5e3", "--frac", "1", "--tag", "p", "-t",
                         "q", "b", "--pair", "u", "v"),
                   CLI_OK);
  assert_true(o.json);
  assert_string_equal(o.out, "x.txt");
  assert_true(o.delta == -3);
  assert_int_equal(o.count, 42);
  assert_int_equal(o.small, 255);
  assert_true(o.rate == -2500.0);
  assert_true(o.frac == 1.0);
  assert_int_equal(o.tags.n, 2);
  assert_string_equal(o.tags.v[0], "p");
  assert_string_equal(o.tags.v[1], "q");
  assert_string_equal(o.pair[0], "u");
  assert_string_equal(o.pair[1], "v");
  /* Positional arguments anywhere, in order, moved to the front. */
  assert_int_equal(o.args.n, 2);
  assert_string_equal(o.args.v[0], "a");
  assert_string_equal(o.args.v[1], "b");
  assert_null(o.rest.v);
}

static void test_inline_and_short_forms(void **state) {
  (void)state;
  opts o;
  fresh(&o);
  pg_error e;
  assert_int_equal(PARSE(o, e, "--output=o.txt", "--count=7", "-c8", "--pair=k", "l", "-oz",
                         "--delta=-5", "-t=w"),
                   CLI_OK);
  assert_string_equal(o.out, "z");
  assert_int_equal(o.count, 8); /* the last one wins without CLI_ONCE */
  assert_true(o.delta == -5);
  assert_string_equal(o.pair[0], "k");
  assert_string_equal(o.tags.v[0], "w");
  /* A value is the next argument whatever it looks like. */
  fresh(&o);
  assert_int_equal(PARSE(o, e, "--output", "--json", "-", "--rate", "-1"), CLI_OK);
  assert_string_equal(o.out, "--json");
  assert_false(o.json);
  assert_int_equal(o.args.n, 1);
  assert_string_equal(o.args.v[0], "-"); /* "-" alone is an argument */
  assert_true(o.rate == -1.0);
}

/* The error names the verb (as pg_error's file) and the option. */
static void expect_error(pg_error *e, const char *needle) {
  assert_string_equal(e->file, "demo");
  if (!strstr(e->msg, needle)) fail_msg("'%s' not in '%s'", needle, e->msg);
  assert_non_null(strstr(e->msg, "(try `pgolf demo --help`)"));
}

static void test_errors(void **state) {
  (void)state;
  opts o;
  fresh(&o);
  pg_error e;
  assert_int_equal(PARSE(o, e, "a", "--output"), CLI_ERROR);
  expect_error(&e, "--output needs a value");
  assert_int_equal(PARSE(o, e, "-o"), CLI_ERROR);
  expect_error(&e, "-o needs a value");
  assert_int_equal(PARSE(o, e, "--bogus", "a"), CLI_ERROR);
  expect_error(&e, "unknown option '--bogus'");
  assert_int_equal(PARSE(o, e, "--bogus=1"), CLI_ERROR);
  expect_error(&e, "unknown option '--bogus=1'");
  assert_int_equal(PARSE(o, e, "-x"), CLI_ERROR);
  expect_error(&e, "unknown option '-x'");
  assert_int_equal(PARSE(o, e, "-jc"), CLI_ERROR); /* flags do not bundle */
  expect_error(&e, "unknown option '-jc'");
  assert_int_equal(PARSE(o, e, "--json=1"), CLI_ERROR);
  expect_error(&e, "--json takes no value");
  assert_int_equal(PARSE(o, e, "--jso"), CLI_ERROR); /* no abbreviations */
  expect_error(&e, "unknown option '--jso'");
  assert_int_equal(PARSE(o, e, "--pair", "u"), CLI_ERROR);
  expect_error(&e, "--pair wants two values");
  fresh(&o);
  assert_int_equal(PARSE(o, e, "-t", "1", "-t", "2", "-t", "3", "--tag", "4"), CLI_ERROR);
  expect_error(&e, "--tag given more than 3 times");
  /* A verb's own usage error after parsing reads the same. */
  cli_option none[] = {CLI_END};
  cli_command c = {.name = "demo", .usage = USAGE, .options = none};
  assert_int_equal(cli_fail(&e, &c, "--out is required (%d)", 1), -1);
  assert_string_equal(e.msg, "--out is required (1) (try `pgolf demo --help`)");
}

static void test_given_twice(void **state) {
  (void)state;
  opts o;
  fresh(&o);
  pg_error e;
  const char *const twice[] = {"--output", "a", "--output=b", NULL};
  assert_int_equal(run(&o, CLI_ONCE, &e, twice), CLI_ERROR);
  expect_error(&e, "option given twice: --output");
  const char *const flags[] = {"--json", "--json", "-t", "x", "--tag", "y", NULL};
  fresh(&o);
  assert_int_equal(run(&o, CLI_ONCE, &e, flags), CLI_OK); /* flags and lists repeat */
  assert_int_equal(o.tags.n, 2);
}

static void test_strict_numbers(void **state) {
  (void)state;
  static const struct {
    const char *opt, *value, *why;
  } bad[] = {
      {"--count", "7x", "wants an integer from 1 to 100, got '7x'"},
      {"--count", "", "wants an integer from 1 to 100"},
      {"--count", "-1", "got '-1'"},
      {"--count", "+1", "got '+1'"},
      {"--count", " 1", "got ' 1'"},
      {"--count", "0", "from 1 to 100"},
      {"--count", "101", "from 1 to 100"},
      {"--count", "99999999999999999999999", "got '9999"},
      {"--small", "256", "from 0 to 255"}, /* clamped to the destination's width */
      {"--delta", "6", "from -5 to 5"},
      {"--delta", "--", "got '--'"},
      {"--delta", "-", "got '-'"},
      {"--rate", "1.5.", "wants a finite number, got '1.5.'"},
      {"--rate", "nan", "finite"},
      {"--rate", "inf", "finite"},
      {"--rate", "1e999", "finite"},
      {"--rate", "", "finite"},
      {"--frac", "1.01", "wants a number from 0 to 1, got '1.01'"},
      {"--frac", "-0.5", "from 0 to 1"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    opts o;
    fresh(&o);
    pg_error e;
    assert_int_equal(PARSE(o, e, bad[i].opt, bad[i].value), CLI_ERROR);
    expect_error(&e, bad[i].opt);
    expect_error(&e, bad[i].why);
  }
  uint64_t u;
  int64_t s;
  double d;
  assert_int_equal(cli_parse_u64("18446744073709551615", 0, UINT64_MAX, &u), 0);
  assert_true(u == UINT64_MAX);
  assert_int_equal(cli_parse_u64("18446744073709551616", 0, UINT64_MAX, &u), -1);
  assert_int_equal(cli_parse_i64("-9223372036854775808", INT64_MIN, INT64_MAX, &s), 0);
  assert_true(s == INT64_MIN);
  assert_int_equal(cli_parse_i64("9223372036854775808", INT64_MIN, INT64_MAX, &s), -1);
  assert_int_equal(cli_parse_double("1e-400", &d), 0); /* underflow is a number */
  assert_int_equal(cli_parse_double("0x1p3", &d), 0);
  assert_true(d == 8.0);
}

static void test_double_dash(void **state) {
  (void)state;
  opts o;
  fresh(&o);
  pg_error e;
  assert_int_equal(PARSE(o, e, "--json", "a", "--", "sh", "-c", "--help"), CLI_OK);
  assert_int_equal(o.args.n, 1);
  assert_int_equal(o.rest.n, 3);
  assert_string_equal(o.rest.v[0], "sh");
  assert_string_equal(o.rest.v[2], "--help");
  fresh(&o);
  assert_int_equal(PARSE(o, e, "a", "--"), CLI_OK);
  assert_non_null(o.rest.v); /* `--` given, nothing after it */
  assert_int_equal(o.rest.n, 0);

  /* Without a REST entry, `--` ends the options and the rest is positional. */
  cli_args args;
  int json = 0;
  cli_option table[] = {CLI_FLAG("json", 0, &json, "JSON"), CLI_ARGS(&args, "FILE...", NULL),
                        CLI_END};
  cli_command c = {.name = "demo", .usage = USAGE, .options = table};
  char *argv[] = {"demo", "x", "--", "--json", "-h", NULL};
  assert_int_equal(cli_parse(&c, 5, argv, &e), CLI_OK);
  assert_false(json);
  assert_int_equal(args.n, 3);
  assert_string_equal(args.v[1], "--json");
  assert_string_equal(args.v[2], "-h");

  /* Without an ARGS entry a positional argument is an error. */
  cli_option no_args[] = {CLI_FLAG("json", 0, &json, "JSON"), CLI_END};
  c.options = no_args;
  char *argv2[] = {"demo", "--json", "extra", NULL};
  assert_int_equal(cli_parse(&c, 3, argv2, &e), CLI_ERROR);
  expect_error(&e, "unexpected argument 'extra'");
}

/* Run cli_parse with stdout going to a file; returns what it printed. */
static char *capture_parse(const cli_command *c, int argc, char **argv, int *result) {
  FILE *tmp = tmpfile();
  assert_non_null(tmp);
  fflush(stdout);
  int saved = dup(1);
  assert_true(saved >= 0);
  assert_true(dup2(fileno(tmp), 1) >= 0);
  pg_error e;
  *result = cli_parse(c, argc, argv, &e);
  fflush(stdout);
  assert_true(dup2(saved, 1) >= 0);
  close(saved);
  long n = ftell(tmp);
  char *text = calloc((size_t)n + 1, 1);
  rewind(tmp);
  assert_int_equal(fread(text, 1, (size_t)n, tmp), (size_t)n);
  fclose(tmp);
  return text;
}

static void test_generated_help(void **state) {
  (void)state;
  opts o;
  fresh(&o);
  cli_option table[] = TABLE(o);
  cli_command c = {.name = "demo",
                   .usage = "pgolf demo [OPTIONS] FILE...\n           [-- CMD...]",
                   .about = "Prose about the demo.",
                   .options = table,
                   .footer = "Exit codes: 0 ok."};
  char *argv[] = {"demo", "--json", "--help", "--bogus", NULL};
  int r;
  char *text = capture_parse(&c, 4, argv, &r);
  assert_int_equal(r, CLI_HELP);
  assert_int_equal(cli_status(r, NULL), PG_EXIT_OK);
  static const char *const want[] = {
      "usage: pgolf demo [OPTIONS] FILE...\n                  [-- CMD...]\n",
      "\nProse about the demo.\n",
      "  -j, --json ",
      "print JSON\n",
      "  -o, --output FILE ",
      "where to write\n",
      "second line of help\n",
      "      --delta D ",
      "a signed step\n",
      "  -c, --count N ",
      "how many\n",
      "      --small B ",
      "fits a byte\n",
      "      --rate R ",
      "any finite number\n",
      "      --frac F ",
      "a fraction\n",
      "  -t, --tag T ",
      "repeatable\n",
      "      --pair A B ",
      "two values\n",
      "  -- CMD... ",
      "the command\n",
      "  -h, --help ",
      "print this help\n",
      "\nExit codes: 0 ok.\n"};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    if (!strstr(text, want[i])) fail_msg("'%s' not in the help:\n%s", want[i], text);
  assert_null(strstr(text, "FILE...  ")); /* an entry without help is not listed */
  /* The help column lines up: the continuation starts where "where" does. */
  const char *w = strstr(text, "where to write");
  const char *line = w;
  while (line > text && line[-1] != '\n') line--;
  const char *second = strstr(text, "second line of help");
  assert_int_equal(w - line, second - (strchr(w, '\n') + 1));
  free(text);
}

static int sub_ok(int argc, char **argv) {
  (void)argv;
  return argc == 2 ? 0 : 1;
}

static void test_dispatch(void **state) {
  (void)state;
  static const cli_sub subs[] = {{"go", sub_ok, "pgolf demo go X", "runs"}};
  cli_group g = {.name = "demo", .usage = "pgolf demo SUBCOMMAND", .subs = subs, .n_subs = 1};
  char *argv[] = {"demo", "go", "x", NULL};
  assert_int_equal(cli_dispatch(&g, 3, argv), 0);
  /* The two errors print on stderr; keep the test's output clean. */
  fflush(stderr);
  int saved = dup(2), null = open("/dev/null", O_WRONLY);
  assert_true(saved >= 0 && null >= 0 && dup2(null, 2) >= 0);
  char *bad[] = {"demo", "stop", NULL};
  int r_bad = cli_dispatch(&g, 2, bad);
  char *none[] = {"demo", NULL};
  int r_none = cli_dispatch(&g, 1, none);
  fflush(stderr);
  assert_true(dup2(saved, 2) >= 0);
  close(saved);
  close(null);
  assert_int_equal(r_bad, PG_EXIT_USAGE);
  assert_int_equal(r_none, PG_EXIT_USAGE);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  cli_group_usage(&g, f);
  fclose(f);
  assert_non_null(strstr(buf, "usage: pgolf demo SUBCOMMAND\n"));
  assert_non_null(strstr(buf, "  pgolf demo go X\n      runs\n"));
  assert_non_null(strstr(buf, "pgolf demo SUBCOMMAND --help"));
  free(buf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_kind),     cmocka_unit_test(test_inline_and_short_forms),
      cmocka_unit_test(test_errors),         cmocka_unit_test(test_given_twice),
      cmocka_unit_test(test_strict_numbers), cmocka_unit_test(test_double_dash),
      cmocka_unit_test(test_generated_help), cmocka_unit_test(test_dispatch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
