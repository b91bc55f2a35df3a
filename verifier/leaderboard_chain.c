/* The significance chain of the record track (verifier/leaderboard.h):
 * each record against the standing record it displaced, under the
 * README's rule and the maintainers' practice (verifier/significance.h),
 * computed as `pgolf stats` computes them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/challenge.h"
#include "verifier/leaderboard.h"
#include "verifier/welch.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median sd of the record track's samples of 2+ values with a spread. */
static double median_sd(const leaderboard *lb) {
  double *v = malloc((lb->n_entries + 1) * sizeof *v);
  size_t n = 0;
  if (!v) return NAN;
  for (size_t i = 0; i < lb->n_entries; i++)
    if (lb->entries[i].kind == LB_RECORD && lb->entries[i].n_values >= 2 && lb->entries[i].sd > 0)
      v[n++] = lb->entries[i].sd;
  qsort(v, n, sizeof *v, cmp_double);
  double m = !n ? NAN : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  free(v);
  return m;
}

static int placed(const lb_entry *e) {
  return e->kind == LB_RECORD && e->date[0] && isfinite(e->score) && e->n_values > 0;
}

/* The margin in bpb: 0.005 nats at the new record's own tokens per byte,
 * else the standing record's (as `pgolf stats` resolves it). */
static void margin(lb_step *st, const lb_entry *rec, const lb_entry *prev) {
  st->tpb = isfinite(rec->tpb) ? rec->tpb : prev->tpb;
  st->tpb_from = isfinite(rec->tpb) ? "new" : isfinite(prev->tpb) ? "record" : "none";
  st->margin_bpb = isfinite(st->tpb) ? CHALLENGE_MARGIN_NATS * st->tpb / M_LN2 : NAN;
}

/* A side with one value (or no spread on either side): no test, but the
 * seeds per side 80% power would need at the observed spread. */
static void untestable(lb_step *st, const lb_entry *rec, const lb_entry *prev, double track_sd) {
  const char *one = rec->n_values < 2 && prev->n_values < 2 ? "both records have"
                    : rec->n_values < 2                     ? "this record has"
                                                            : "the standing record has";
  if (rec->n_values < 2 || prev->n_values < 2)
    snprintf(st->why, sizeof st->why, "%s one seed", one);
  else
    snprintf(st->why, sizeof st->why, "no spread: every seed of both records has the same value");
  if (rec->n_values >= 2 && rec->sd > 0) st->spread = rec->sd, st->spread_from = "new";
  else if (prev->n_values >= 2 && prev->sd > 0) st->spread = prev->sd, st->spread_from = "record";
  else st->spread = track_sd, st->spread_from = "median of the track";
  st->seeds_readme = st->seeds_practice = -1;
  if (!isfinite(st->spread)) return;
  if (isfinite(st->margin_bpb))
    st->seeds_readme = welch_seeds_needed(st->diff - st->margin_bpb, st->spread, st->spread,
                                          CHALLENGE_ALPHA);
  st->seeds_practice = welch_seeds_needed(st->diff, st->spread, st->spread, CHALLENGE_PRACTICE_ALPHA);
}

static void test_step(lb_step *st, const lb_entry *rec, const lb_entry *prev, double track_sd) {
  st->diff = prev->mean - rec->mean;
  margin(st, rec, prev);
  st->spread = NAN;
  st->spread_from = "";
  st->seeds_readme = st->seeds_practice = -1;
  sample_summary a = {rec->n_values, rec->mean, rec->sd}, b = {prev->n_values, prev->mean, prev->sd};
  pg_error err;
  if (rec->n_values >= 2 && prev->n_values >= 2 &&
      significance_compute(a, b, 0, st->margin_bpb, &st->sig, &err) == 0) {
    st->testable = 1;
    return;
  }
  untestable(st, rec, prev, track_sd);
}

int leaderboard_chain(leaderboard *lb, pg_error *err) {
  lb->median_sd = median_sd(lb);
  lb->steps = calloc(lb->n_entries + 1, sizeof *lb->steps);
  if (!lb->steps) return pg_fail(err, lb->root, -1, "out of memory");
  size_t standing = LB_NONE;
  for (size_t i = 0; i < lb->n_entries; i++) {
    const lb_entry *e = &lb->entries[i];
    if (!placed(e)) continue;
    lb_step *st = &lb->steps[lb->n_steps++];
    st->rec = i;
    st->prev = standing;
    st->spread = NAN;
    st->seeds_readme = st->seeds_practice = -1;
    if (standing == LB_NONE) {
      standing = i;
      continue;
    }
    const lb_entry *prev = &lb->entries[standing];
    st->displaces = e->score < prev->score;
    test_step(st, e, prev, lb->median_sd);
    if (st->displaces) standing = i;
  }
  return 0;
}

lb_counts leaderboard_counts(const leaderboard *lb) {
  lb_counts c = {0};
  for (size_t i = 0; i < lb->n_entries; i++) {
    c.records += lb->entries[i].kind == LB_RECORD;
    c.folders_with_errors += lb->entries[i].n_errors > 0 || lb->entries[i].unreadable;
  }
  for (size_t i = 0; i < lb->n_steps; i++) {
    const lb_step *st = &lb->steps[i];
    if (st->prev == LB_NONE) continue;
    if (!st->displaces) {
      c.not_displacing++;
      continue;
    }
    c.steps++;
    if (!st->testable) {
      c.untestable++;
      continue;
    }
    c.testable++;
    c.readme_pass += st->sig.readme_pass;
    c.practice_pass += st->sig.practice_pass;
    c.practice_only += st->sig.practice_pass && !st->sig.readme_pass;
    c.neither += !st->sig.practice_pass && !st->sig.readme_pass;
  }
  return c;
}
