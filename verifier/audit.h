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
#include "manifests/score_dump.h"

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
  const eval_events *events;   /* NULL: no manifest */
  const uint8_t *dump_sha256;  /* the dump file's digest, NULL if unknown */
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

/* ---- `pgolf audit --perturb` ----
 * Implemented in verifier/audit_perturb.c (owned by the evaluator work):
 * cmd_audit hands it the whole command line (argv[0] is "audit") when
 * "--perturb" appears before any "--"; it returns the exit code. */
int audit_perturb_main(int argc, char **argv);

#endif
