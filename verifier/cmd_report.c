/* pgolf report: one self-contained HTML file (and optionally a Markdown
 * summary) from run manifests, replay manifests and check results; see
 * verifier/report_html.h. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/challenge.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/verbs.h"
#include "verifier/report_html.h"
#include "verifier/value_list.h"

typedef struct report_opts {
  const char *out, *markdown, *record;
  double margin_nats, tokens_per_byte, alpha;
  int have_tpb;
  char **inputs;
  int n_inputs;
} report_opts;

static void report_usage(FILE *out) {
  fprintf(out,
          "usage: pgolf report INPUT... -o REPORT.html [--markdown FILE]\n"
          "                    [--record V1,V2,...] [--margin-nats M] [--tokens-per-byte R]\n"
          "                    [--alpha A]\n"
          "\n"
          "INPUT is a run manifest (pgolf train; a DSSE envelope is read too), a replay\n"
          "manifest (pgolf replay) or a check result (pgolf check --json), recognised by\n"
          "content. The HTML holds per-step loss curves of every run and replay (log-\n"
          "scaled steps), the final metrics, bars of train and eval time against " CHALLENGE_TIME_LIMIT_TEXT "\n"
          "and of artifact bytes against " CHALLENGE_SIZE_LIMIT_TEXT ", the findings and the significance\n"
          "table; it is self-contained (inline CSS and SVG, no script).\n"
          "  --record          the record's per-seed val_bpb; the runs' val_bpb are\n"
          "                    tested against it as by `pgolf stats` (Welch, one-sided)\n"
          "  --margin-nats M   default 0.005, converted to bpb with --tokens-per-byte or\n"
          "                    the runs' own val_loss / (val_bpb ln 2)\n"
          "  --alpha A         default 0.01\n"
          "Exit codes: 0 written, 2 usage or input error.\n");
}

static int parse_double(const char *s, const char *opt, double *v, pg_error *err) {
  char *end;
  *v = strtod(s, &end);
  if (end == s || *end || !isfinite(*v)) return pg_fail(err, opt, -1, "'%s' is not a number", s);
  return 0;
}

static int parse_opts(int argc, char **argv, report_opts *o, pg_error *err) {
  static const struct option longopts[] = {
      {"output", required_argument, 0, 'o'},      {"markdown", required_argument, 0, 'm'},
      {"record", required_argument, 0, 'r'},      {"margin-nats", required_argument, 0, 'M'},
      {"tokens-per-byte", required_argument, 0, 'R'}, {"alpha", required_argument, 0, 'a'},
      {"help", no_argument, 0, 'h'},              {0, 0, 0, 0}};
  memset(o, 0, sizeof *o);
  o->margin_nats = 0.005, o->alpha = 0.01;
  optind = 1;
  opterr = 0;
  int ch;
  while ((ch = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
    int rc = 0;
    switch (ch) {
      case 'h': report_usage(stdout); exit(PG_EXIT_OK);
      case 'o': o->out = optarg; break;
      case 'm': o->markdown = optarg; break;
      case 'r': o->record = optarg; break;
      case 'M': rc = parse_double(optarg, "--margin-nats", &o->margin_nats, err); break;
      case 'a': rc = parse_double(optarg, "--alpha", &o->alpha, err); break;
      case 'R':
        o->have_tpb = 1;
        rc = parse_double(optarg, "--tokens-per-byte", &o->tokens_per_byte, err);
        break;
      default:
        return pg_fail(err, argv[optind - 1], -1,
                       "unknown option or missing value (try `pgolf report --help`)");
    }
    if (rc) return -1;
  }
  if (!o->out) return pg_fail(err, "-o", -1, "is required (the HTML file to write)");
  if (!(o->alpha > 0 && o->alpha < 1)) return pg_fail(err, "--alpha", -1, "must be in (0, 1)");
  if (o->margin_nats < 0) return pg_fail(err, "--margin-nats", -1, "must not be negative");
  if (o->have_tpb && !(o->tokens_per_byte > 0))
    return pg_fail(err, "--tokens-per-byte", -1, "must be positive");
  if (optind >= argc) return pg_fail(err, "", -1, "no inputs given (try `pgolf report --help`)");
  o->inputs = argv + optind;
  o->n_inputs = argc - optind;
  return 0;
}

static int write_text(const char *path, char *text, pg_error *err) {
  if (!text) return pg_fail(err, path, -1, "out of memory");
  int rc = file_write_atomic(path, text, strlen(text), 0644, err);
  free(text);
  return rc;
}

static int build(const report_opts *o, report *r, pg_error *err) {
  for (int i = 0; i < o->n_inputs; i++)
    if (report_add_input(r, o->inputs[i], err)) return -1;
  double *rec = NULL;
  size_t n_rec = 0;
  if (o->record && parse_value_list(o->record, "--record", &rec, &n_rec, err)) return -1;
  int rc = report_significance_compute(r, rec, n_rec, o->margin_nats, o->tokens_per_byte,
                                       o->have_tpb, o->alpha, err);
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
  int rc = parse_opts(argc, argv, &o, &err) || build(&o, &r, &err) ? -1 : 0;
  report_free(&r);
  if (rc) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  printf("pgolf report: wrote %s%s%s\n", o.out, o.markdown ? " and " : "",
         o.markdown ? o.markdown : "");
  return PG_EXIT_OK;
}
