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

/* What the parsed options ask the audit (verifier/audit_file.c) for. */
static audit_request request_of(const audit_args *a) {
  return (audit_request){a->dump, a->tokenizer, a->claim, a->manifest, a->val, a->n_val,
                         a->seq_len};
}

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
  audit_request rq = request_of(&a);
  if (audit_load(&rq, &l, &err)) {
    pg_error_print(&err);
    audit_loaded_free(&l);
    free(a.val);
    return PG_EXIT_USAGE;
  }
  audit_input in = audit_make_input(&rq, &l);
  audit_outcome o[AUDIT_N_CONDITIONS];
  int failed = audit_run(&in, o);
  finding_list f = {0};
  audit_to_findings(a.dump, o, &f);
  if (a.json) print_json(&a, &l, &in, o, &f);
  else {
    print_text(&a, o, failed);
    print_inputs(&a, &l, &in);
  }
  findings_free(&f);
  audit_loaded_free(&l);
  free(a.val);
  return failed ? PG_EXIT_CHECK_FAILED : PG_EXIT_OK;
}
