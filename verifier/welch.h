/* One-sided tests that new runs beat a reference by a margin, for metrics
 * where lower is better (val_bpb, val_loss):
 *   H0: diff <= margin  against  H1: diff > margin,  diff = reference - new.
 * welch_margin_test compares two samples (Welch: unequal variances,
 * Welch-Satterthwaite df); one_sample_margin_test compares one sample
 * against a fixed target value (df = n - 1). */
#ifndef PGOLF_WELCH_H
#define PGOLF_WELCH_H

#include <stddef.h>

#include "common/error.h"

typedef struct sample_summary {
  size_t n;
  double mean;
  double sd; /* sample standard deviation (divisor n - 1) */
} sample_summary;

typedef struct margin_test {
  double diff;          /* reference mean - new mean */
  double margin;        /* in the metric's unit */
  double se;            /* standard error of diff */
  double t;             /* (diff - margin) / se */
  double df;
  double p_margin;      /* P(T_df > t) */
  double p_zero_margin; /* the same with margin 0 */
  double lower_bound;   /* one-sided 1 - alpha confidence bound on diff */
  double power;         /* at the observed diff and sds, see welch.c */
  long seeds_needed;    /* per side for 80% power; -1 when diff <= margin */
  int significant;      /* p_margin < alpha */
} margin_test;

/* Mean and sample sd, two-pass. name labels errors; needs n >= 2 and
 * finite values. */
int summarize_sample(const double *v, size_t n, const char *name, sample_summary *out,
                     pg_error *err);

/* Errors (returned as pg_error, -1): alpha outside (0, 1), margin not
 * finite, n < 2, both sds zero (one-sample: the sd zero). */
int welch_margin_test(sample_summary new_runs, sample_summary record, double margin,
                      double alpha, margin_test *out, pg_error *err);
int one_sample_margin_test(sample_summary new_runs, double target, double margin, double alpha,
                           margin_test *out, pg_error *err);

/* Seeds per side for WELCH_TARGET_POWER at a true effect (diff - margin)
 * with sds sd_new and sd_record (sd_record < 0: one sample against a fixed
 * target): the seeds_needed of the tests above, for planning a comparison
 * that has no test yet (a side with one seed). -1 when effect <= 0. */
long welch_seeds_needed(double effect, double sd_new, double sd_record, double alpha);

/* The target power of seeds_needed. */
#define WELCH_TARGET_POWER 0.8

#endif
