/* pgolf report: what a report shows, gathered from run manifests
 * (pgolf/run/v1), replay manifests (pgolf/replay/v1) and check results
 * (`pgolf check --json`), and its two renderings:
 *
 *   - one self-contained HTML file: inline CSS and SVG, no script, no
 *     font or image fetched from anywhere. Per-step loss curves of every
 *     run and replay on a log-scaled step axis, the final metrics, bars of
 *     train and eval time against 600 s and of artifact bytes against
 *     16,000,000, the findings, and the significance table;
 *   - a Markdown summary for a pull-request comment.
 *
 * Curve colours. Run i (in the order of the curves) is drawn in
 * REPORT_PALETTE[i % REPORT_PALETTE_N], with anti-aliasing off
 * (shape-rendering crispEdges), and no other element of the page uses
 * those colours except a small legend swatch; so a screenshot shows each
 * run's curve as pixels of exactly its colour (the report test counts
 * them). */
#ifndef PGOLF_REPORT_HTML_H
#define PGOLF_REPORT_HTML_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "verifier/welch.h"

#define REPORT_MAX_INPUT_BYTES ((size_t)256 << 20)
#define REPORT_PALETTE_N 10
extern const char *const REPORT_PALETTE[REPORT_PALETTE_N];

typedef enum report_kind { REPORT_RUN, REPORT_REPLAY, REPORT_CHECK_LOG } report_kind;

/* One run: a training run, a replay, or a log named by a check result.
 * Absent numbers are NAN; a run without per-step losses has n == 0. */
typedef struct report_run {
  report_kind kind;
  char label[160];
  char source[PG_ERR_PATH];
  int64_t seed; /* -1 if unknown */
  double val_bpb, val_loss, train_s, eval_s, artifact_bytes;
  char verdict[16]; /* a replay's verdict, else "" */
  double *steps, *losses;
  size_t n;
  /* A replay's NVML samples, averaged over its GPUs per sampling instant:
   * seconds since the start, GPU utilization (%), power (W). */
  double *hw_t, *hw_util, *hw_power;
  size_t n_hw;
  char hw_name[128]; /* the first GPU's name, "" if not attested */
} report_run;

typedef struct report_finding {
  char *source, *code, *severity, *message, *file;
  int64_t line; /* 0 if none */
} report_finding;

/* The significance table: the val_bpb of the report's run manifests
 * (REPORT_RUN; when there are none, of the checked folders' logs) against
 * a record, or only their summary when no record was given. */
typedef struct report_significance {
  int have_new, have_record, have_test;
  sample_summary new_s, rec_s;
  double margin_nats, tokens_per_byte, alpha;
  int have_tpb;
  margin_test t;
  char note[256]; /* why a part is missing */
} report_significance;

typedef struct report {
  report_run *runs;
  size_t n_runs, cap_runs;
  report_finding *findings;
  size_t n_findings, cap_findings;
  report_significance sig;
} report;

/* Read one input (run manifest or DSSE envelope, replay manifest, check
 * result) and append what it holds. */
int report_add_input(report *r, const char *path, pg_error *err);
/* The same for an input already parsed (j is borrowed; path names it in
 * messages and as the findings' source). A run manifest is read from
 * path, as report_add_input does. */
int report_add_json(report *r, const char *path, json_t *j, pg_error *err);
/* Fill r->sig from the runs; record (may be NULL) is the record's val_bpb
 * per seed. */
int report_significance_compute(report *r, const double *record, size_t n_record,
                                double margin_nats, double tokens_per_byte, int have_tpb,
                                double alpha, pg_error *err);
void report_free(report *r);

/* Renderings (fresh strings, NULL when out of memory). */
char *report_html(const report *r);
/* report_html with another <title> and <h1>, and extra_html (trusted
 * markup, may be NULL) placed right after the heading. */
char *report_html_page(const report *r, const char *title, const char *extra_html);
char *report_markdown(const report *r);

#endif
