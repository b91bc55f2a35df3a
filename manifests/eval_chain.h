/* The evaluation event log of a score-first evaluator and its hash chain:
 * what the trainer's evaluators write (trainer/eval_events.h) and the
 * auditor reads (verifier/audit_order.c). It lives beside the loss chain
 * because it is a format both sides share, like the manifest.
 *
 * The manifest (plain JSON, or a DSSE envelope around it) holds
 *
 *   "predicate": { ...,
 *     "eval": {
 *       "mode": "plain" | "sliding" | "ttt" | any string,
 *       "score_dump": {"sha256": "<64 hex>"},          (optional)
 *       "val_bpb": "3.39511423",                       (optional)
 *       "events": [
 *         {"kind": "SCORE", "chunk": 0, "first": 1, "last": 32768,
 *          "nll_sum_bits": "0x3ff0000000000000", "chain": "<64 hex>"},
 *         {"kind": "ADAPT", "chunk": 0, "first": 1, "last": 32768,
 *          "chain": "<64 hex>"},
 *         ...],
 *       "chain": "<64 hex>"                            (the head)
 *     } }
 *
 * in the order the events happened. first..last are inclusive target
 * positions, numbered as in the dump's records (target t[p] is position
 * p). A SCORE event's nll_sum_bits are the IEEE-754 bits ("0x" + 16
 * lowercase hex digits) of the float64 sum, from 0.0 in increasing
 * position order, of exactly the f64 nll values the dump holds for
 * first..last. An ADAPT event says the model was updated using the
 * tokens of positions first..last (their targets); it has no nll_sum_bits.
 * Each event's "chain" is the link after it:
 *   e_0 = SHA256("pgolf-eval-chain-v1")            (19 bytes, no NUL)
 *   e_i = SHA256(e_{i-1} || u8 kind || u64le chunk || u64le first
 *                || u64le last || u64le nll_sum_bits)
 * with kind 1 for SCORE, 2 for ADAPT and nll_sum_bits 0 for ADAPT; the
 * "chain" at the end is the last link (e_0 for no events). Evaluators
 * compute it with eval_chain_init / eval_chain_extend below.
 *
 * "val_bpb" is the value the evaluation reported, as the decimal it
 * printed (1 to 6 digits, optionally "." and up to 17 more): the claim
 * `pgolf audit` checks the dump against when it is given no --claim. It
 * is not part of the chain; the audit recomputes it from the dump, so an
 * edited value can only make that check fail, never pass a wrong dump.
 *
 * WHERE THE LOG LIVES. pgolf eval writes {"predicate": {"eval": ...}} to
 * --events FILE, by default beside the dump at DUMP + EVAL_EVENTS_SUFFIX;
 * pgolf audit reads --manifest FILE, by default that same path. The dump
 * (version 2) records the chain head, which ties the two together. */
#ifndef PGOLF_EVAL_CHAIN_H
#define PGOLF_EVAL_CHAIN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/sha256.h"

/* ---- event log ---- */

#define EVAL_CHAIN_TAG "pgolf-eval-chain-v1"
#define EVAL_MAX_EVENTS ((size_t)10000000)
#define EVAL_EVENTS_SUFFIX ".events.json"
#define EVAL_CLAIM_MAX 32 /* bytes of a val_bpb claim, with its NUL */

typedef enum eval_event_kind { EVAL_SCORE = 1, EVAL_ADAPT = 2 } eval_event_kind;

typedef struct eval_event {
  eval_event_kind kind;
  uint64_t chunk, first, last; /* first <= last, inclusive positions */
  uint64_t nll_sum_bits;       /* 0 for ADAPT */
  uint8_t chain[SHA256_LEN];   /* the link recorded after this event */
} eval_event;

typedef struct eval_events {
  eval_event *v;
  size_t n;
  uint8_t head[SHA256_LEN];
  int has_dump_sha256;
  uint8_t dump_sha256[SHA256_LEN];
  char mode[32];
  char val_bpb[EVAL_CLAIM_MAX]; /* the reported val_bpb as printed; "" if none */
} eval_events;

void eval_chain_init(uint8_t c[SHA256_LEN]);
/* c = SHA256(c || u8 kind || u64le chunk || u64le first || u64le last ||
 * u64le nll_sum_bits), in place. */
void eval_chain_extend(uint8_t c[SHA256_LEN], eval_event_kind kind, uint64_t chunk,
                       uint64_t first, uint64_t last, uint64_t nll_sum_bits);
/* The event JSON object above ({"kind",...,"chain"}), chain given. */
json_t *eval_event_json(const eval_event *e);

/* Read predicate.eval from a parsed object ("eval" object itself); errors
 * name `name` and the JSON path. Links are parsed, not verified (the
 * order check verifies them, so a broken chain is a finding, not an
 * input error). */
int eval_events_from_json(const json_t *eval, const char *name, eval_events *ev, pg_error *err);
/* A manifest or DSSE envelope held in buf[0..len) (name is used in
 * messages): its predicate.eval. */
int eval_events_parse(const uint8_t *buf, size_t len, const char *name, eval_events *ev,
                      pg_error *err);
/* The same read from a file. */
int eval_events_load(const char *path, eval_events *ev, pg_error *err);
void eval_events_free(eval_events *ev);

/* The log's default path for a dump: dump_path + EVAL_EVENTS_SUFFIX
 * (malloc'd; NULL when out of memory). */
char *eval_events_default_path(const char *dump_path);
/* 1 if s is a claim as the log holds it: 1 to 6 digits, optionally "."
 * and up to 17 digits (pgolf audit --claim's form). */
int eval_claim_is_decimal(const char *s);

#endif
