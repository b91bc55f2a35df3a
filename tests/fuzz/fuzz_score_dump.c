/* libFuzzer target: score_dump_parse on arbitrary bytes must either accept
 * the input with every invariant of a valid dump holding (a known version
 * and its header size, exact size, finite non-negative nll, targets and
 * probe vocabularies in range, T >= 1 for version 2), or reject it with a
 * message and an offset inside (or at the end of) the input. Accepted
 * dumps then go through every audit condition, against a small synthetic
 * split and with and without an event log (the dump's own head or not),
 * which must not crash whatever the records say. */
#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/audit.h"
#include "manifests/score_dump.h"

#define SPLIT 64

static void audit_it(const score_dump *d) {
  uint32_t v = d->vocab_size;
  byte_luts l = {v, calloc(v, sizeof(uint16_t)), calloc(v, sizeof(bool)), calloc(v, sizeof(bool))};
  assert(l.base_bytes && l.has_leading_space && l.is_boundary);
  for (uint32_t i = 0; i < v; i++) {
    l.base_bytes[i] = (uint16_t)(i % 4);
    l.has_leading_space[i] = i % 3 == 0;
    l.is_boundary[i] = i % 5 == 1;
  }
  uint16_t tokens[SPLIT];
  for (int i = 0; i < SPLIT; i++) tokens[i] = (uint16_t)((uint32_t)i * 7 % v);
  eval_events ev = {0};
  eval_chain_init(ev.head);
  audit_input in = {"fuzz", d, tokens, SPLIT, &l, "1.5", NULL, NULL, 8, "no log"};
  audit_outcome o[AUDIT_N_CONDITIONS];
  audit_run(&in, o);
  for (int i = 0; i < AUDIT_N_CONDITIONS; i++) assert(o[i].code && o[i].message[0]);
  in.events = &ev; /* an empty log: the dump's own only if its head is e_0 */
  in.seq_len = d->seq_len;
  audit_run(&in, o);
  for (int i = 0; i < AUDIT_N_CONDITIONS; i++) assert(o[i].code && o[i].message[0]);
  luts_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* A private copy: the harness's buffer ends exactly at size, so ASan
   * sees any read past the end. */
  uint8_t *buf = size ? malloc(size) : NULL;
  if (size) memcpy(buf, data, size);
  score_dump d;
  pg_error err;
  if (score_dump_parse(buf, size, "fuzz", &d, &err) == 0) {
    assert((d.version == 1 && d.header_bytes == SCORE_DUMP_V1_HEADER_BYTES && d.seq_len == 0 &&
            !d.has_chain) ||
           (d.version == 2 && d.header_bytes == SCORE_DUMP_HEADER_BYTES && d.seq_len >= 1));
    assert(d.flags == 0);
    assert(d.vocab_size >= 1 && d.vocab_size <= SCORE_DUMP_MAX_VOCAB);
    assert(d.header_bytes + d.n_records * SCORE_DUMP_RECORD_BYTES + d.n_probes * d.probe_bytes ==
           size);
    for (uint64_t i = 0; i < d.n_records; i++) {
      score_record r = score_dump_record(&d, i);
      assert(r.target < d.vocab_size && isfinite(r.nll) && !(r.nll < 0));
    }
    for (uint64_t j = 0; j < d.n_probes; j++) {
      score_probe p = score_dump_probe(&d, j);
      assert(p.target < d.vocab_size && p.vocab_size == d.vocab_size);
      (void)score_probe_prob(&p, p.vocab_size - 1);
    }
    if (d.vocab_size <= 65536) audit_it(&d); /* the split's ids are uint16 */
  } else {
    assert(err.msg[0] != 0);
    assert(err.pos >= -1 && err.pos <= (long long)size);
  }
  free(buf);
  return 0;
}
