/* Is a submission better than the record it follows? Three readings of one
 * one-sided Welch test (verifier/welch.h), side by side:
 *
 *   readme    the README's rule: "beat the existing SOTA by at least 0.005
 *             nats ... show at `p < 0.01`" (CHALLENGE_MARGIN_NATS,
 *             CHALLENGE_ALPHA), the margin converted to the metric's unit;
 *   practice  what the maintainers applied when ordering the leaderboard:
 *             a progression cutoff of p < 0.25 on diff > 0, no margin
 *             (CHALLENGE_PRACTICE_ALPHA; PRs #1899/#1902);
 *   grace     the weakest p accepted for a top row outside the README's
 *             rule, p = 0.014 under the maintainers' grace policy
 *             (CHALLENGE_GRACE_P; PR #2146): is p (diff > 0) at or below it?
 *
 * The README's rule is the one a verdict rests on; the others say how the
 * maintainers have read it. */
#ifndef PGOLF_SIGNIFICANCE_H
#define PGOLF_SIGNIFICANCE_H

#include <jansson.h>
#include <stdio.h>

#include "common/error.h"
#include "verifier/welch.h"

typedef struct significance {
  int have_readme;     /* the margin could be converted (tokens per byte known, or nats) */
  margin_test readme;  /* margin, CHALLENGE_ALPHA */
  margin_test practice; /* margin 0, CHALLENGE_PRACTICE_ALPHA */
  double readme_margin; /* in the metric's unit */
  int readme_pass, practice_pass, grace_pass;
} significance;

/* rec_is_target: compare with a fixed value (rec.mean) by the one-sample
 * test. margin_metric: the README's margin in the metric's unit, or NAN
 * when it cannot be converted. */
int significance_compute(sample_summary new_runs, sample_summary rec, int rec_is_target,
                         double margin_metric, significance *out, pg_error *err);

/* "  README rule ...\n  practice ...\n  grace ...\n" for people. */
void significance_print(FILE *out, const significance *s, const char *unit, const char *indent);
/* {"readme":{...},"practice":{...},"grace":{...}}. */
json_t *significance_json(const significance *s);

#endif
