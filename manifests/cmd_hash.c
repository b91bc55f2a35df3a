/* pgolf hash [--jobs N] FILE...
 * SHA-256 of files, hashed in parallel, printed exactly as GNU sha256sum
 * prints them (so `sha256sum -c` reads the output back). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/verbs.h"
#include "common/hash_pool.h"
#include "common/sha256.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: pgolf hash [--jobs N] [FILE...]\n"
          "\n"
          "Print the SHA-256 of each FILE in sha256sum's format, in the order given.\n"
          "Files are hashed in parallel, one file per thread. With no FILE, or\n"
          "when FILE is -, read standard input.\n"
          "\n"
          "  --jobs N   worker threads, 1..%d (default: online CPUs, at most one\n"
          "             per file)\n"
          "\n"
          "Exit codes: 0 ok, 2 usage error or a file could not be read (the\n"
          "others are still printed).\n",
          HASH_POOL_MAX_JOBS);
}

static int parse_jobs(const char *s, int *jobs) {
  char *end;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < 1 || v > HASH_POOL_MAX_JOBS) {
    pg_die_msg("hash: --jobs wants an integer from 1 to %d, got '%s'", HASH_POOL_MAX_JOBS, s);
    return -1;
  }
  *jobs = (int)v;
  return 0;
}

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

/* Collects FILE operands into files (argv order); -1 on a usage error,
 * 1 if --help was asked. */
static int parse_args(int argc, char **argv, const char **files, size_t *n, int *jobs) {
  int opts_done = 0;
  *n = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (opts_done || a[0] != '-' || !strcmp(a, "-")) {
      files[(*n)++] = a;
    } else if (!strcmp(a, "--")) {
      opts_done = 1;
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      return 1;
    } else if (!strcmp(a, "--jobs") || !strcmp(a, "-j")) {
      if (i + 1 >= argc) {
        pg_die_msg("hash: %s needs a value", a);
        return -1;
      }
      if (parse_jobs(argv[++i], jobs) != 0) return -1;
    } else if (!strncmp(a, "--jobs=", 7)) {
      if (parse_jobs(a + 7, jobs) != 0) return -1;
    } else {
      pg_die_msg("hash: unknown option '%s' (try `pgolf hash --help`)", a);
      return -1;
    }
  }
  return 0;
}

int cmd_hash(int argc, char **argv) {
  const char **files = calloc((size_t)argc + 1, sizeof *files);
  if (!files) {
    pg_die_msg("hash: out of memory");
    return PG_EXIT_USAGE;
  }
  size_t n = 0;
  int jobs = 0;
  int pr = parse_args(argc, argv, files, &n, &jobs);
  if (pr != 0) {
    free(files);
    if (pr > 0) usage(stdout); /* a usage error has already said what was wrong */
    return pr > 0 ? PG_EXIT_OK : PG_EXIT_USAGE;
  }
  if (n == 0) files[n++] = "-";
  hash_result *res = calloc(n, sizeof *res);
  if (!res) {
    free(files);
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
  free(files);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    pg_die_msg("hash: cannot write to standard output");
    return PG_EXIT_USAGE;
  }
  return failed ? PG_EXIT_USAGE : PG_EXIT_OK;
}
