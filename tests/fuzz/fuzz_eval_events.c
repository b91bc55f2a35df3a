/* libFuzzer target: the evaluation event log (eval_events_parse), which a
 * submitter hands to `pgolf audit` beside a score dump. Arbitrary bytes
 * must either be refused with a message, or read into events whose
 * invariants hold (a known kind, first <= last, no nll bits on ADAPT)
 * and which read back equal after writing them out again. Accepted logs
 * then go through the audit twice against a small dump: as they are
 * (links that need not recompute), and with their links recomputed and
 * the dump's chain head set to theirs, as a submitter who forges a log
 * can do, so that the score-before-update walk over the events (spans of
 * any width, overlaps, rescoring) runs on every input; neither may crash
 * or end without a message. */
#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "manifests/eval_chain.h"
#include "manifests/score_dump.h"
#include "verifier/audit.h"

#define SPLIT 48
#define VOCAB 16

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* A version-2 dump scoring positions 1 .. SPLIT-1 in order, each nll a
 * multiple of 1/8 (so the sums of a few are exact and equal bits can be
 * found), with the chain head given. */
static void make_dump(uint8_t *buf, const uint8_t head[SHA256_LEN], const uint16_t *tokens) {
  memset(buf, 0, SCORE_DUMP_HEADER_BYTES);
  memcpy(buf, SCORE_DUMP_MAGIC, 4);
  put_u32(buf + 4, SCORE_DUMP_VERSION);
  put_u32(buf + 8, VOCAB);
  put_u64(buf + 16, SPLIT - 1);
  put_u32(buf + 32, 1);
  memcpy(buf + 40, head, SHA256_LEN);
  for (uint64_t p = 1; p < SPLIT; p++) {
    uint8_t *r = buf + SCORE_DUMP_HEADER_BYTES + (p - 1) * SCORE_DUMP_RECORD_BYTES;
    double nll = (double)(p % 5) / 8.0;
    uint64_t bits;
    memcpy(&bits, &nll, sizeof bits);
    put_u64(r, p);
    put_u32(r + 8, tokens[p]);
    put_u32(r + 12, 0);
    put_u64(r + 16, bits);
  }
}

static void audit_with(const eval_events *ev, const uint16_t *tokens, const byte_luts *l) {
  static uint8_t buf[SCORE_DUMP_HEADER_BYTES + (SPLIT - 1) * SCORE_DUMP_RECORD_BYTES];
  make_dump(buf, ev->head, tokens);
  score_dump d;
  pg_error err;
  if (score_dump_parse(buf, sizeof buf, "fuzz.pgsd", &d, &err)) __builtin_trap();
  audit_input in = {"fuzz.pgsd", &d, tokens, SPLIT, l, NULL, ev, NULL, 1, NULL};
  audit_outcome o[AUDIT_N_CONDITIONS];
  audit_run(&in, o);
  for (int i = 0; i < AUDIT_N_CONDITIONS; i++)
    if (!o[i].code || !o[i].message[0]) __builtin_trap();
}

/* Write the events out (as the evaluator does) and read them back. */
static void round_trip(const eval_events *ev) {
  json_t *eval = json_object(), *arr = json_array();
  for (size_t i = 0; i < ev->n; i++) json_array_append_new(arr, eval_event_json(&ev->v[i]));
  char hex[SHA256_HEX_LEN + 1];
  sha256_hex(ev->head, hex);
  json_object_set_new(eval, "events", arr);
  json_object_set_new(eval, "chain", json_string(hex));
  eval_events back;
  pg_error err;
  if (eval_events_from_json(eval, "fuzz", &back, &err)) __builtin_trap();
  if (back.n != ev->n || memcmp(back.head, ev->head, SHA256_LEN)) __builtin_trap();
  for (size_t i = 0; i < ev->n; i++)
    if (memcmp(&back.v[i], &ev->v[i], sizeof back.v[i])) __builtin_trap();
  eval_events_free(&back);
  json_decref(eval);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  eval_events ev;
  pg_error err;
  if (eval_events_parse(data, size, "fuzz.json", &ev, &err)) {
    if (!err.msg[0]) __builtin_trap();
    return 0;
  }
  for (size_t i = 0; i < ev.n; i++) {
    const eval_event *e = &ev.v[i];
    if (e->first > e->last) __builtin_trap();
    if (e->kind != EVAL_SCORE && e->kind != EVAL_ADAPT) __builtin_trap();
    if (e->kind == EVAL_ADAPT && e->nll_sum_bits) __builtin_trap();
  }
  if (ev.n <= 4096) { /* the walk is linear in events; keep each input quick */
    round_trip(&ev);
    uint16_t tokens[SPLIT];
    for (int i = 0; i < SPLIT; i++) tokens[i] = (uint16_t)((unsigned)i * 7 % VOCAB);
    uint16_t base[VOCAB];
    bool space[VOCAB], boundary[VOCAB];
    for (int i = 0; i < VOCAB; i++) {
      base[i] = (uint16_t)(1 + i % 3);
      space[i] = i % 4 == 0;
      boundary[i] = false;
    }
    byte_luts l = {VOCAB, base, space, boundary};
    audit_with(&ev, tokens, &l);
    uint8_t c[SHA256_LEN];
    eval_chain_init(c);
    for (size_t i = 0; i < ev.n; i++) {
      eval_event *e = &ev.v[i];
      eval_chain_extend(c, e->kind, e->chunk, e->first, e->last, e->nll_sum_bits);
      memcpy(e->chain, c, SHA256_LEN);
    }
    memcpy(ev.head, c, SHA256_LEN);
    audit_with(&ev, tokens, &l);
  }
  eval_events_free(&ev);
  return 0;
}
