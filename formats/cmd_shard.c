/* pgolf shard info FILE... [--json] [--vocab N]
 * pgolf shard glob DIR --split train|val
 * Inspect token shards: validate each one fully and print its header
 * fields, size and SHA-256 (hashed in parallel). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/error.h"
#include "common/verbs.h"
#include "common/hash_pool.h"
#include "common/sha256.h"
#include "formats/shard.h"

static const char INFO_USAGE[] = "pgolf shard info FILE... [--json] [--vocab N]";
static const char GLOB_USAGE[] = "pgolf shard glob DIR --split train|val";
static const char GLOB_ABOUT[] =
    "Print the shards of a split in the order they are read:\n"
    "DIR/fineweb_SPLIT_*.bin, sorted by name.";
static const char FOOTER[] = "Exit codes: 0 ok, 2 usage error or a bad shard.";

/* The header constants are numbers, so the prose is formatted once. */
static const char *info_about(void) {
  static char text[512];
  snprintf(text, sizeof text,
           "Validate each token shard (header magic %d, version %d, size\n"
           "exactly %d + 2*tokens bytes) and print its path, magic, version,\n"
           "token count, size in bytes and SHA-256. A bad file is reported on\n"
           "stderr as `pgolf: FILE:offset N: message`; the others are still\n"
           "printed.",
           SHARD_MAGIC, SHARD_VERSION, SHARD_HEADER_BYTES);
  return text;
}

typedef struct info_opts {
  cli_args files;
  int json;
  uint32_t vocab;
} info_opts;

/* CLI_OK, CLI_HELP (printed) or CLI_ERROR (in err). */
static int parse_info(int argc, char **argv, info_opts *o, pg_error *err) {
  *o = (info_opts){0};
  const cli_option opts[] = {
      CLI_FLAG("json", 0, &o->json,
               "print a JSON array of objects\n{path, magic, version, tokens, bytes, sha256}"),
      CLI_UNSIGNED("vocab", 0, &o->vocab, "N", 1, 65536,
                   "also check that every token is below N (1..65536)"),
      CLI_ARGS(&o->files, "FILE...", NULL), CLI_END};
  const cli_command cmd = {.name = "shard info",
                           .usage = INFO_USAGE,
                           .about = info_about(),
                           .options = opts,
                           .footer = FOOTER};
  int r = cli_parse(&cmd, argc, argv, err);
  if (r != CLI_OK) return r;
  if (o->files.n == 0) return cli_fail(err, &cmd, "no FILE given");
  for (int i = 0; i < o->files.n; i++)
    if (!strcmp(o->files.v[i], "-"))
      return cli_fail(err, &cmd, "shards are memory-mapped, standard input cannot be one");
  return CLI_OK;
}

/* Validate one shard; on success fill s's header fields (the mapping is
 * released at once: info needs only the header and the validation). */
static int check_one(const char *path, uint32_t vocab, shard *out, pg_error *err) {
  shard s;
  if (shard_open(path, vocab, &s, err) != 0) return -1;
  *out = s;
  out->map.data = NULL;
  out->tokens = NULL;
  file_unmap(&s.map);
  return 0;
}

static void print_text(const char *path, const shard *s, const hash_result *h) {
  char hex[SHA256_HEX_LEN + 1];
  sha256_hex(h->digest, hex);
  printf("%s\n  magic    %u\n  version  %u\n  tokens   %llu\n  bytes    %llu\n  sha256   %s\n",
         path, s->magic, s->version, (unsigned long long)s->n_tokens,
         (unsigned long long)h->size, hex);
}

static json_t *info_json(const char *path, const shard *s, const hash_result *h, pg_error *err) {
  char hex[SHA256_HEX_LEN + 1];
  sha256_hex(h->digest, hex);
  json_t *p = json_string(path);
  if (!p) {
    pg_fail(err, path, -1, "path is not valid UTF-8, cannot be written as JSON");
    return NULL;
  }
  return json_pack("{s:o, s:I, s:I, s:I, s:I, s:s}", "path", p, "magic", (json_int_t)s->magic,
                   "version", (json_int_t)s->version, "tokens", (json_int_t)s->n_tokens, "bytes",
                   (json_int_t)h->size, "sha256", hex);
}

