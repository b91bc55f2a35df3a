/* C2, one normalized distribution fixed before the token is seen, checked
 * on the dump's probes. For each probe:
 *   - every probability is finite and >= 0;
 *   - their float64 sum, taken in id order, is within
 *       AUDIT_SUM_TOLERANCE + V * DBL_EPSILON
 *     of 1 (1e-6, widened by the worst rounding of a V-term float64 sum);
 *   - the position has a record with the same target, and the record's
 *     nll is -ln p[target] within AUDIT_NLL_TOLERANCE nats (1e-4: a
 *     relative 1e-4 on the probability, loose enough for float32 or
 *     bfloat16-logit evaluations computing the two in different kernels,
 *     tight enough to catch a score taken from another distribution).
 * No probes: skipped (nothing to check). */
#include "verifier/audit.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* Why probe j fails, into why; 0 if it passes. */
static int check_probe(const audit_input *in, const audit_index *ix, uint64_t j, char *why,
                       size_t cap) {
  score_probe p = score_dump_probe(in->dump, j);
  double sum = 0.0;
  for (uint32_t id = 0; id < p.vocab_size; id++) {
    double q = score_probe_prob(&p, id);
    if (!isfinite(q) || q < 0) {
      snprintf(why, cap, "probability of id %" PRIu32 " is %g", id, q);
      return -1;
    }
    sum += q;
  }
  double tol = AUDIT_SUM_TOLERANCE + p.vocab_size * DBL_EPSILON;
  if (!(fabs(sum - 1.0) <= tol)) {
    snprintf(why, cap, "probabilities sum to %.17g, not 1 (tolerance %.3g)", sum, tol);
    return -1;
  }
  uint64_t k = audit_index_lower(ix, p.position);
  score_record r = k < ix->n ? audit_index_record(ix, k, NULL) : (score_record){0};
  if (k == ix->n || r.position != p.position) {
    snprintf(why, cap, "no record scores this position");
    return -1;
  }
  if (r.target != p.target) {
    snprintf(why, cap, "target %" PRIu32 ", the record has %" PRIu32, p.target, r.target);
    return -1;
  }
  double q = score_probe_prob(&p, p.target);
  double diff = fabs(r.nll + log(q));
  if (!(diff <= AUDIT_NLL_TOLERANCE)) {
    snprintf(why, cap, "p[target] = %.9g gives nll %.9g, the record says %.9g", q, -log(q), r.nll);
    return -1;
  }
  return 0;
}

void audit_normalization(const audit_input *in, audit_outcome *out) {
  audit_outcome_init(out, AUDIT_NORMALIZATION);
  const score_dump *d = in->dump;
  if (d->n_probes == 0) {
    out->status = AUDIT_SKIP;
    snprintf(out->message, sizeof out->message, "the dump has no probes");
    return;
  }
  audit_index ix;
  if (audit_index_build(d, &ix)) {
    out->status = AUDIT_FAIL;
    snprintf(out->message, sizeof out->message, "out of memory indexing the records");
    return;
  }
  uint64_t bad = 0, first = 0;
  char why[300], first_why[300] = "";
  for (uint64_t j = 0; j < d->n_probes; j++) {
    if (!check_probe(in, &ix, j, why, sizeof why)) continue;
    if (!bad++) {
      first = j;
      snprintf(first_why, sizeof first_why, "%s", why);
    }
  }
  audit_index_free(&ix);
  if (bad) {
    score_probe p = score_dump_probe(d, first);
    out->status = AUDIT_FAIL;
    out->position = (int64_t)p.position;
    snprintf(out->message, sizeof out->message, "%" PRIu64 " of %" PRIu64 " probes fail; first: "
             "probe %" PRIu64 " at position %" PRIu64 ": %s", bad, d->n_probes, first, p.position,
             first_why);
  } else {
    snprintf(out->message, sizeof out->message, "%" PRIu64 " probes: each sums to 1 and agrees "
             "with its record's nll", d->n_probes);
  }
}
