/* Does a submission reproduce? Two questions a maintainer's re-runs answer:
 *
 * Fresh seeds. The submitter chose their seeds; a replay runs K seeds the
 * submitter could not have chosen: derived from the folder's content
 * digest (every file, as `sha256sum` lines over the sorted relative paths,
 * hashed again) and a salt the maintainer supplies at replay time:
 *   seed_i = the first 4 bytes (little-endian) of
 *            SHA-256("pgolf-fresh-seed-v1" || digest || salt || u32le(j)),
 *            masked to 31 bits, for j = 0, 1, ... skipping repeats,
 * so anyone can recompute them from the folder and the published salt.
 *
 * REPRODUCTION_GAP. The claimed per-seed results against the replayed ones
 * (val_bpb, lower is better): is the claimed mean better than the replays
 * by more than the seeds' noise allows? One-sided, margin 0:
 *   H0: mean(replayed) - mean(claimed) <= 0.
 * Welch's test when both sides have two or more runs; a one-sample t test
 * when one side has a single run (against the other side's spread); no
 * test (the gap alone) when both have one. */
#ifndef PGOLF_REPRODUCTION_H
#define PGOLF_REPRODUCTION_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/sha256.h"

#define FRESH_SEEDS_MAX 64

/* The folder's content digest (hex) and k fresh seeds. Fails on an
 * unreadable folder or file, k outside [1, FRESH_SEEDS_MAX], an empty salt. */
int fresh_seeds(const char *dir, const char *salt, int k, uint32_t *seeds,
                char digest_hex[SHA256_HEX_LEN + 1], pg_error *err);

typedef struct repro_result {
  size_t n_claimed, n_replayed;
  double claimed_mean, replayed_mean;
  double gap;       /* replayed_mean - claimed_mean: > 0 when the claims look better */
  int testable;     /* 0: one run each, or no spread on the side that sets it */
  const char *test; /* "welch", "one-sample" or "none" */
  double t, df, p;  /* p of H0 above (NAN when not testable) */
  int gap_significant; /* p < alpha */
} repro_result;

/* Values must be finite; n_claimed, n_replayed >= 1; alpha in (0, 1). */
int reproduction_test(const double *claimed, size_t n_claimed, const double *replayed,
                      size_t n_replayed, double alpha, repro_result *out, pg_error *err);

#endif