/* Report one file: validation first (its errors carry byte offsets), then
 * the hash. Returns 0 if the file was printed, -1 if it was reported bad. */
static int report_one(const info_opts *o, size_t i, const hash_result *h, json_t *arr) {
  shard s;
  pg_error err;
  if (check_one(o->files.v[i], o->vocab, &s, &err) != 0) {
    pg_error_print(&err);
    return -1;
  }
  if (h->failed) {
    pg_error_print(&h->err);
    return -1;
  }
  if (!arr) {
    print_text(o->files.v[i], &s, h);
    return 0;
  }
  json_t *obj = info_json(o->files.v[i], &s, h, &err);
  if (!obj) {
    pg_error_print(&err);
    return -1;
  }
  json_array_append_new(arr, obj);
  return 0;
}

static int print_json_array(json_t *arr) {
  char *text = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  if (!text) return -1;
  puts(text);
  free(text);
  return 0;
}

static int cmd_info(int argc, char **argv) {
  info_opts o;
  pg_error err;
  int pr = parse_info(argc, argv, &o, &err);
  if (pr != CLI_OK) return cli_status(pr, &err);
  hash_result *hr = NULL;
  int rc = PG_EXIT_USAGE;
  size_t n = (size_t)o.files.n;
  hr = calloc(n, sizeof *hr);
  json_t *arr = o.json ? json_array() : NULL;
  if (!hr || (o.json && !arr)) {
    pg_die_msg("shard: out of memory");
    goto out;
  }
  /* Hash every file first, in parallel; validating afterwards then reads
   * from the page cache the hashing just filled. */
  hash_pool_run((const char *const *)o.files.v, n, 0, hr);
  int bad = 0;
  for (size_t i = 0; i < n; i++) bad |= report_one(&o, i, &hr[i], arr) != 0;
  if (arr && print_json_array(arr) != 0) {
    pg_die_msg("shard: cannot format JSON");
    bad = 1;
  }
  rc = bad ? PG_EXIT_USAGE : PG_EXIT_OK;
out:
  json_decref(arr);
  free(hr);
  return rc;
}

static int cmd_glob(int argc, char **argv) {
  const char *split = NULL;
  cli_args dirs;
  const cli_option opts[] = {
      CLI_STRING("split", 0, &split, "train|val", "the split whose shards to list"),
      CLI_ARGS(&dirs, "DIR", NULL), CLI_END};
  const cli_command cmd = {.name = "shard glob",
                           .usage = GLOB_USAGE,
                           .about = GLOB_ABOUT,
                           .options = opts,
                           .footer = FOOTER};
  pg_error err;
  int pr = cli_parse(&cmd, argc, argv, &err);
  if (pr != CLI_OK) return cli_status(pr, &err);
  if (dirs.n > 1) return cli_usage_error(&cmd, "unexpected argument '%s'", dirs.v[1]);
  const char *dir = dirs.n ? dirs.v[0] : NULL;
  const char *prefix = !split                   ? NULL
                       : !strcmp(split, "train") ? "fineweb_train_"
                       : !strcmp(split, "val")   ? "fineweb_val_"
                                                 : NULL;
  if (!dir || !prefix)
    return cli_usage_error(&cmd, "usage: pgolf shard glob DIR --split train|val");
  char **paths;
  size_t n;
  if (shard_glob(dir, prefix, &paths, &n, &err) != 0) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  for (size_t i = 0; i < n; i++) puts(paths[i]);
  shard_paths_free(paths, n);
  return PG_EXIT_OK;
}

int cmd_shard(int argc, char **argv) {
  const cli_sub subs[] = {{"info", cmd_info, INFO_USAGE, info_about()},
                          {"glob", cmd_glob, GLOB_USAGE, GLOB_ABOUT}};
  const cli_group g = {.name = "shard",
                       .usage = "pgolf shard SUBCOMMAND [OPTIONS]",
                       .about = "Inspect token shards.",
                       .subs = subs,
                       .n_subs = 2,
                       .footer = FOOTER};
  return cli_dispatch(&g, argc, argv);
}
