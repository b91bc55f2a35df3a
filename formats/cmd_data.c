/* pgolf data overlap --train DIR --val DIR [--bos N | --tokenizer MODEL]
 *                   [--min-tokens N] [--json]
 * Validation documents found in training shards (formats/data_overlap.h).
 * Exit 0 none, 1 some, 2 usage or input error. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/challenge.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/verbs.h"
#include "formats/data_overlap.h"
#include "formats/tokenizer.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: pgolf data overlap --train DIR --val DIR [--bos N | --tokenizer MODEL]\n"
          "                          [--min-tokens N] [--json]\n"
          "\n"
          "overlap  validation documents that are also in the training shards. Both\n"
          "         streams (DIR/fineweb_val_*.bin, DIR/fineweb_train_*.bin, in name order)\n"
          "         are split into documents at the BOS token: every document starts with\n"
          "         it, as the challenge's data are written (data manifest: bos_id %d,\n"
          "         no EOS). Documents are compared by length and two 64-bit hashes.\n"
          "  --bos N          the document-start id (default %d, the challenge's)\n"
          "  --tokenizer M    take the BOS id from a SentencePiece model instead\n"
          "  --min-tokens N   compare only documents of at least N tokens after the BOS\n"
          "                   (default 1: an empty document equals every other)\n"
          "  --json           {train, val, matched_val_docs, ..., first:[...]}\n"
          "\n"
          "Exit: 0 no validation document in training, 1 some, 2 usage or input error.\n",
          CHALLENGE_DATA_BOS_ID, CHALLENGE_DATA_BOS_ID);
}

typedef struct data_opts {
  const char *train, *val, *bos, *tokenizer, *min_tokens;
  int json;
} data_opts;

static int parse_u64(const char *s, const char *opt, uint64_t max, uint64_t *out, pg_error *err) {
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (!*s || *end || s[0] == '-' || v > max)
    return pg_fail(err, opt, -1, "wants a whole number from 0 to %llu, got '%s'",
                   (unsigned long long)max, s);
  *out = v;
  return 0;
}

/* -1 error, 1 --help, 0 ok. */
static int parse(int argc, char **argv, data_opts *o, pg_error *err) {
  const cli_value_opt table[] = {{"--train", &o->train},         {"--val", &o->val},
                                 {"--bos", &o->bos},             {"--tokenizer", &o->tokenizer},
                                 {"--min-tokens", &o->min_tokens}};
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
    if (!strcmp(argv[i], "--json")) {
      o->json = 1;
      continue;
    }
    const char *which = NULL;
    int r = cli_take_from_table(argc, argv, &i, table, sizeof table / sizeof *table, &which);
    if (r == CLI_NO_VALUE) return pg_fail(err, which, -1, "needs a value");
    if (r == CLI_TWICE) return pg_fail(err, which, -1, "given twice");
    if (r == CLI_UNKNOWN)
      return pg_fail(err, argv[i], -1, "unknown option or argument (try `pgolf data --help`)");
  }
  if (!o->train || !o->val) return pg_fail(err, "--train/--val", -1, "both are required");
  if (o->bos && o->tokenizer) return pg_fail(err, "--bos/--tokenizer", -1, "give one of them");
  return 0;
}

static int resolve_bos(const data_opts *o, uint16_t *bos, pg_error *err) {
  uint64_t v = CHALLENGE_DATA_BOS_ID;
  if (o->bos && parse_u64(o->bos, "--bos", 65535, &v, err)) return -1;
  if (o->tokenizer) {
    sp_model m;
    if (sp_model_load(o->tokenizer, &m, err)) return -1;
    int32_t id = m.bos_id;
    sp_model_free(&m);
    if (id < 0 || id > 65535)
      return pg_fail(err, o->tokenizer, -1, "the model has no BOS id usable in uint16 shards (%d)", id);
    v = (uint64_t)id;
  }
  *bos = (uint16_t)v;
  return 0;
}

static const char *base(const char *p) {
  const char *b = strrchr(p, '/');
  return b ? b + 1 : p;
}

