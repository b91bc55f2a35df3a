/* `pgolf audit`: black-box checks of a score-first evaluation from its
 * score dump (manifests/score_dump.h), the validation split, the tokenizer
 * and, for pgolf's own evaluators, the event log in the run's manifest.
 *
 * One finding per condition of the challenge's field guide (issue #1017):
 *   AUDIT_COVERAGE      C4, single pass: every target position of the split
 *                       scored exactly once, in increasing order, with the
 *                       split's token as target (audit_coverage.c);
 *   AUDIT_BYTES         val_bpb recomputed from the dump's nll by the
 *                       official byte rule, against --claim (audit_bytes.c);
 *   AUDIT_NORMALIZATION C2: each probe is one normalized distribution and
 *                       agrees with its record's nll (audit_normalization.c);
 *   AUDIT_ORDER         C3: no ADAPT event covers a position before the
 *                       SCORE event that scored it; the event chain and the
 *                       scored sums agree with the dump (audit_order.c).
 * C1 (causality) and C3 for evaluators without an event log are tested
 * experimentally by `pgolf audit --perturb` (audit_perturb.c).
 *
 * Defaults (cmd_audit.c): the split is kept for the T a version 2 dump
 * records (version 1: every target); the event log is --manifest, else
 * the file beside the dump (manifests/eval_chain.h, DUMP.events.json);
 * the claim is --claim, else the val_bpb that log reports. So `pgolf
 * eval` then `pgolf audit DUMP --tokenizer M --val DIR` checks all four
 * conditions with nothing else said.
 *
 * The event log of pgolf's own evaluators (predicate.eval) and its hash
 * chain are defined in manifests/eval_chain.h, shared with the trainer's
 * evaluators. */
#ifndef PGOLF_AUDIT_H
#define PGOLF_AUDIT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/sha256.h"
#include "formats/tokenizer.h"
#include "manifests/eval_chain.h"
#include "formats/val_data.h"
#include "manifests/score_dump.h"
#include "verifier/findings.h"

/* ---- the audit ---- */

typedef enum audit_status { AUDIT_PASS, AUDIT_FAIL, AUDIT_SKIP } audit_status;

enum { AUDIT_COVERAGE, AUDIT_BYTES, AUDIT_NORMALIZATION, AUDIT_ORDER, AUDIT_N_CONDITIONS };

typedef struct audit_outcome {
  const char *code;      /* "AUDIT_COVERAGE", ... */
  const char *condition; /* human name, e.g. "coverage and single pass (C4)" */
  audit_status status;
  int64_t position;      /* first offending position, -1 if none */
  char message[768];
  /* Numbers for the report (NAN / 0 when not computed). */
  double val_bpb, nll_sum;
  uint64_t bytes, targets;
} audit_outcome;

typedef struct audit_input {
  const char *dump_name;       /* for messages */
  const score_dump *dump;
  const uint16_t *tokens;      /* the validation stream t[0..n_tokens) */
  uint64_t n_tokens;           /* targets expected: positions 1 .. n_tokens-1 */
  const byte_luts *luts;
  const char *claim;           /* --claim as typed (a decimal), NULL if none */
  const eval_events *events;   /* NULL: no event log */
  const uint8_t *dump_sha256;  /* the dump file's digest, NULL if unknown */
  uint32_t seq_len;            /* T the stream was kept for; 0: not known. Coverage
                                  fails when the dump records another T */
  const char *events_missing;  /* events NULL although the dump records a chain
                                  head: what is missing and how to supply it (C3
                                  then fails with it); NULL otherwise */
} audit_input;

/* Each condition fills its own outcome, independently of the others. */
void audit_coverage(const audit_input *in, audit_outcome *out);
void audit_bytes(const audit_input *in, audit_outcome *out);
void audit_normalization(const audit_input *in, audit_outcome *out);
void audit_order(const audit_input *in, audit_outcome *out);

/* All four, in the enum's order; returns how many failed. */
int audit_run(const audit_input *in, audit_outcome out[AUDIT_N_CONDITIONS]);
const char *audit_status_name(audit_status s);

/* A claim as typed: digits, optionally '.' and up to 17 decimals. -1 if
 * it is anything else (exponents, signs, spaces). */
