/* pgolf report: one self-contained HTML file (and optionally a Markdown
 * summary) from run manifests, replay manifests and check results; see
 * verifier/report_html.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/challenge.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/verbs.h"
#include "verifier/report_html.h"
#include "verifier/value_list.h"

typedef struct report_opts {
  const char *out, *markdown, *record;
  double margin_nats, tokens_per_byte, alpha; /* tokens_per_byte NaN: not given */
  cli_args inputs;
} report_opts;

static const char USAGE[] =
    "pgolf report INPUT... -o REPORT.html [--markdown FILE]\n"
    "             [--record V1,V2,...] [--margin-nats M] [--tokens-per-byte R]\n"
    "             [--alpha A]";
static const char ABOUT[] =
    "INPUT is a run manifest (pgolf train; a DSSE envelope is read too), a replay\n"
    "manifest (pgolf replay) or a check result (pgolf check --json), recognised by\n"
    "content. The HTML holds per-step loss curves of every run and replay (log-\n"
    "scaled steps), the final metrics, bars of train and eval time "
    "against " CHALLENGE_TIME_LIMIT_TEXT
    "\n"
    "and of artifact bytes against " CHALLENGE_SIZE_LIMIT_TEXT
    ", the findings and the significance\n"
    "table; it is self-contained (inline CSS and SVG, no script).";
static const char FOOTER[] = "Exit codes: 0 written, 2 usage or input error.";

/* CLI_OK, CLI_HELP (printed) or CLI_ERROR (in err). */
static int parse_opts(int argc, char **argv, report_opts *o, pg_error *err) {
  *o = (report_opts){.margin_nats = 0.005, .alpha = 0.01, .tokens_per_byte = NAN};
  const cli_option opts[] = {
      CLI_STRING("output", 'o', &o->out, "REPORT.html", "the HTML file to write"),
      CLI_STRING("markdown", 0, &o->markdown, "FILE", "also write a Markdown summary"),
      CLI_STRING("record", 0, &o->record, "V1,V2,...",
                 "the record's per-seed val_bpb; the runs' val_bpb are\n"
                 "tested against it as by `pgolf stats` (Welch, one-sided)"),
      CLI_DOUBLE("margin-nats", 0, &o->margin_nats, "M",
                 "default 0.005, converted to bpb with --tokens-per-byte or\n"
                 "the runs' own val_loss / (val_bpb ln 2)"),
      CLI_DOUBLE("tokens-per-byte", 0, &o->tokens_per_byte, "R",
                 "tokens per byte for the margin's conversion"),
      CLI_DOUBLE("alpha", 0, &o->alpha, "A", "default 0.01"),
      CLI_ARGS(&o->inputs, "INPUT...", NULL),
      CLI_END};
  const cli_command cmd = {
      .name = "report", .usage = USAGE, .about = ABOUT, .options = opts, .footer = FOOTER};
  int r = cli_parse(&cmd, argc, argv, err);
  if (r != CLI_OK) return r;
  if (!o->out) return cli_fail(err, &cmd, "-o is required (the HTML file to write)");
  if (!(o->alpha > 0 && o->alpha < 1)) return cli_fail(err, &cmd, "--alpha must be in (0, 1)");
  if (o->margin_nats < 0) return cli_fail(err, &cmd, "--margin-nats must not be negative");
  if (!isnan(o->tokens_per_byte) && !(o->tokens_per_byte > 0))
    return cli_fail(err, &cmd, "--tokens-per-byte must be positive");
  if (!o->inputs.n) return cli_fail(err, &cmd, "no inputs given");
  return CLI_OK;
}

static int write_text(const char *path, char *text, pg_error *err) {
  if (!text) return pg_fail(err, path, -1, "out of memory");
  int rc = file_write_atomic(path, text, strlen(text), 0644, err);
  free(text);
  return rc;
}

static int build(const report_opts *o, report *r, pg_error *err) {
  for (int i = 0; i < o->inputs.n; i++)
    if (report_add_input(r, o->inputs.v[i], err)) return -1;
  double *rec = NULL;
  size_t n_rec = 0;
  if (o->record && parse_value_list(o->record, "--record", &rec, &n_rec, err)) return -1;
  int have_tpb = !isnan(o->tokens_per_byte);
  int rc = report_significance_compute(r, rec, n_rec, o->margin_nats,
                                       have_tpb ? o->tokens_per_byte : 0, have_tpb, o->alpha, err);
  free(rec);
  if (rc) return -1;
  if (write_text(o->out, report_html(r), err)) return -1;
  if (o->markdown && write_text(o->markdown, report_markdown(r), err)) return -1;
  return 0;
}

int cmd_report(int argc, char **argv) {
  report_opts o;
  report r;
  memset(&r, 0, sizeof r);
  pg_error err = {0};
  int pr = parse_opts(argc, argv, &o, &err);
  if (pr != CLI_OK) return cli_status(pr, &err);
  int rc = build(&o, &r, &err);
  report_free(&r);
  if (rc) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  printf("pgolf report: wrote %s%s%s\n", o.out, o.markdown ? " and " : "",
         o.markdown ? o.markdown : "");
  return PG_EXIT_OK;
}
