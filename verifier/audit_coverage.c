/* C4, a single left-to-right pass: the dump scores every target position
 * 1 .. n-1 of the split exactly once, in increasing order, each with the
 * split's own token as its target. With an event log, its SCORE events
 * also cover every position exactly once (a second SCORE of a position is
 * a rescoring even when the dump keeps one record of it).
 *
 * The split is the stream kept for sequence length T (formats/val_data.h).
 * A version 2 dump records the T it was evaluated with; when the split was
 * kept for another one (an explicit --seq-len), the dump covers another
 * split, and the finding says so first rather than only listing the
 * positions that differ. An event log that is not the dump's own
 * (audit_events_match) is not used here; C3 reports it.
 *
 * One finding; its message names the first offence of each kind found
 * and its position is the first offending position in record order (a
 * gap, which has no record, only when there is no other offence). */
#include "verifier/audit.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct offence {
  int found;
  uint64_t record, position;
  char detail[160];
} offence;

enum { OUT_OF_RANGE, DUPLICATE, REORDER, TARGET, N_KINDS };

static const char *kind_names[N_KINDS] = {"outside the split", "scored twice", "out of order",
                                          "wrong target"};

static int bit_test(const uint8_t *b, uint64_t i) { return b[i >> 3] >> (i & 7) & 1; }
static void bit_set(uint8_t *b, uint64_t i) { b[i >> 3] |= (uint8_t)(1u << (i & 7)); }

static void note(offence *o, uint64_t record, uint64_t position, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void note(offence *o, uint64_t record, uint64_t position, const char *fmt, ...) {
  if (o->found++) return;
  o->record = record;
  o->position = position;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o->detail, sizeof o->detail, fmt, ap);
  va_end(ap);
}

/* First position in [1, n) whose bit is clear, n if none. */
static uint64_t first_clear(const uint8_t *seen, uint64_t n) {
  for (uint64_t p = 1; p < n; p++)
    if (!bit_test(seen, p)) return p;
  return n;
}

static uint64_t count_clear(const uint8_t *seen, uint64_t n) {
  uint64_t c = 0;
  for (uint64_t p = 1; p < n; p++) c += !bit_test(seen, p);
  return c;
}

static void scan_records(const audit_input *in, uint8_t *seen, offence o[N_KINDS]) {
  uint64_t n = in->n_tokens, prev = 0;
  for (uint64_t i = 0; i < in->dump->n_records; i++) {
    score_record r = score_dump_record(in->dump, i);
    uint64_t p = r.position;
    if (p == 0 || p >= n) {
      note(&o[OUT_OF_RANGE], i, p, "record %" PRIu64 " scores position %" PRIu64
           " (targets are 1..%" PRIu64 ")", i, p, n - 1);
      continue;
    }
    if (bit_test(seen, p))
      note(&o[DUPLICATE], i, p, "position %" PRIu64 " scored again by record %" PRIu64, p, i);
    else if (p < prev)
      note(&o[REORDER], i, p, "record %" PRIu64 " scores position %" PRIu64 " after %" PRIu64, i,
           p, prev);
    bit_set(seen, p);
    if (p > prev) prev = p;
    if (r.target != in->tokens[p])
      note(&o[TARGET], i, p, "record %" PRIu64 " at position %" PRIu64 " has target %" PRIu32
           ", the split has %u", i, p, r.target, (unsigned)in->tokens[p]);
  }
}

/* SCORE events must tile 1..n-1 too (only when the log has any). Returns
 * the first position scored twice or not at all by events, 0 if none. */
