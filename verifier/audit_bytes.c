/* Byte accounting: val_bpb recomputed from the dump alone and compared
 * with the claimed value to the digits the claim gives.
 *
 *   nats  = sum of the records' nll, float64, in record order
 *   bytes = the official byte count of the split's targets 1..n-1
 *           (formats/byte_accounting.h: base bytes, plus the folded
 *           leading space unless the previous token is a boundary)
 *   val_bpb = nats / ln 2 / bytes
 *
 * A claim "1.2244" passes iff |val_bpb - 1.2244| <= 0.5e-4: the claim is
 * the recomputed value rounded to its own number of decimals (either way
 * at an exact tie). Bytes come from the split, not from the records, so a
 * dump with a gap or a duplicate still gets the official denominator;
 * coverage reports the gap itself. */
#include "verifier/audit.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/byte_accounting.h"

int audit_parse_claim(const char *s, double *value, int *decimals) {
  const char *p = s;
  int before = 0, after = 0;
  while (*p >= '0' && *p <= '9') p++, before++;
  if (*p == '.') {
    p++;
    while (*p >= '0' && *p <= '9') p++, after++;
  }
  if (*p || before == 0 || before > 6 || after > 17) return -1;
  *value = strtod(s, NULL);
  *decimals = after;
  return 0;
}

void audit_bytes(const audit_input *in, audit_outcome *out) {
  audit_outcome_init(out, AUDIT_BYTES);
  double nats = 0.0;
  for (uint64_t i = 0; i < in->dump->n_records; i++) nats += score_dump_record(in->dump, i).nll;
  uint64_t bytes;
  pg_error err;
  if (stream_total_bytes(in->luts, in->tokens, in->n_tokens, &bytes, "validation split", &err)) {
    out->status = AUDIT_FAIL;
    pg_error_format(&err, out->message, sizeof out->message);
    return;
  }
  out->nll_sum = nats;
  out->bytes = bytes;
  out->targets = in->n_tokens - 1;
  out->val_bpb = bpb_from_nats(nats, bytes);
  if (!in->claim) {
    out->status = AUDIT_SKIP;
    snprintf(out->message, sizeof out->message, "val_bpb %.8f (%.6f nats over %" PRIu64
             " bytes); no --claim to compare", out->val_bpb, nats, bytes);
    return;
  }
  double claim;
  int decimals;
  if (audit_parse_claim(in->claim, &claim, &decimals)) {
    out->status = AUDIT_FAIL;
    snprintf(out->message, sizeof out->message, "claim '%s' is not a plain decimal", in->claim);
    return;
  }
  double half_ulp = 0.5 * pow(10.0, -decimals);
  double diff = fabs(out->val_bpb - claim);
  /* 1e-12 absorbs the decimal claim's own binary rounding. */
  int ok = diff <= half_ulp * (1 + 1e-9) + 1e-12;
  out->status = ok ? AUDIT_PASS : AUDIT_FAIL;
  snprintf(out->message, sizeof out->message, "recomputed val_bpb %.*f (%.8f: %.6f nats over %"
           PRIu64 " bytes) %s the claim %s", decimals, out->val_bpb, out->val_bpb, nats, bytes,
           ok ? "matches" : "does not match", in->claim);
}
