/* C3, score before update, from the evaluator's event log (audit.h):
 *   - the log is intact: every event's chain link recomputes, and the
 *     head is the last link (an edited, dropped or reordered event breaks
 *     it), and, when the log names the dump's digest, it is this dump;
 *   - no ADAPT event covers a position that no earlier SCORE event has
 *     scored: the model only learns from tokens already scored;
 *   - each SCORE event's nll sum equals the sum of the dump's nll over its
 *     positions, bit for bit: the dump holds the scores as they were fixed
 *     at scoring time, not later ones (a rescoring after an update would
 *     change them). Events that rescore positions are coverage's finding
 *     and are not summed here.
 * The log must be the dump's own first (audit_events_match: the chain
 * head the dump records, the digest the log names). No log: skipped, as
 * `pgolf audit --perturb` tests C3 from outside for any evaluator; but
 * failed when the dump records a chain head, since then the evaluator
 * kept a log that the audit was not given (in->events_missing says which
 * and how to supply it). */
#include "verifier/audit.h"
#include "common/grow.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Disjoint, non-adjacent intervals of scored positions, sorted. */
typedef struct span {
  uint64_t first, last;
} span;

typedef struct span_set {
  span *v;
  size_t n, cap;
} span_set;

/* Index of the last span with first <= p, or -1. */
static long find_span(const span_set *s, uint64_t p) {
  size_t lo = 0, hi = s->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->v[mid].first <= p) lo = mid + 1;
    else hi = mid;
  }
  return (long)lo - 1;
}

/* The first position of [a, b] not in the set, or b + 1 if all are. */
static uint64_t first_unscored(const span_set *s, uint64_t a, uint64_t b) {
  long k = find_span(s, a);
  if (k < 0 || s->v[k].last < a) return a;
  return s->v[k].last >= b ? b + 1 : s->v[k].last + 1;
}

/* 1 if any position of [a, b] is in the set. */
static int overlaps(const span_set *s, uint64_t a, uint64_t b) {
  long k = find_span(s, b);
  return k >= 0 && s->v[k].last >= a;
}

static int add_span(span_set *s, uint64_t a, uint64_t b) {
  /* spans that touch or overlap [a, b] are merged into it */
  long lo = find_span(s, a);
  if (lo < 0 || s->v[lo].last + 1 < a) lo++;
  long hi = find_span(s, b + 1);
  if (lo <= hi) {
    if (s->v[lo].first < a) a = s->v[lo].first;
    if (s->v[hi].last > b) b = s->v[hi].last;
    memmove(s->v + lo + 1, s->v + hi + 1, (s->n - (size_t)hi - 1) * sizeof *s->v);
    s->n -= (size_t)(hi - lo);
    s->v[lo] = (span){a, b};
    return 0;
  }
  if (PG_GROW(s->v, s->cap, s->n + 1, 64)) return -1;
  memmove(s->v + lo + 1, s->v + lo, (s->n - (size_t)lo) * sizeof *s->v);
  s->v[lo] = (span){a, b};
  s->n++;
  return 0;
}

/* Float64 sum of the dump's nll over positions [a, b], in position order. */
static uint64_t dump_sum_bits(const audit_index *ix, uint64_t a, uint64_t b) {
  double sum = 0.0;
  for (uint64_t k = audit_index_lower(ix, a); k < ix->n; k++) {
    score_record r = audit_index_record(ix, k, NULL);
    if (r.position > b) break;
    sum += r.nll;
  }
  uint64_t bits;
  memcpy(&bits, &sum, sizeof bits);
  return bits;
}

static double bits_double(uint64_t b) {
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

/* The first event whose link does not recompute, or ev->n if none and the
 * head agrees, or ev->n + 1 if only the head is wrong. */
static size_t first_broken_link(const eval_events *ev) {
  uint8_t c[SHA256_LEN];
  eval_chain_init(c);
  for (size_t i = 0; i < ev->n; i++) {
    const eval_event *e = &ev->v[i];
    eval_chain_extend(c, e->kind, e->chunk, e->first, e->last, e->nll_sum_bits);
    if (memcmp(c, e->chain, SHA256_LEN)) return i;
  }
  return memcmp(c, ev->head, SHA256_LEN) ? ev->n + 1 : ev->n;
}

static void fail(audit_outcome *out, int64_t position, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void fail(audit_outcome *out, int64_t position, const char *fmt, ...) {
  if (out->status == AUDIT_FAIL) return; /* the first failure is the finding */
  out->status = AUDIT_FAIL;
  out->position = position;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out->message, sizeof out->message, fmt, ap);
  va_end(ap);
}

static void check_events(const audit_input *in, const audit_index *ix, audit_outcome *out) {
  const eval_events *ev = in->events;
  span_set scored = {0};
  for (size_t i = 0; i < ev->n && out->status != AUDIT_FAIL; i++) {
    const eval_event *e = &ev->v[i];
    if (e->kind == EVAL_ADAPT) {
      uint64_t p = first_unscored(&scored, e->first, e->last);
      if (p <= e->last)
        fail(out, (int64_t)p, "event %zu (ADAPT, chunk %" PRIu64 ", positions %" PRIu64 "..%"
             PRIu64 ") updates on position %" PRIu64 " before any SCORE event scored it", i,
             e->chunk, e->first, e->last, p);
      continue;
    }
    if (!overlaps(&scored, e->first, e->last)) {
      uint64_t got = dump_sum_bits(ix, e->first, e->last);
      if (got != e->nll_sum_bits)
        fail(out, (int64_t)e->first, "event %zu (SCORE, chunk %" PRIu64 ", positions %" PRIu64
             "..%" PRIu64 ") recorded an nll sum of %.17g; the dump's records sum to %.17g: the "
             "dump does not hold the scores fixed at scoring time", i, e->chunk, e->first,
             e->last, bits_double(e->nll_sum_bits), bits_double(got));
    }
    if (add_span(&scored, e->first, e->last)) fail(out, -1, "out of memory");
  }
  free(scored.v);
}

void audit_order(const audit_input *in, audit_outcome *out) {
  audit_outcome_init(out, AUDIT_ORDER);
  const eval_events *ev = in->events;
  if (!ev && in->events_missing) {
    fail(out, -1, "%s", in->events_missing);
    return;
  }
  if (!ev) {
    out->status = AUDIT_SKIP;
    snprintf(out->message, sizeof out->message, "no event log (--manifest); test C3 with "
             "`pgolf audit --perturb`");
    return;
  }
  char why[sizeof out->message];
  if (!audit_events_match(in, why, sizeof why)) {
    fail(out, -1, "%s", why);
    return;
  }
  size_t broken = first_broken_link(ev);
  if (broken < ev->n) {
    fail(out, (int64_t)ev->v[broken].first, "event %zu: its chain link does not recompute (the "
         "log was edited, reordered or truncated)", broken);
    return;
  }
  if (broken == ev->n + 1) {
    fail(out, -1, "the chain head is not the last event's link (events missing at the end?)");
    return;
  }
  audit_index ix;
  if (audit_index_build(in->dump, &ix)) {
    fail(out, -1, "out of memory indexing the records");
    return;
  }
  check_events(in, &ix, out);
  audit_index_free(&ix);
  if (out->status != AUDIT_FAIL) {
    size_t adapts = 0;
    for (size_t i = 0; i < ev->n; i++) adapts += ev->v[i].kind == EVAL_ADAPT;
    snprintf(out->message, sizeof out->message, "%zu events (%zu ADAPT), chain intact: every "
             "update uses positions already scored, every score is the dump's", ev->n, adapts);
  }
}