static uint64_t scan_events(const audit_input *in, uint8_t *scored, char *why, size_t cap) {
  const eval_events *ev = in->events;
  uint64_t n = in->n_tokens;
  int any = 0;
  for (size_t i = 0; i < ev->n; i++) {
    const eval_event *e = &ev->v[i];
    if (e->kind != EVAL_SCORE) continue;
    any = 1;
    if (e->first == 0 || e->last >= n) {
      snprintf(why, cap, "event %zu (SCORE, chunk %" PRIu64 ") covers %" PRIu64 "..%" PRIu64
               ", outside the targets 1..%" PRIu64, i, e->chunk, e->first, e->last, n - 1);
      return e->first == 0 ? 1 : e->last;
    }
    for (uint64_t p = e->first; p <= e->last; p++) {
      if (bit_test(scored, p)) {
        snprintf(why, cap, "event %zu (SCORE, chunk %" PRIu64 ") scores position %" PRIu64
                 " again", i, e->chunk, p);
        return p;
      }
      bit_set(scored, p);
    }
  }
  uint64_t gap = any ? first_clear(scored, n) : n;
  if (gap < n) {
    snprintf(why, cap, "no SCORE event covers position %" PRIu64, gap);
    return gap;
  }
  return 0;
}

void audit_coverage(const audit_input *in, audit_outcome *out) {
  audit_outcome_init(out, AUDIT_COVERAGE);
  uint64_t n = in->n_tokens;
  out->targets = n ? n - 1 : 0;
  uint8_t *seen = calloc(n / 8 + 1, 1);
  uint8_t *scored = calloc(n / 8 + 1, 1);
  if (!seen || !scored) {
    out->status = AUDIT_FAIL;
    snprintf(out->message, sizeof out->message, "out of memory for %" PRIu64 " positions", n);
    goto done;
  }
  offence o[N_KINDS] = {0};
  scan_records(in, seen, o);
  uint64_t gaps = count_clear(seen, n), gap = first_clear(seen, n);
  char ev_why[200] = "", mismatch[sizeof out->message];
  int use_events = in->events && audit_events_match(in, mismatch, sizeof mismatch);
  uint64_t ev_pos = use_events ? scan_events(in, scored, ev_why, sizeof ev_why) : 0;

  size_t len = 0;
  int other_t = in->seq_len && in->dump->seq_len && in->seq_len != in->dump->seq_len;
  if (other_t)
    len = (size_t)snprintf(out->message, sizeof out->message, "the dump was evaluated with "
                           "sequence length %" PRIu32 " but the split was kept for %" PRIu32
                           " (--seq-len): they are different splits (omit --seq-len to use the "
                           "dump's); ", in->dump->seq_len, in->seq_len);
  uint64_t first_record = UINT64_MAX;
  for (int k = 0; k < N_KINDS; k++) {
    if (!o[k].found) continue;
    len += (size_t)snprintf(out->message + len, sizeof out->message - len, "%d %s (first: %s); ",
                            o[k].found, kind_names[k], o[k].detail);
    if (len >= sizeof out->message) len = sizeof out->message - 1;
    if (o[k].record < first_record) {
      first_record = o[k].record;
      out->position = (int64_t)o[k].position;
    }
  }
  if (gaps) {
    len += (size_t)snprintf(out->message + len, sizeof out->message - len,
                            "%" PRIu64 " positions never scored (first: %" PRIu64 "); ", gaps, gap);
    if (len >= sizeof out->message) len = sizeof out->message - 1;
    if (out->position < 0) out->position = (int64_t)gap;
  }
  if (ev_pos) {
    snprintf(out->message + len, sizeof out->message - len, "event log: %s; ", ev_why);
    if (out->position < 0) out->position = (int64_t)ev_pos;
  }
  if (out->position >= 0 || other_t) {
    out->status = AUDIT_FAIL;
    size_t m = strlen(out->message);
    if (m >= 2) out->message[m - 2] = '\0'; /* drop the last "; " */
  } else {
    snprintf(out->message, sizeof out->message, "%" PRIu64 " records score positions 1..%" PRIu64
             " once each, in order, with the split's targets", in->dump->n_records,
             n ? n - 1 : 0);
  }
done:
  free(seen);
  free(scored);
}
