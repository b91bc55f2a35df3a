/* pgolf bpb: tokens, bytes and tokens per byte of a split, with the
 * challenge's byte accounting (formats/byte_accounting.h). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cli.h"
#include "common/error.h"
#include "common/verbs.h"
#include "formats/byte_accounting.h"
#include "formats/shard.h"
#include "formats/tokenizer.h"

typedef struct bpb_opts {
  const char *tokenizer;
  const char *split; /* for directory arguments */
  uint32_t seq_len;  /* 0: count every target */
  uint32_t vocab;    /* 0: the model's piece count */
  int json;
  cli_args paths; /* SHARD_OR_DIR... */
} bpb_opts;

static const char USAGE[] =
    "pgolf bpb --tokenizer MODEL [--split val|train] [--seq-len L] [--vocab N]\n"
    "          [--json] SHARD_OR_DIR...";
static const char ABOUT[] =
    "Counts the bytes of every target token of a split (all shards form one\n"
    "stream, in the order given; a directory contributes its fineweb_<split>_*.bin\n"
    "in sorted order) with the challenge's rule, and prints tokens, targets,\n"
    "bytes and tokens per byte. --seq-len L counts only the targets the official\n"
    "evaluation scores: ((tokens-1)/L)*L.";

/* CLI_OK, CLI_HELP (printed) or CLI_ERROR (in err). */
static int parse_opts(int argc, char **argv, bpb_opts *o, pg_error *err) {
  *o = (bpb_opts){.split = "val"};
  const cli_option opts[] = {
      CLI_STRING("tokenizer", 't', &o->tokenizer, "MODEL", "SentencePiece .model (byte tables)"),
      CLI_STRING("split", 's', &o->split, "val|train",
                 "the shards a directory contributes (default val)"),
      CLI_UNSIGNED("seq-len", 'L', &o->seq_len, "L", 0, UINT32_MAX,
                   "count only whole sequences of L targets (0: all)"),
      CLI_UNSIGNED("vocab", 'v', &o->vocab, "N", 0, UINT32_MAX,
                   "table size (default: the model's piece count)"),
      CLI_FLAG("json", 'j', &o->json, "print one JSON object"),
      CLI_ARGS(&o->paths, "SHARD_OR_DIR...", NULL),
      CLI_END};
  const cli_command cmd = {.name = "bpb", .usage = USAGE, .about = ABOUT, .options = opts};
  int r = cli_parse(&cmd, argc, argv, err);
  if (r != CLI_OK) return r;
  if (!o->tokenizer || !o->paths.n)
    return cli_fail(err, &cmd, "need --tokenizer MODEL and at least one shard or directory");
  if (strcmp(o->split, "val") && strcmp(o->split, "train"))
    return cli_fail(err, &cmd, "--split must be val or train, got '%s'", o->split);
  return CLI_OK;
}

/* Expand arguments into shard paths: files as given, directories globbed. */
static int collect_paths(char **args, int n, const char *split, char ***out, size_t *n_out,
                         pg_error *err) {
  char prefix[32];
  snprintf(prefix, sizeof prefix, "fineweb_%s_", split);
  char **paths = NULL;
  size_t count = 0;
  for (int i = 0; i < n; i++) {
    struct stat st;
    char **found = NULL;
    size_t n_found = 0;
    if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      if (shard_glob(args[i], prefix, &found, &n_found, err)) goto fail;
    } else {
      found = malloc(sizeof *found);
      if (!found || !(found[0] = strdup(args[i]))) abort();
      n_found = 1;
    }
    char **grown = realloc(paths, (count + n_found) * sizeof *paths);
    if (!grown) abort();
    paths = grown;
    memcpy(paths + count, found, n_found * sizeof *found);
    count += n_found;
    free(found);
  }
  *out = paths;
  *n_out = count;
  return 0;
fail:
  shard_paths_free(paths, count);
  return -1;
}

/* Total tokens from the headers, so the scored-target limit is known
 * before counting. Opening validates every shard up front. */
static int count_tokens(char **paths, size_t n, uint32_t vocab, uint64_t *total, pg_error *err) {
  *total = 0;
  for (size_t i = 0; i < n; i++) {
    shard s;
    if (shard_open(paths[i], vocab, &s, err)) return -1;
    *total += s.n_tokens;
    shard_close(&s);
  }
  return 0;
}

static int count_bytes(char **paths, size_t n, const byte_luts *l, byte_counter *c,
                       pg_error *err) {
  for (size_t i = 0; i < n; i++) {
    shard s;
    if (shard_open(paths[i], l->vocab_size, &s, err)) return -1;
    int rc = byte_counter_add(c, l, s.tokens, s.n_tokens, paths[i], err);
    shard_close(&s);
    if (rc) return -1;
  }
  return 0;
}

static void print_result(const bpb_opts *o, char **paths, size_t n, const byte_counter *c) {
  double tpb = c->bytes ? (double)c->targets / (double)c->bytes : 0.0;
  if (o->json) {
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(arr, json_string(paths[i]));
    json_t *root = json_pack("{s:o,s:I,s:I,s:I,s:f,s:I}", "shards", arr, "tokens",
                             (json_int_t)c->tokens, "targets", (json_int_t)c->targets, "bytes",
                             (json_int_t)c->bytes, "tokens_per_byte", tpb, "seq_len",
                             (json_int_t)o->seq_len);
    char *s = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(17));
    puts(s);
    free(s);
    json_decref(root);
    return;
  }
  printf("shards          %zu\n", n);
  printf("tokens          %llu\n", (unsigned long long)c->tokens);
  printf("targets         %llu%s\n", (unsigned long long)c->targets,
         o->seq_len ? " (whole sequences only)" : "");
  printf("bytes           %llu\n", (unsigned long long)c->bytes);
  printf("tokens/byte     %.6f\n", tpb);
}

int cmd_bpb(int argc, char **argv) {
  bpb_opts o;
  pg_error err;
  int pr = parse_opts(argc, argv, &o, &err);
  if (pr != CLI_OK) return cli_status(pr, &err);
  sp_model m = {0};
  byte_luts l = {0};
  char **paths = NULL;
  size_t n = 0;
  int rc = PG_EXIT_USAGE;
  if (sp_model_load(o.tokenizer, &m, &err) || luts_from_model(&m, o.vocab, &l, &err) ||
      collect_paths(o.paths.v, o.paths.n, o.split, &paths, &n, &err))
    goto out;
  uint64_t total;
  if (count_tokens(paths, n, l.vocab_size, &total, &err)) goto out;
  byte_counter c;
  byte_counter_init(&c, scored_targets(total, o.seq_len));
  if (count_bytes(paths, n, &l, &c, &err)) goto out;
  print_result(&o, paths, n, &c);
  rc = PG_EXIT_OK;
out:
  if (rc) pg_error_print(&err);
  shard_paths_free(paths, n);
  luts_free(&l);
  sp_model_free(&m);
  return rc;
}
