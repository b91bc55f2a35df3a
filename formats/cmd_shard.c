/* pgolf shard info FILE... [--json] [--vocab N]
 * pgolf shard glob DIR --split train|val
 * Inspect token shards: validate each one fully and print its header
 * fields, size and SHA-256 (hashed in parallel). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/verbs.h"
#include "common/hash_pool.h"
#include "common/sha256.h"
#include "formats/shard.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: pgolf shard info FILE... [--json] [--vocab N]\n"
          "       pgolf shard glob DIR --split train|val\n"
          "\n"
          "info  validate each token shard (header magic %d, version %d, size\n"
          "      exactly %d + 2*tokens bytes) and print its path, magic, version,\n"
          "      token count, size in bytes and SHA-256. A bad file is reported on\n"
          "      stderr as `pgolf: FILE:offset N: message`; the others are still\n"
          "      printed.\n"
          "        --json     print a JSON array of objects\n"
          "                   {path, magic, version, tokens, bytes, sha256}\n"
          "        --vocab N  also check that every token is below N (1..65536)\n"
          "glob  print the shards of a split in the order they are read:\n"
          "      DIR/fineweb_SPLIT_*.bin, sorted by name.\n"
          "\n"
          "Exit codes: 0 ok, 2 usage error or a bad shard.\n",
          SHARD_MAGIC, SHARD_VERSION, SHARD_HEADER_BYTES);
}

typedef struct info_opts {
  const char **files;
  size_t n;
  int json;
  uint32_t vocab;
} info_opts;

static int parse_vocab(const char *s, uint32_t *vocab) {
  char *end;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < 1 || v > 65536) {
    pg_die_msg("shard: --vocab wants an integer from 1 to 65536, got '%s'", s);
    return -1;
  }
  *vocab = (uint32_t)v;
  return 0;
}

/* -1 usage error, 1 --help, 0 ok. Options may come before or after files. */
static int parse_info(int argc, char **argv, info_opts *o) {
  int opts_done = 0;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (opts_done && !strcmp(a, "-")) {
      pg_die_msg("shard info: shards are memory-mapped, standard input cannot be one");
      return -1;
    } else if (opts_done || a[0] != '-') {
      o->files[o->n++] = a;
    } else if (!strcmp(a, "--")) {
      opts_done = 1;
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      return 1;
    } else if (!strcmp(a, "--json")) {
      o->json = 1;
    } else if (!strcmp(a, "--vocab")) {
      if (i + 1 >= argc) {
        pg_die_msg("shard: --vocab needs a value");
        return -1;
      }
      if (parse_vocab(argv[++i], &o->vocab) != 0) return -1;
    } else if (!strncmp(a, "--vocab=", 8)) {
      if (parse_vocab(a + 8, &o->vocab) != 0) return -1;
    } else {
      pg_die_msg("shard: unknown option '%s' (try `pgolf shard --help`)", a);
      return -1;
    }
  }
  if (o->n == 0) {
    pg_die_msg("shard info: no FILE given (try `pgolf shard --help`)");
    return -1;
  }
  return 0;
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
  if (check_one(o->files[i], o->vocab, &s, &err) != 0) {
    pg_error_print(&err);
    return -1;
  }
  if (h->failed) {
    pg_error_print(&h->err);
    return -1;
  }
  if (!arr) {
    print_text(o->files[i], &s, h);
    return 0;
  }
  json_t *obj = info_json(o->files[i], &s, h, &err);
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
  info_opts o = {.files = calloc((size_t)argc, sizeof(char *))};
  if (!o.files) {
    pg_die_msg("shard: out of memory");
    return PG_EXIT_USAGE;
  }
  hash_result *hr = NULL;
  int rc = PG_EXIT_USAGE, pr = parse_info(argc, argv, &o);
  if (pr != 0) {
    if (pr > 0) usage(stdout);
    free(o.files);
    return pr > 0 ? PG_EXIT_OK : PG_EXIT_USAGE;
  }
  hr = calloc(o.n, sizeof *hr);
  json_t *arr = o.json ? json_array() : NULL;
  if (!hr || (o.json && !arr)) {
    pg_die_msg("shard: out of memory");
    goto out;
  }
  /* Hash every file first, in parallel; validating afterwards then reads
   * from the page cache the hashing just filled. */
  hash_pool_run(o.files, o.n, 0, hr);
  int bad = 0;
  for (size_t i = 0; i < o.n; i++) bad |= report_one(&o, i, &hr[i], arr) != 0;
  if (arr && print_json_array(arr) != 0) {
    pg_die_msg("shard: cannot format JSON");
    bad = 1;
  }
  rc = bad ? PG_EXIT_USAGE : PG_EXIT_OK;
out:
  json_decref(arr);
  free(hr);
  free(o.files);
  return rc;
}

static int cmd_glob(int argc, char **argv) {
  const char *dir = NULL, *split = NULL;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return PG_EXIT_OK;
    } else if (!strcmp(argv[i], "--split") && i + 1 < argc) {
      split = argv[++i];
    } else if (!strncmp(argv[i], "--split=", 8)) {
      split = argv[i] + 8;
    } else if (argv[i][0] != '-' && !dir) {
      dir = argv[i];
    } else {
      pg_die_msg("shard glob: unexpected argument '%s' (try `pgolf shard --help`)", argv[i]);
      return PG_EXIT_USAGE;
    }
  }
  const char *prefix = !split                   ? NULL
                       : !strcmp(split, "train") ? "fineweb_train_"
                       : !strcmp(split, "val")   ? "fineweb_val_"
                                                 : NULL;
  if (!dir || !prefix) {
    pg_die_msg("shard glob: usage: pgolf shard glob DIR --split train|val");
    return PG_EXIT_USAGE;
  }
  char **paths;
  size_t n;
  pg_error err;
  if (shard_glob(dir, prefix, &paths, &n, &err) != 0) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  for (size_t i = 0; i < n; i++) puts(paths[i]);
  shard_paths_free(paths, n);
  return PG_EXIT_OK;
}

int cmd_shard(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return PG_EXIT_USAGE;
  }
  const char *sub = argv[1];
  if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
    usage(stdout);
    return PG_EXIT_OK;
  }
  if (!strcmp(sub, "info")) return cmd_info(argc, argv);
  if (!strcmp(sub, "glob")) return cmd_glob(argc, argv);
  pg_die_msg("shard: unknown subcommand '%s' (try `pgolf shard --help`)", sub);
  return PG_EXIT_USAGE;
}
