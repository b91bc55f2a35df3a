/* pgolf audit DUMP --tokenizer MODEL --val SHARDS... [--claim BPB]
 *             [--manifest FILE] [--seq-len T] [--json]
 * pgolf audit --perturb ...            (verifier/audit_perturb.c)
 *
 * Checks a score dump against the validation split: one finding per
 * condition (verifier/audit.h). Exit 0 every condition passes (or has
 * nothing to check), 1 a condition fails, 2 usage error or malformed input
 * (a bad dump, shard, tokenizer or manifest is never a "finding": the
 * audit cannot say anything about input it cannot read). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cli.h"
#include "common/error.h"
#include "common/verbs.h"
#include "formats/val_data.h"
#include "formats/shard.h"
#include "formats/tokenizer.h"
#include "verifier/audit.h"
#include "verifier/findings.h"

static const char USAGE[] =
    "pgolf audit DUMP --tokenizer MODEL --val SHARDS... [--claim BPB]\n"
    "            [--manifest FILE] [--seq-len T] [--json]\n"
    "pgolf audit --perturb ...   (see `pgolf audit --perturb --help`)";
static const char ABOUT[] =
    "Audits a score dump (the PGSD format in SUBMISSION.md) written by an evaluation,\n"
    "one finding per condition:\n"
    "  AUDIT_COVERAGE       every target of the split scored exactly once, in order (C4)\n"
    "  AUDIT_BYTES          val_bpb recomputed by the official byte rule, against --claim\n"
    "  AUDIT_NORMALIZATION  each probe sums to 1 and matches its record's nll (C2)\n"
    "  AUDIT_ORDER          no ADAPT event before the SCORE of its positions (C3), from\n"
    "                       the evaluation's event log (predicate.eval)";
static const char FOOTER[] =
    "Exit: 0 all conditions pass, 1 a condition fails, 2 usage error or malformed input.";

typedef struct audit_args {
  const char *dump, *tokenizer, *claim, *manifest;
  const char **val; /* room for every argument */
  size_t n_val;
  uint32_t seq_len;
  int json;
  cli_args dumps;
} audit_args;

/* --val SHARDS...: every following argument up to the next `--option`. */
static int take_val(cli_parser *p, const cli_option *o, const char *inline_value) {
  audit_args *a = o->dest;
  const char *next;
  if (inline_value) a->val[a->n_val++] = inline_value;
  while ((next = cli_peek(p)) && strncmp(next, "--", 2)) a->val[a->n_val++] = cli_next(p);
  if (!a->n_val) return cli_error(p, "--val needs at least one shard");
  return 0;
}

/* CLI_OK, CLI_HELP (printed) or CLI_ERROR (in err). a->val is
 * allocated in every case. */
static int parse_args(int argc, char **argv, audit_args *a, pg_error *err) {
  memset(a, 0, sizeof *a); /* seq_len 0: not given (the dump's T) */
  a->val = calloc((size_t)argc, sizeof *a->val);
  if (!a->val) return pg_fail(err, "audit", -1, "out of memory"), CLI_ERROR;
  const cli_option opts[] = {
      CLI_STRING("tokenizer", 0, &a->tokenizer, "MODEL", "the SentencePiece model (byte tables)"),
      CLI_CALLBACK("val", 0, a, "SHARDS...", take_val,
                   "validation shards (files, or directories of fineweb_val_*.bin)\n"
                   "forming one stream, in the order given"),
      CLI_STRING("claim", 0, &a->claim, "BPB",
                 "the claimed val_bpb, compared to the digits given\n"
                 "(default: the val_bpb the dump's own event log reports)"),
      CLI_STRING("manifest", 0, &a->manifest, "FILE",
                 "run manifest (or DSSE envelope) with predicate.eval\n"
                 "(default: DUMP.events.json, when present)"),
      CLI_UNSIGNED("seq-len", 0, &a->seq_len, "T", 1, UINT32_MAX,
                   "the split is truncated as the official plain evaluation does:\n"
                   "((N-1)/T)*T + 1 tokens (default: the T the dump records;\n"
                   "every target for a version 1 dump)"),
      CLI_FLAG("json", 0, &a->json, "{\"dump\",\"verdict\",\"findings\",\"summary\"}"),
      CLI_ARGS(&a->dumps, "DUMP", NULL),
      CLI_END};
  const cli_command cmd = {
      .name = "audit", .usage = USAGE, .about = ABOUT, .options = opts, .footer = FOOTER};
  int r = cli_parse(&cmd, argc, argv, err);
  if (r != CLI_OK) return r;
  if (a->dumps.n > 1)
    return cli_fail(err, &cmd, "one dump at a time (got '%s' and '%s')", a->dumps.v[0],
                    a->dumps.v[1]);
  a->dump = a->dumps.n ? a->dumps.v[0] : NULL;
  if (!a->dump || !a->tokenizer || !a->n_val)
    return cli_fail(err, &cmd, "DUMP, --tokenizer and --val are required");
  double v;
  int d;
  if (a->claim && audit_parse_claim(a->claim, &v, &d))
    return cli_fail(err, &cmd, "--claim: expected a plain decimal such as 1.2244, got '%s'",
                    a->claim);
  return CLI_OK;
}

