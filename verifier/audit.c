/* The audit's shared parts: outcomes, the position index, and running
 * every condition. The conditions themselves are one file each. */
#include "verifier/audit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *code, *condition;
} conditions[AUDIT_N_CONDITIONS] = {
    [AUDIT_COVERAGE] = {"AUDIT_COVERAGE", "coverage and single pass (C4)"},
    [AUDIT_BYTES] = {"AUDIT_BYTES", "byte accounting"},
    [AUDIT_NORMALIZATION] = {"AUDIT_NORMALIZATION", "normalized distributions (C2)"},
    [AUDIT_ORDER] = {"AUDIT_ORDER", "score before update (C3)"},
};

void audit_outcome_init(audit_outcome *o, int which) {
  memset(o, 0, sizeof *o);
  o->code = conditions[which].code;
  o->condition = conditions[which].condition;
  o->status = AUDIT_PASS;
  o->position = -1;
  o->val_bpb = NAN;
  o->nll_sum = NAN;
}

const char *audit_status_name(audit_status s) {
  return s == AUDIT_PASS ? "pass" : s == AUDIT_FAIL ? "fail" : "skipped";
}

int audit_run(const audit_input *in, audit_outcome out[AUDIT_N_CONDITIONS]) {
  audit_coverage(in, &out[AUDIT_COVERAGE]);
  audit_bytes(in, &out[AUDIT_BYTES]);
  audit_normalization(in, &out[AUDIT_NORMALIZATION]);
  audit_order(in, &out[AUDIT_ORDER]);
  int failed = 0;
  for (int i = 0; i < AUDIT_N_CONDITIONS; i++) failed += out[i].status == AUDIT_FAIL;
  return failed;
}

int audit_events_match(const audit_input *in, char *why, size_t cap) {
  const eval_events *ev = in->events;
  const score_dump *d = in->dump;
  if (d->has_chain && memcmp(ev->head, d->chain_head, SHA256_LEN)) {
    char mine[SHA256_HEX_LEN + 1], theirs[SHA256_HEX_LEN + 1];
    sha256_hex(d->chain_head, mine);
    sha256_hex(ev->head, theirs);
    snprintf(why, cap, "the event log is not this dump's: its chain head %s differs from the "
             "head the dump records, %s (a log of another evaluation, or one whose events "
             "changed)", theirs, mine);
    return 0;
  }
  if (ev->has_dump_sha256 && in->dump_sha256 &&
      memcmp(ev->dump_sha256, in->dump_sha256, SHA256_LEN)) {
    snprintf(why, cap, "the event log is about another dump (predicate.eval.score_dump.sha256 "
             "differs from this file's digest)");
    return 0;
  }
  return 1;
}

/* ---- position index ---- */

static int by_position(const void *a, const void *b, void *dump) {
  uint64_t i = *(const uint64_t *)a, j = *(const uint64_t *)b;
  uint64_t pi = score_dump_record(dump, i).position;
  uint64_t pj = score_dump_record(dump, j).position;
  if (pi != pj) return pi < pj ? -1 : 1;
  return i < j ? -1 : i > j;
}

int audit_index_build(const score_dump *d, audit_index *ix) {
  memset(ix, 0, sizeof *ix);
  ix->dump = d;
  ix->n = d->n_records;
  ix->sorted = 1;
  for (uint64_t i = 1; i < d->n_records && ix->sorted; i++)
    ix->sorted = score_dump_record(d, i - 1).position < score_dump_record(d, i).position;
  if (ix->sorted) return 0;
  ix->idx = malloc(ix->n * sizeof *ix->idx);
  if (!ix->idx) return -1;
  for (uint64_t i = 0; i < ix->n; i++) ix->idx[i] = i;
  qsort_r(ix->idx, ix->n, sizeof *ix->idx, by_position, (void *)d); /* glibc's qsort_r */
  return 0;
}

void audit_index_free(audit_index *ix) {
  free(ix->idx);
  memset(ix, 0, sizeof *ix);
}

score_record audit_index_record(const audit_index *ix, uint64_t k, uint64_t *record_no) {
  uint64_t i = ix->idx ? ix->idx[k] : k;
  if (record_no) *record_no = i;
  return score_dump_record(ix->dump, i);
}

uint64_t audit_index_lower(const audit_index *ix, uint64_t position) {
  uint64_t lo = 0, hi = ix->n;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (audit_index_record(ix, mid, NULL).position < position) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
