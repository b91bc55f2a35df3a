/* `pgolf tokenizer`: read a SentencePiece .model and show what the
 * challenge's byte accounting will make of it.
 *   luts MODEL [--json] [--vocab N]   the official per-token byte tables
 *   info MODEL [--json]               piece counts, special ids, hazards */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/cli.h"
#include "common/error.h"
#include "common/verbs.h"
#include "formats/tokenizer.h"

static const char LUTS_USAGE[] = "pgolf tokenizer luts MODEL [--json] [--vocab N]";
static const char LUTS_ABOUT[] =
    "The per-token byte tables the challenge's evaluation builds:\n"
    "base_bytes, has_leading_space, is_boundary for ids [0, N),\n"
    "N = max(pieces, --vocab).";
static const char INFO_USAGE[] = "pgolf tokenizer info MODEL [--json]";
static const char INFO_ABOUT[] =
    "Piece counts by type, model type, special ids, byte fallback,\n"
    "normalizer, and warnings about byte-accounting hazards.";
static const char FOOTER[] = "Exit codes: 0 ok, 2 usage or input error.";

typedef struct opts {
  const char *model;
  int json;
  uint32_t vocab;
} opts;

/* Parse a sub-verb's options (--vocab only for luts). Returns -1 to go
 * on, else the exit code (after --help or a usage error). */
static int parse_opts(int argc, char **argv, int allow_vocab, opts *o) {
  memset(o, 0, sizeof *o);
  cli_args models;
  const cli_option luts_opts[] = {
      CLI_FLAG("json", 0, &o->json, "print the tables as one compact JSON line"),
      CLI_UNSIGNED("vocab", 0, &o->vocab, "N", 1, SP_MAX_PIECES,
                   "table size N when above the piece count"),
      CLI_ARGS(&models, "MODEL", NULL), CLI_END};
  const cli_option info_opts[] = {CLI_FLAG("json", 0, &o->json, "print one compact JSON object"),
                                  CLI_ARGS(&models, "MODEL", NULL), CLI_END};
  const cli_command cmd = {.name = allow_vocab ? "tokenizer luts" : "tokenizer info",
                           .usage = allow_vocab ? LUTS_USAGE : INFO_USAGE,
                           .about = allow_vocab ? LUTS_ABOUT : INFO_ABOUT,
                           .options = allow_vocab ? luts_opts : info_opts,
                           .footer = FOOTER};
  pg_error err;
  int r = cli_parse(&cmd, argc, argv, &err);
  if (r != CLI_OK) return cli_status(r, &err);
  if (models.n > 1) return cli_usage_error(&cmd, "more than one MODEL ('%s')", models.v[1]);
  if (!models.n) return cli_usage_error(&cmd, "no MODEL given");
  o->model = models.v[0];
  return -1;
}

/* ------------------------------------------------------------------ luts */

static void print_bool_array(const char *key, const bool *v, uint32_t n) {
  printf(",\"%s\":[", key);
  for (uint32_t i = 0; i < n; i++) fputs(i ? (v[i] ? ",true" : ",false") : (v[i] ? "true" : "false"), stdout);
  putchar(']');
}

/* Exactly the format golden/make_tokenizer_luts.py writes, so the two
 * compare byte for byte. */
static void luts_json(const byte_luts *l) {
  printf("{\"vocab_size\":%u,\"base_bytes\":[", l->vocab_size);
  for (uint32_t i = 0; i < l->vocab_size; i++) printf(i ? ",%u" : "%u", l->base_bytes[i]);
  putchar(']');
  print_bool_array("has_leading_space", l->has_leading_space, l->vocab_size);
  print_bool_array("is_boundary", l->is_boundary, l->vocab_size);
  puts("}");
}

/* Text from the model, for a terminal: control bytes escaped (a hostile
 * model must not drive the terminal), UTF-8 left as is. */
static void print_escaped(const char *text, size_t len) {
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c < 0x20 || c == 0x7f)
      printf("\\x%02x", c);
    else
      putchar(c);
  }
}

static void print_piece(const sp_piece *p) { print_escaped(p->text, p->len); }

/* Output errors (a full disk, a closed pipe) must not pass as success. */
static int finish_output(void) {
  if (fflush(stdout) == 0 && !ferror(stdout)) return PG_EXIT_OK;
  pg_die_msg("tokenizer: error writing standard output");
  return PG_EXIT_USAGE;
}

static void luts_table(const sp_model *m, const byte_luts *l) {
  printf("%8s  %-12s %5s %5s %8s  %s\n", "id", "type", "bytes", "space", "boundary", "piece");
  for (uint32_t i = 0; i < l->vocab_size; i++) {
    const char *type = i < m->n_pieces ? sp_piece_type_name(m->pieces[i].type) : "(none)";
    printf("%8u  %-12s %5u %5s %8s  ", i, type, l->base_bytes[i],
           l->has_leading_space[i] ? "yes" : "no", l->is_boundary[i] ? "yes" : "no");
    if (i < m->n_pieces) print_piece(&m->pieces[i]);
    putchar('\n');
  }
}

static int cmd_luts(int argc, char **argv) {
  opts o;
  int rc = parse_opts(argc, argv, 1, &o);
  if (rc >= 0) return rc;
  sp_model m;
  byte_luts l;
  pg_error err;
  if (sp_model_load(o.model, &m, &err)) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  if (luts_from_model(&m, o.vocab, &l, &err)) {
    snprintf(err.file, sizeof err.file, "%s", o.model);
    pg_error_print(&err);
    sp_model_free(&m);
    return PG_EXIT_USAGE;
  }
  if (o.json)
    luts_json(&l);
  else
    luts_table(&m, &l);
  luts_free(&l);
  sp_model_free(&m);
  return finish_output();
}

