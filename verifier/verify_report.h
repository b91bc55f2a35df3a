/* What `pgolf verify DIR` found about one submission folder, and its two
 * renderings: the HTML report and the Markdown summary for a pull-request
 * comment. The same page is what `pgolf leaderboard` writes for each
 * folder (OUT/<folder>.html), so the steps below are the whole contract.
 *
 * A result is built in steps, each with a status of its own:
 *
 *   check         the static check (verifier/check_folder.h): FAIL when a
 *                 rule has an error finding (SIGNIFICANCE is the
 *                 significance step's, not this one's);
 *   replay        replays of the folder (pgolf replay), added one replay
 *                 manifest at a time with verify_add_replay (and the
 *                 --fresh-seeds summary with verify_add_fresh): FAIL when a
 *                 replay's verdict is "fail" or the reproduction test finds
 *                 REPRODUCTION_GAP; NOT_RUN when none was added;
 *   audit         `pgolf audit` of every score dump (a file that begins
 *                 with "PGSD") in the folder and among a replay's produced
 *                 files, with the tokenizer and validation split given (the
 *                 tokenizer defaults to the folder's only *.model). FAIL
 *                 when a condition fails; NOT_RUN, with the reason, when
 *                 there is no dump, or a dump could not be audited (inputs
 *                 missing, or unreadable): never PASS for what was not
 *                 checked;
 *   significance  the folder's seeds against the record named by
 *                 opts.against (`pgolf check --against`): the README's rule
 *                 (0.005 nats at p < 0.01) and the maintainers' practice
 *                 (p < 0.25, no margin) side by side. FAIL when even the
 *                 practice sees no progression (a SIGNIFICANCE error);
 *                 NOT_RUN without a record, or when the test could not be
 *                 computed (the reason is the SIGNIFICANCE warning's).
 *
 * The verdict: FAIL when any step fails, else PASS (NOT_RUN steps are
 * listed as such, with why). Every finding of every step is in
 * r->rep.findings, with the runs (the folder's logs and the replays, for
 * the charts); the renderings put errors first.
 *
 * A verify_result is large (the audits' messages): allocate it on the
 * heap. Not thread-safe; one result per folder. */
#ifndef PGOLF_VERIFY_REPORT_H
#define PGOLF_VERIFY_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "common/error.h"
#include "verifier/audit.h"
#include "verifier/check_folder.h"
#include "verifier/findings.h"
#include "verifier/report_html.h"

/* GitHub refuses comments over 65,536 characters; the summary's default
 * cap leaves room for what a workflow puts around it. */
#define VERIFY_MARKDOWN_MAX 60000
#define VERIFY_MARKDOWN_MIN 8192 /* the smallest cap: the steps, significance and audits always fit */
#define VERIFY_MAX_AUDITS 32

typedef enum verify_status { VERIFY_PASS, VERIFY_FAIL, VERIFY_NOT_RUN } verify_status;
enum { VERIFY_CHECK, VERIFY_REPLAY, VERIFY_AUDIT, VERIFY_SIGNIFICANCE, VERIFY_N_STEPS };

typedef struct verify_step {
  verify_status status;
  char detail[1024]; /* one line: what passed, what failed, or why it did not run */
} verify_step;

/* One score dump and what its audit said. */
typedef struct verify_audit {
  char path[PG_ERR_PATH]; /* as shown: relative to the folder, or the replay's scratch path */
  verify_status status;
  char reason[512]; /* NOT_RUN: why */
  audit_outcome out[AUDIT_N_CONDITIONS];
} verify_audit;

typedef struct verify_opts {
  int track;             /* < 0: inferred, as pgolf check does */
  const char *against;   /* the record (folder, manifest or values); NULL: no test */
  const char *tokenizer; /* for the audits; NULL: the folder's only *.model */
  const char *val;       /* validation shards (a folder or a file); NULL: audits not run */
} verify_opts;

typedef struct verify_result {
  char folder[PG_ERR_PATH];
  verify_opts opts; /* the strings are borrowed: they outlive the result */
  verify_step steps[VERIFY_N_STEPS];
  check_result chk;
  report rep;
  verify_audit audits[VERIFY_MAX_AUDITS];
  size_t n_audits, audits_left_out; /* dumps past VERIFY_MAX_AUDITS: counted */
  size_t n_replays, n_replays_failed;
} verify_result;

/* Check dir, audit the dumps in it and test it against opts->against.
 * -1 with err only for input errors (the folder or the record cannot be
 * read: exit 2); everything about the folder is in r. On success free r
 * with verify_result_free; on failure nothing is left to free. */
int verify_folder(const char *dir, const verify_opts *opts, verify_result *r, pg_error *err);

/* Add one replay manifest (pgolf replay's OUT/replay-seedS.json): its run
 * and findings, its verdict into the replay step, and an audit of each
 * score dump among its produced files (in OUT/scratch-seedS/). -1 with
 * err when the manifest cannot be read. */
int verify_add_replay(verify_result *r, const char *manifest_path, pg_error *err);
/* Add the --fresh-seeds summary (OUT/replay-fresh.json): REPRODUCTION_GAP
 * fails the replay step. -1 with err when it cannot be read. */
int verify_add_fresh(verify_result *r, const char *summary_path, pg_error *err);

/* The same for a document already parsed (borrowed); path names it and,
 * for a replay, locates its scratch folder. */
int verify_add_replay_json(verify_result *r, const char *manifest_path, json_t *m,
                           pg_error *err);
int verify_add_fresh_json(verify_result *r, const char *summary_path, json_t *s, pg_error *err);

/* VERIFY_FAIL if any step failed, else VERIFY_PASS. */
verify_status verify_verdict(const verify_result *r);
const char *verify_status_name(verify_status s); /* "pass", "fail", "not run" */

/* The self-contained HTML page (inline CSS and SVG, no script, nothing
 * fetched): the steps, the significance readings, the audits, then the
 * report's charts, metrics, budgets and findings. -1 with err when out of
 * memory or the write fails. */
int verify_write_html(FILE *out, const verify_result *r, pg_error *err);
/* The Markdown summary, at most max_bytes bytes (>= VERIFY_MARKDOWN_MIN):
 * verdict, steps, significance, audits, then the findings, errors first,
 * as many as fit; the rest counted ("... and N more findings"). */
int verify_write_markdown(FILE *out, const verify_result *r, size_t max_bytes, pg_error *err);

void verify_result_free(verify_result *r);

#endif
