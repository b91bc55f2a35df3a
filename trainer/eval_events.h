/* The evaluator's side of the event log: appending SCORE and ADAPT events
 * to the hash chain and writing the log where the audit reads it.
 *
 * The shape, the chain (e_0 = SHA256("pgolf-eval-chain-v1"), e_i =
 * SHA256(e_{i-1} || u8 kind || u64le chunk || u64le first || u64le last
 * || u64le nll_sum_bits)) and the JSON of one event are defined once, in
 * verifier/audit.h; this file only builds a log with them, so the writer
 * and the checker cannot drift apart. */
#ifndef PGOLF_EVAL_EVENTS_H
#define PGOLF_EVAL_EVENTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "manifests/eval_chain.h"

/* An empty log for mode (ev->head = e_0). Free with eval_events_free. */
void eval_events_begin(eval_events *ev, const char *mode);

/* Append one event, extending the chain; *cap is the capacity of ev->v
 * (0 for a fresh log). Fails beyond EVAL_MAX_EVENTS or out of memory. */
int eval_events_append(eval_events *ev, size_t *cap, eval_event_kind kind, uint64_t chunk,
                       uint64_t first, uint64_t last, uint64_t nll_sum_bits, pg_error *err);

/* predicate.eval: {"mode", ["score_dump": {"sha256"}], ["val_bpb"],
 * "events": [...], "chain"}. NULL when out of memory. */
json_t *eval_events_json(const eval_events *ev);

/* Write {"predicate": {"eval": ...}} atomically to path: the smallest
 * manifest-shaped document `pgolf audit --manifest` reads. */
int eval_events_write(const char *path, const eval_events *ev, pg_error *err);

#endif
