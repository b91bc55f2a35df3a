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

static const char USAGE[] =
    "pgolf data overlap --train DIR --val DIR [--bos N | --tokenizer MODEL]\n"
    "                   [--min-tokens N] [--json]";
static const char ABOUT[] =
    "Validation documents that are also in the training shards. Both streams\n"
    "(DIR/fineweb_val_*.bin, DIR/fineweb_train_*.bin, in name order) are split\n"
    "into documents at the BOS token: every document starts with it, as the\n"
    "challenge's data are written (the data manifest's bos_id, no EOS).\n"
    "Documents are compared by length and two 64-bit hashes.";
static const char FOOTER[] =
    "Exit: 0 no validation document in training, 1 some, 2 usage or input error.";

typedef struct data_opts {
  const char *train, *val, *tokenizer;
  int64_t bos; /* -1: not given */
  uint64_t min_tokens;
  int json;
  cli_args extra;
} data_opts;

/* CLI_OK, CLI_HELP (printed) or CLI_ERROR (in err). */
static int parse(int argc, char **argv, data_opts *o, pg_error *err) {
  const cli_option opts[] = {
      CLI_STRING("train", 0, &o->train, "DIR", "the training shards (fineweb_train_*.bin)"),
      CLI_STRING("val", 0, &o->val, "DIR", "the validation shards (fineweb_val_*.bin)"),
      CLI_INT("bos", 0, &o->bos, "N", 0, 65535,
              "the document-start id (default: the challenge's, 1)"),
      CLI_STRING("tokenizer", 0, &o->tokenizer, "MODEL",
                 "take the BOS id from a SentencePiece model instead"),
      CLI_UNSIGNED("min-tokens", 0, &o->min_tokens, "N", 0, UINT32_MAX,
                   "compare only documents of at least N tokens after the BOS\n"
                   "(default 1: an empty document equals every other)"),
      CLI_FLAG("json", 0, &o->json, "{train, val, matched_val_docs, ..., first:[...]}"),
      CLI_ARGS(&o->extra, "", NULL),
      CLI_END};
  const cli_command cmd = {.name = "data overlap", .usage = USAGE, .about = ABOUT,
                           .options = opts, .footer = FOOTER, .flags = CLI_ONCE};
  int r = cli_parse(&cmd, argc, argv, err);
  if (r != CLI_OK) return r;
  if (o->extra.n) return cli_fail(err, &cmd, "unexpected argument '%s'", o->extra.v[0]);
  if (!o->train || !o->val) return cli_fail(err, &cmd, "--train and --val are both required");
  if (o->bos >= 0 && o->tokenizer) return cli_fail(err, &cmd, "give --bos or --tokenizer, not both");
  return CLI_OK;
}

static int resolve_bos(const data_opts *o, uint16_t *bos, pg_error *err) {
  uint64_t v = o->bos >= 0 ? (uint64_t)o->bos : CHALLENGE_DATA_BOS_ID;
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
  data_opts o = {.bos = -1, .min_tokens = 1};
  pg_error err = {0};
  int p = parse(argc, argv, &o, &err);
  if (p != CLI_OK) return cli_status(p, &err);
  uint16_t bos = 0;
  uint64_t min_tokens = o.min_tokens;
  if (resolve_bos(&o, &bos, &err)) {
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
  const cli_sub subs[] = {{"overlap", cmd_overlap, USAGE, ABOUT}};
  const cli_group g = {.name = "data",
                       .usage = "pgolf data SUBCOMMAND [OPTIONS]",
                       .subs = subs,
                       .n_subs = sizeof subs / sizeof subs[0],
                       .footer = FOOTER};
  return cli_dispatch(&g, argc, argv);
}