/* The shard files named by --val: files as given, directories expanded. */
static int val_paths(const audit_args *a, char ***out, size_t *n, pg_error *err) {
  char **paths = NULL;
  size_t count = 0;
  for (size_t i = 0; i < a->n_val; i++) {
    struct stat st;
    char **sub = NULL;
    size_t nsub = 1;
    if (stat(a->val[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      if (shard_glob(a->val[i], "fineweb_val_", &sub, &nsub, err)) goto fail;
    }
    char **grown = realloc(paths, (count + nsub) * sizeof *paths);
    if (!grown) {
      shard_paths_free(sub, sub ? nsub : 0);
      pg_fail(err, a->val[i], -1, "out of memory");
      goto fail;
    }
    paths = grown;
    for (size_t k = 0; k < nsub; k++) paths[count++] = sub ? sub[k] : strdup(a->val[i]);
    free(sub);
  }
  *out = paths;
  *n = count;
  return 0;
fail:
  shard_paths_free(paths, count);
  return -1;
}

/* Everything the audit reads, loaded and validated. */
typedef struct audit_loaded {
  score_dump dump;
  uint8_t dump_sha256[SHA256_LEN];
  byte_luts luts;
  val_data val;
  uint16_t *tokens;
  uint32_t seq_len; /* the T the split is kept for */
  audit_log log;
} audit_loaded;

static void loaded_free(audit_loaded *l) {
  score_dump_close(&l->dump);
  luts_free(&l->luts);
  val_data_close(&l->val);
  free(l->tokens);
  audit_log_free(&l->log);
}

/* The T to keep the split for: --seq-len, else the one a version 2 dump
 * records, else 1 (a version 1 dump does not say: every target). */
static uint32_t split_seq_len(const audit_args *a, const score_dump *d) {
  return a->seq_len ? a->seq_len : d->seq_len ? d->seq_len : 1;
}

static int load_luts(const audit_args *a, uint32_t vocab, byte_luts *luts, pg_error *err) {
  sp_model m;
  if (sp_model_load(a->tokenizer, &m, err)) return -1;
  int rc = luts_from_model(&m, vocab, luts, err);
  sp_model_free(&m);
  if (rc && !err->file[0]) snprintf(err->file, sizeof err->file, "%s", a->tokenizer);
  return rc;
}

static int load_all(const audit_args *a, audit_loaded *l, pg_error *err) {
  memset(l, 0, sizeof *l);
  if (score_dump_open(a->dump, &l->dump, err)) return -1;
  if (sha256_file(a->dump, l->dump_sha256, NULL, err)) return -1;
  if (load_luts(a, l->dump.vocab_size, &l->luts, err)) return -1;
  char **paths;
  size_t n;
  if (val_paths(a, &paths, &n, err)) return -1;
  l->seq_len = split_seq_len(a, &l->dump);
  int rc = val_data_open_paths(&l->val, paths, n, l->seq_len, l->dump.vocab_size, err);
  shard_paths_free(paths, n);
  if (rc) return -1;
  l->tokens = malloc(l->val.n_tokens * sizeof *l->tokens);
  if (!l->tokens) return pg_fail(err, "", -1, "out of memory for %" PRIu64 " tokens",
                                 l->val.n_tokens);
  if (val_data_copy(&l->val, 0, l->val.n_tokens, l->tokens, err)) return -1;
  return audit_log_load(a->dump, &l->dump, a->manifest, &l->log, err);
}

/* What the audit checks the dump against, defaults filled in: the log
 * found (if any), and the claim: --claim, else the val_bpb the dump's own
 * log reports (a log that is not the dump's lends it nothing). */
static audit_input make_input(const audit_args *a, const audit_loaded *l) {
  audit_input in = {a->dump, &l->dump, l->tokens, l->val.n_tokens, &l->luts, a->claim,
                    l->log.found ? &l->log.events : NULL, l->dump_sha256, l->seq_len,
                    l->log.missing[0] ? l->log.missing : NULL};
  if (!in.claim && in.events && in.events->val_bpb[0] && audit_events_match(&in, NULL, 0))
    in.claim = in.events->val_bpb;
  return in;
}

static void to_findings(const audit_args *a, const audit_outcome *o, finding_list *f) {
  for (int i = 0; i < AUDIT_N_CONDITIONS; i++) {
    if (o[i].status == AUDIT_PASS) continue;
    severity sev = o[i].status == AUDIT_FAIL ? SEV_ERROR : SEV_WARNING;
    if (o[i].position >= 0)
      findings_add(f, o[i].code, sev, a->dump, 0, "%s: position %" PRId64 ": %s",
                   o[i].condition, o[i].position, o[i].message);
    else
      findings_add(f, o[i].code, sev, a->dump, 0, "%s: %s%s", o[i].condition,
                   o[i].status == AUDIT_SKIP ? "not checked: " : "", o[i].message);
  }
}

static json_t *summary_json(const audit_loaded *l, const audit_outcome *o) {
  json_t *s = json_object();
  json_t *conds = json_array();
  for (int i = 0; i < AUDIT_N_CONDITIONS; i++) {
    json_t *c = json_object();
    json_object_set_new(c, "code", json_string(o[i].code));
    json_object_set_new(c, "condition", json_string(o[i].condition));
    json_object_set_new(c, "status", json_string(audit_status_name(o[i].status)));
    json_object_set_new(c, "position", o[i].position >= 0 ? json_integer(o[i].position)
                                                          : json_null());
    json_object_set_new(c, "message", json_string(o[i].message));
    json_array_append_new(conds, c);
  }
  json_object_set_new(s, "conditions", conds);
  const audit_outcome *b = &o[AUDIT_BYTES];
  json_object_set_new(s, "val_bpb", isnan(b->val_bpb) ? json_null() : json_real(b->val_bpb));
  json_object_set_new(s, "nll_sum", isnan(b->nll_sum) ? json_null() : json_real(b->nll_sum));
  json_object_set_new(s, "bytes", json_integer((json_int_t)b->bytes));
  json_object_set_new(s, "targets", json_integer((json_int_t)(l->val.n_tokens - 1)));
  json_object_set_new(s, "records", json_integer((json_int_t)l->dump.n_records));
  json_object_set_new(s, "probes", json_integer((json_int_t)l->dump.n_probes));
  json_object_set_new(s, "vocab_size", json_integer(l->dump.vocab_size));
  json_object_set_new(s, "events", l->log.found ? json_integer((json_int_t)l->log.events.n)
                                                 : json_null());
  json_object_set_new(s, "seq_len", json_integer(l->seq_len));
  json_object_set_new(s, "event_log", l->log.found ? json_string(l->log.path) : json_null());
  return s;
}

static void print_json(const audit_args *a, const audit_loaded *l, const audit_input *in,
                       const audit_outcome *o, const finding_list *f) {
  json_t *summary = summary_json(l, o);
  json_object_set_new(summary, "claim", in->claim ? json_string(in->claim) : json_null());
  json_t *j = findings_json(a->dump, f, summary);
  json_t *out = json_object(); /* the findings format, with "dump" for "folder" */
  json_object_set_new(out, "dump", json_string(a->dump));
  json_object_set(out, "verdict", json_object_get(j, "verdict"));
  json_object_set(out, "findings", json_object_get(j, "findings"));
  json_object_set(out, "summary", json_object_get(j, "summary"));
  json_dumpf(out, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  fputc('\n', stdout);
  json_decref(out);
  json_decref(j);
}

/* One line on what the defaults chose, so a reader sees what was checked. */
static void print_inputs(const audit_args *a, const audit_loaded *l, const audit_input *in) {
  printf("  using   sequence length %" PRIu32 " (%s); event log %s%s; claim %s%s\n", l->seq_len,
         a->seq_len ? "--seq-len" : l->dump.seq_len ? "the dump's" : "every target",
         l->log.found ? l->log.path : "none",
         l->log.found && l->log.is_default ? " (beside the dump)" : "",
         in->claim ? in->claim : "none",
         in->claim && !a->claim ? " (the event log's val_bpb)" : "");
}

static void print_text(const audit_args *a, const audit_outcome *o, int failed) {
  printf("%s: %s\n", a->dump, failed ? "FAIL" : "PASS");
  for (int i = 0; i < AUDIT_N_CONDITIONS; i++) {
    char pos[40] = "";
    if (o[i].position >= 0) snprintf(pos, sizeof pos, "position %" PRId64 ": ", o[i].position);
    printf("  %-7s %-19s %s%s\n", audit_status_name(o[i].status), o[i].code, pos, o[i].message);
  }
}

/* "--perturb" before any "--" selects the perturbation test. */
static int wants_perturb(int argc, char **argv) {
  for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
    if (!strcmp(argv[i], "--perturb")) return 1;
  return 0;
}

int cmd_audit(int argc, char **argv) {
  if (wants_perturb(argc, argv)) return audit_perturb_main(argc, argv);
  audit_args a;
  pg_error err;
  int pr = parse_args(argc, argv, &a, &err);
  if (pr != CLI_OK) {
    free(a.val);
    return cli_status(pr, &err);
  }
  audit_loaded l;
  if (load_all(&a, &l, &err)) {
    pg_error_print(&err);
    loaded_free(&l);
    free(a.val);
    return PG_EXIT_USAGE;
  }
  audit_input in = make_input(&a, &l);
  audit_outcome o[AUDIT_N_CONDITIONS];
  int failed = audit_run(&in, o);
  finding_list f = {0};
  to_findings(&a, o, &f);
  if (a.json) print_json(&a, &l, &in, o, &f);
  else {
    print_text(&a, o, failed);
    print_inputs(&a, &l, &in);
  }
  findings_free(&f);
  loaded_free(&l);
  free(a.val);
  return failed ? PG_EXIT_CHECK_FAILED : PG_EXIT_OK;
}
