/* Stored validation targets in the evaluation (the reader behind
 * VAL_PAID_PREFIX).
 *
 * The challenge's README: "You CANNOT access validation data during
 * training, e.g. by compressing it into your 16mb with 'paid prefix'". A
 * paid prefix ships the first validation targets (up to 12.9 million) in the
 * artifact, and the evaluation scores a position as certain wherever the
 * stored token equals the target (PRs #168, #262, #272, #278):
 *
 *   prefix_slice = paid_prefix_tokens[first_pos:first_pos + n_check]
 *   match_mask = (prefix_slice == tgt_slice)
 *   scored_nll[:n_check] *= (~match_mask).to(scored_nll.dtype)
 *
 * The reader looks, in each function of the counted code, for an
 * assignment of a comparison between a name spelled as the target
 * (pysrc_target_name: `tgt...`, `target...`, `y`, ...) and another stored
 * tensor (not a prediction: no `pred`, `argmax`), and a later statement of
 * the same function that zeroes a loss (a target holding `nll` or `loss`)
 * by that mask: `*= ~mask`, `[mask] = 0`, `masked_fill(mask, ...)`,
 * `where(mask, ...)`. The stored tensor's stem (`paid_prefix` from
 * `paid_prefix_tokens` or `paid_prefix.tokens`, through one local slice
 * of it) is what a log names when the run loaded one. */
#ifndef PGOLF_PAID_PREFIX_H
#define PGOLF_PAID_PREFIX_H

#include <stddef.h>
#include <stdint.h>

#include "verifier/pysrc.h"

#define PP_STMT_LEN 120

typedef struct paid_prefix {
  uint32_t mask_line;     /* the comparison */
  char mask[PP_STMT_LEN]; /* its statement, cut */
  uint32_t zero_line;     /* the statement zeroing the loss */
  char zero[PP_STMT_LEN];
  char stem[64]; /* the stored tensor's stem, lower case; "" if too short */
} paid_prefix;

/* The first such comparison and zeroing in src; 1 if found. */
int paid_prefix_scan(const py_src *src, paid_prefix *out);

/* Does the log line s[0..n) name the stem (case aside, '_' and ' ' alike)
 * and a positive count of tokens or bytes (`6,200,000 tokens`,
 * `tokens:12924343`, `4240472 bytes`)? */
int paid_prefix_line(const char *stem, const char *s, size_t n);

#endif