int audit_parse_claim(const char *s, double *value, int *decimals);

/* Tolerances (documented in SUBMISSION.md). */
#define AUDIT_SUM_TOLERANCE 1e-6   /* |sum of a probe - 1| */
#define AUDIT_NLL_TOLERANCE 1e-4   /* |nll + ln p[target]|, nats (relative 1e-4 on p) */

/* Helpers the conditions share (audit.c). */
void audit_outcome_init(audit_outcome *o, int which);

/* 1 if in->events is the dump's own log: its chain head is the one the
 * dump records (version 2 dumps with a head) and the dump digest it names
 * is this dump's (when the log names one and the digest is known). Else 0
 * and why (a sentence) in why[0..cap) (why may be NULL with cap 0). A log
 * that is not the dump's is not used: coverage ignores its events, C3
 * fails with why, and it lends the audit no default claim. */
int audit_events_match(const audit_input *in, char *why, size_t cap);

/* The records ordered by (position, record index): the identity when the
 * dump's positions are strictly increasing (idx NULL, nothing allocated),
 * else a sorted copy of the indices. */
typedef struct audit_index {
  const score_dump *dump;
  uint64_t *idx;
  uint64_t n;
  int sorted; /* positions strictly increasing in record order */
} audit_index;

int audit_index_build(const score_dump *d, audit_index *ix); /* -1: out of memory */
void audit_index_free(audit_index *ix);
/* The k-th record in position order. */
score_record audit_index_record(const audit_index *ix, uint64_t k, uint64_t *record_no);
/* The first k whose position is >= position (ix->n if none). */
uint64_t audit_index_lower(const audit_index *ix, uint64_t position);

/* ---- the event log's place (audit_log.c) ---- */

typedef struct audit_log {
  eval_events events;
  int found;          /* events holds the log read from path */
  char *path;         /* --manifest, or the default path looked at (malloc'd) */
  int is_default;     /* path is the default beside the dump */
  char missing[600];  /* not found although the dump records a chain head:
                         what is missing and how to supply it; "" otherwise */
} audit_log;

/* Read the event log for the dump at dump_path: manifest when not NULL,
 * else DUMP.events.json when that file exists. A default log that is
 * absent is not an error (found 0; missing says so when the dump records
 * a chain head); a log that exists but cannot be read is (-1, err names
 * the file). Whether the log is the dump's own is audit_events_match's
 * question, asked by the conditions. */
int audit_log_load(const char *dump_path, const score_dump *d, const char *manifest,
                   audit_log *lg, pg_error *err);
void audit_log_free(audit_log *lg);

/* ---- `pgolf audit --perturb` ----
 * Implemented in verifier/audit_perturb.c (owned by the evaluator work):
 * cmd_audit hands it the whole command line (argv[0] is "audit") when
 * "--perturb" appears before any "--"; it returns the exit code. */
int audit_perturb_main(int argc, char **argv);

/* ---- the audit from files (audit_file.c) ---- */

/* What to audit: `pgolf audit`'s options. val: shard files, or folders
 * of fineweb_val_*.bin, forming one stream in the order given; claim,
 * manifest: NULL for the defaults (the dump's own event log and the
 * val_bpb it reports); seq_len 0: the T the dump records. */
typedef struct audit_request {
  const char *dump, *tokenizer, *claim, *manifest;
  const char *const *val;
  size_t n_val;
  uint32_t seq_len;
} audit_request;

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

/* Load the dump, the byte tables, the split and the event log. -1 (err
 * names the file) for input the audit cannot read: a malformed dump,
 * shard, tokenizer or log is never a finding. Free l in every case. */
int audit_load(const audit_request *rq, audit_loaded *l, pg_error *err);
void audit_loaded_free(audit_loaded *l);
/* What the audit checks the dump against, defaults filled in: the log
 * found (if any), and the claim: rq->claim, else the val_bpb the dump's
 * own log reports (a log that is not the dump's lends it nothing). */
audit_input audit_make_input(const audit_request *rq, const audit_loaded *l);
/* One finding per condition that did not pass: an error for a failure,
 * a warning for one with nothing to check ("not checked: ..."). */
void audit_to_findings(const char *dump, const audit_outcome *o, finding_list *f);

#endif