/* ------------------------------------------------------------------ info */

static json_t *types_json(const sp_summary *s) {
  json_t *t = json_object();
  static const sp_piece_type order[] = {SP_NORMAL, SP_UNKNOWN, SP_CONTROL,
                                        SP_USER_DEFINED, SP_UNUSED, SP_BYTE};
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
    json_object_set_new(t, sp_piece_type_name(order[i]), json_integer(s->n_type[order[i]]));
  return t;
}

static void info_json(const char *path, const sp_model *m, const sp_summary *s, const sp_hazards *w) {
  json_t *o = json_object();
  /* jansson refuses a non-UTF-8 path; say so rather than drop the key. */
  json_t *file = json_string(path);
  json_object_set_new(o, "file", file ? file : json_string("(path is not UTF-8)"));
  json_object_set_new(o, "pieces", json_integer(m->n_pieces));
  json_object_set_new(o, "model_type", json_string(sp_model_type_name(m->model_type)));
  json_object_set_new(o, "trainer_vocab_size", json_integer(m->trainer_vocab_size));
  json_object_set_new(o, "types", types_json(s));
  json_object_set_new(o, "unk_id", json_integer(m->unk_id));
  json_object_set_new(o, "bos_id", json_integer(m->bos_id));
  json_object_set_new(o, "eos_id", json_integer(m->eos_id));
  json_object_set_new(o, "pad_id", json_integer(m->pad_id));
  json_object_set_new(o, "unknown_piece_id", json_integer(s->first_unknown));
  json_object_set_new(o, "byte_fallback_flag", json_boolean(m->byte_fallback));
  json_object_set_new(o, "byte_pieces", json_integer(s->n_byte_values));
  json_object_set_new(o, "byte_fallback", json_boolean(m->byte_fallback && s->all_bytes));
  json_object_set_new(o, "add_dummy_prefix", json_boolean(m->add_dummy_prefix));
  json_object_set_new(o, "normalizer", json_string(m->normalizer_name));
  json_object_set_new(o, "space_piece_id", json_integer(s->space_piece));
  json_t *ws = json_array();
  for (int i = 0; i < w->n; i++) json_array_append_new(ws, json_string(w->text[i]));
  json_object_set_new(o, "warnings", ws);
  char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  if (text) puts(text);
  free(text);
  json_decref(o);
}

static void info_text(const char *path, const sp_model *m, const sp_summary *s, const sp_hazards *w) {
  printf("file              %s\n", path);
  printf("pieces            %u\n", m->n_pieces);
  printf("model type        %s (trained vocab_size %d)\n", sp_model_type_name(m->model_type),
         (int)m->trainer_vocab_size);
  printf("piece types       normal %u, unknown %u, control %u, user_defined %u, unused %u, "
         "byte %u\n",
         s->n_type[SP_NORMAL], s->n_type[SP_UNKNOWN], s->n_type[SP_CONTROL],
         s->n_type[SP_USER_DEFINED], s->n_type[SP_UNUSED], s->n_type[SP_BYTE]);
  printf("special ids       unk %d, bos %d, eos %d, pad %d (trainer spec); unknown piece %d\n",
         (int)m->unk_id, (int)m->bos_id, (int)m->eos_id, (int)m->pad_id, (int)s->first_unknown);
  printf("byte fallback     %s (trainer flag %s, %u/256 byte pieces)\n",
         m->byte_fallback && s->all_bytes ? "yes" : "no", m->byte_fallback ? "true" : "false",
         s->n_byte_values);
  printf("add_dummy_prefix  %s\n", m->add_dummy_prefix ? "true" : "false");
  printf("normalizer        ");
  if (m->normalizer_name[0])
    print_escaped(m->normalizer_name, strlen(m->normalizer_name));
  else
    printf("(none)");
  putchar('\n');
  if (s->space_piece >= 0)
    printf("space piece       id %d\n", (int)s->space_piece);
  else
    printf("space piece       none\n");
  for (int i = 0; i < w->n; i++) printf("warning: %s\n", w->text[i]);
}

static int cmd_info(int argc, char **argv) {
  opts o;
  int rc = parse_opts(argc, argv, 0, &o);
  if (rc >= 0) return rc;
  sp_model m;
  pg_error err;
  if (sp_model_load(o.model, &m, &err)) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  sp_summary s;
  sp_hazards w;
  sp_model_summarize(&m, &s);
  sp_accounting_hazards(&m, &s, &w);
  if (o.json)
    info_json(o.model, &m, &s, &w);
  else
    info_text(o.model, &m, &s, &w);
  sp_model_free(&m);
  return finish_output();
}

int cmd_tokenizer(int argc, char **argv) {
  static const cli_sub subs[] = {{"luts", cmd_luts, LUTS_USAGE, LUTS_ABOUT},
                                 {"info", cmd_info, INFO_USAGE, INFO_ABOUT}};
  static const cli_group g = {.name = "tokenizer",
                              .usage = "pgolf tokenizer SUBCOMMAND MODEL [OPTIONS]",
                              .about =
                                  "Read a SentencePiece .model and show what the challenge's\n"
                                  "byte accounting will make of it.",
                              .subs = subs,
                              .n_subs = 2,
                              .footer = FOOTER};
  return cli_dispatch(&g, argc, argv);
}