static void print_text(const overlap_report *r, uint16_t bos, uint64_t min_tokens) {
  printf("validation: %zu shard%s, %llu tokens, %llu documents compared (BOS id %u)\n", r->n_val,
         r->n_val == 1 ? "" : "s", (unsigned long long)r->val_tokens,
         (unsigned long long)r->val_docs, bos);
  printf("training:   %zu shard%s, %llu tokens, %llu documents compared\n", r->n_train,
         r->n_train == 1 ? "" : "s", (unsigned long long)r->train_tokens,
         (unsigned long long)r->train_docs);
  if (r->val_short || r->train_short)
    printf("not compared (fewer than %llu tokens): %llu validation, %llu training documents\n",
           (unsigned long long)min_tokens, (unsigned long long)r->val_short,
           (unsigned long long)r->train_short);
  printf("validation documents found in training: %llu of %llu (%.2f%%), in %llu training documents\n",
         (unsigned long long)r->matched_val_docs, (unsigned long long)r->val_docs,
         r->val_docs ? 100.0 * (double)r->matched_val_docs / (double)r->val_docs : 0.0,
         (unsigned long long)r->matched_train_docs);
  for (size_t i = 0; i < r->n_first; i++) {
    const overlap_match *m = &r->first[i];
    printf("  %s:%llu = %s:%llu (%llu tokens)\n", base(r->val_paths[m->val_shard]),
           (unsigned long long)m->val_offset, base(r->train_paths[m->train_shard]),
           (unsigned long long)m->train_offset, (unsigned long long)m->tokens);
  }
}

static void print_json(const overlap_report *r, uint16_t bos, uint64_t min_tokens) {
  json_t *j = json_object(), *first = json_array();
  json_object_set_new(j, "bos_id", json_integer(bos));
  json_object_set_new(j, "min_tokens", json_integer((json_int_t)min_tokens));
  json_object_set_new(j, "val_shards", json_integer((json_int_t)r->n_val));
  json_object_set_new(j, "val_tokens", json_integer((json_int_t)r->val_tokens));
  json_object_set_new(j, "val_docs", json_integer((json_int_t)r->val_docs));
  json_object_set_new(j, "train_shards", json_integer((json_int_t)r->n_train));
  json_object_set_new(j, "train_tokens", json_integer((json_int_t)r->train_tokens));
  json_object_set_new(j, "train_docs", json_integer((json_int_t)r->train_docs));
  json_object_set_new(j, "matched_val_docs", json_integer((json_int_t)r->matched_val_docs));
  json_object_set_new(j, "matched_train_docs", json_integer((json_int_t)r->matched_train_docs));
  for (size_t i = 0; i < r->n_first; i++) {
    const overlap_match *m = &r->first[i];
    json_t *x = json_object();
    json_object_set_new(x, "val_shard", json_string(base(r->val_paths[m->val_shard])));
    json_object_set_new(x, "val_offset", json_integer((json_int_t)m->val_offset));
    json_object_set_new(x, "train_shard", json_string(base(r->train_paths[m->train_shard])));
    json_object_set_new(x, "train_offset", json_integer((json_int_t)m->train_offset));
    json_object_set_new(x, "tokens", json_integer((json_int_t)m->tokens));
    json_array_append_new(first, x);
  }
  json_object_set_new(j, "first", first);
  json_object_set_new(j, "verdict", json_string(r->matched_val_docs ? "overlap" : "disjoint"));
  char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  if (s) puts(s);
  free(s);
  json_decref(j);
}

static int cmd_overlap(int argc, char **argv) {
  data_opts o = {0};
  pg_error err = {0};
  int p = parse(argc, argv, &o, &err);
  if (p > 0) {
    usage(stdout);
    return PG_EXIT_OK;
  }
  uint16_t bos = 0;
  uint64_t min_tokens = 1;
  if (p || resolve_bos(&o, &bos, &err) ||
      (o.min_tokens && parse_u64(o.min_tokens, "--min-tokens", UINT32_MAX, &min_tokens, &err))) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  overlap_report r;
  if (data_overlap(o.train, o.val, bos, min_tokens, &r, &err)) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  if (o.json) print_json(&r, bos, min_tokens);
  else print_text(&r, bos, min_tokens);
  int found = r.matched_val_docs > 0;
  overlap_report_free(&r);
  if (fflush(stdout)) {
    pg_die_msg("data: cannot write the report");
    return PG_EXIT_USAGE;
  }
  return found ? PG_EXIT_CHECK_FAILED : PG_EXIT_OK;
}

int cmd_data(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return PG_EXIT_USAGE;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return PG_EXIT_OK;
  }
  if (!strcmp(argv[1], "overlap")) return cmd_overlap(argc, argv);
  pg_die_msg("data: unknown subcommand '%s' (try `pgolf data --help`)", argv[1]);
  return PG_EXIT_USAGE;
}
