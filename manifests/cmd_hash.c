/* pgolf hash [--jobs N] FILE...
 * SHA-256 of files, hashed in parallel, printed exactly as GNU sha256sum
 * prints them (so `sha256sum -c` reads the output back). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/error.h"
#include "common/verbs.h"
#include "common/hash_pool.h"
#include "common/sha256.h"

#define STR_(x) #x
#define STR(x) STR_(x)

static const char USAGE[] = "pgolf hash [--jobs N] [FILE...]";
static const char ABOUT[] =
    "Print the SHA-256 of each FILE in sha256sum's format, in the order given.\n"
    "Files are hashed in parallel, one file per thread. With no FILE, or\n"
    "when FILE is -, read standard input.";
static const char JOBS_HELP[] =
    "worker threads, 1.." STR(HASH_POOL_MAX_JOBS) "\n(default: online CPUs, at most one per file)";
static const char FOOTER[] =
    "Exit codes: 0 ok, 2 usage error or a file could not be read (the\n"
    "others are still printed).";

/* sha256sum marks a name holding a backslash, newline or carriage return
 * with a leading backslash on the line and escapes those three characters,
 * so that every line stays one line and -c can undo it. */
static int needs_escape(const char *name) { return strpbrk(name, "\\\n\r") != NULL; }

static void print_name(FILE *out, const char *name) {
  for (const char *c = name; *c; c++) {
    if (*c == '\\')
      fputs("\\\\", out);
    else if (*c == '\n')
      fputs("\\n", out);
    else if (*c == '\r')
      fputs("\\r", out);
    else
      fputc(*c, out);
  }
}

static void print_line(FILE *out, const hash_result *r, const char *name) {
  char hex[SHA256_HEX_LEN + 1];
  sha256_hex(r->digest, hex);
  int esc = needs_escape(name);
  if (esc) fputc('\\', out);
  fputs(hex, out);
  fputs("  ", out);
  if (esc)
    print_name(out, name);
  else
    fputs(name, out);
  fputc('\n', out);
}

int cmd_hash(int argc, char **argv) {
  int jobs = 0;
  cli_args args;
  const cli_option opts[] = {
      CLI_UNSIGNED("jobs", 'j', &jobs, "N", 1, HASH_POOL_MAX_JOBS, JOBS_HELP),
      CLI_ARGS(&args, "FILE...", NULL), CLI_END};
  const cli_command cmd = {
      .name = "hash", .usage = USAGE, .about = ABOUT, .options = opts, .footer = FOOTER};
  pg_error err;
  int pr = cli_parse(&cmd, argc, argv, &err);
  if (pr != CLI_OK) return cli_status(pr, &err);
  static const char *const stdin_only[] = {"-"};
  const char *const *files = args.n ? (const char *const *)args.v : stdin_only;
  size_t n = args.n ? (size_t)args.n : 1;
  hash_result *res = calloc(n, sizeof *res);
  if (!res) {
    pg_die_msg("hash: out of memory");
    return PG_EXIT_USAGE;
  }
  size_t failed = hash_pool_run(files, n, jobs, res);
  for (size_t i = 0; i < n; i++) {
    if (res[i].failed)
      pg_error_print(&res[i].err);
    else
      print_line(stdout, &res[i], files[i]);
  }
  free(res);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    pg_die_msg("hash: cannot write to standard output");
    return PG_EXIT_USAGE;
  }
  return failed ? PG_EXIT_USAGE : PG_EXIT_OK;
}
