/* The perturbation test: an experiment on an evaluator, for conditions a
 * dump alone cannot show.
 *
 * C1 (causality) says the distribution at position p depends only on the
 * artifact and t[0..p); C3 (score before update) says a score is fixed
 * before any update that uses it. Both imply: change the tokens from some
 * position k on, and nothing the evaluator reported for positions before k
 * may change. So the evaluator runs once on the validation split and once
 * per cut k on a copy whose tokens t[i], i >= k, are all replaced, and:
 *   - every record at a position p < k must have the same nll in both
 *     dumps (bit for bit, or within the tolerance for evaluators that are
 *     not deterministic), and be present in both;
 *   - every probe at a position p <= k must hold the same distribution
 *     (it is fixed before t[p] is seen, and t[0..p) did not change): an
 *     evaluator that reads the target it is scoring moves here;
 *   - something at a position >= k must have moved, or the test proved
 *     nothing (the evaluator did not read the data it was given):
 *     reported as inconclusive, which fails.
 * The first position that moved names the leak: for an evaluator that
 * adapts on a chunk before scoring it, a cut inside chunk c moves the
 * first position of chunk c. A cut at a chunk's first position moves no
 * earlier record (the chunk before it never saw perturbed tokens); only a
 * probe at the cut shows that the distribution there was trained on the
 * token it predicts. So the default cuts include both kinds, and pgolf's
 * own evaluator is asked for a probe at every cut.
 *
 * THE REPLACEMENT STREAM (documented so anyone can rebuild a copy):
 *   x_i = splitmix64(PERTURB_SEED + i)   for stream index i
 *   r_i = (t_i + 1 + x_i mod (V - 1)) mod V
 * splitmix64(z): z += 0x9e3779b97f4a7c15; z = (z ^ z>>30) * 0xbf58476d1ce4e5b9;
 * z = (z ^ z>>27) * 0x94d049bb133111eb; return z ^ z>>31 (all mod 2^64).
 * r_i is a valid id (< V, the dump's vocabulary) and never equals t_i. The
 * stream index runs over the split's shards in sorted name order, as the
 * evaluation reads them; the copy keeps every shard's name and length.
 *
 * CUTS: given explicitly, or chosen from the stream length n and, for a
 * chunked evaluator, its chunk size C (chunk c covers positions
 * 1 + cC .. (c+1)C): boundaries 1 + C and 1 + (K-1)C (the first positions
 * of the second and the last chunk), and the middles 1 + C/2 and
 * 1 + (K/2)C + C/2 (inside the first and a middle chunk); without C,
 * positions at 1/4, 1/2 and 3/4 of the stream. Cuts below 2 or at or past
 * n are dropped. */
#ifndef PGOLF_AUDIT_PERTURB_H
#define PGOLF_AUDIT_PERTURB_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define PERTURB_SEED 0x70676f6c66ull /* "pgolf" */
#define PERTURB_MAX_CUTS 64

/* splitmix64 and the replacement id for stream index i (V >= 2). */
uint64_t perturb_splitmix64(uint64_t z);
uint16_t perturb_token(uint16_t t, uint64_t i, uint32_t vocab_size);

/* An evaluation: score the split in data_dir (a directory with
 * fineweb_val_*.bin, and whatever else the original held), write the dump
 * to dump_path. probe_at lists positions where a probe is wanted (a hint;
 * an evaluator may ignore it). Returns 0 or -1 with err. */
typedef int (*perturb_eval_fn)(void *ctx, const char *data_dir, const char *dump_path,
                               const uint64_t *probe_at, size_t n_probe_at, pg_error *err);

typedef struct perturb_opts {
  const char *data_dir;  /* the original split */
  const uint64_t *cuts;  /* explicit cuts, or NULL to choose them */
  size_t n_cuts;
  uint64_t chunk;        /* the evaluator's chunk size, 0 if none */
  double tolerance;      /* 0: bit-identical */
  const char *scratch;   /* a directory for the copies and dumps; NULL: mkdtemp */
  int keep;              /* keep the scratch directory */
} perturb_opts;

typedef enum perturb_status { PERTURB_PASS, PERTURB_MOVED, PERTURB_INCONCLUSIVE } perturb_status;

typedef struct perturb_cut {
  uint64_t cut;
  perturb_status status;
  uint64_t compared;      /* records before the cut present in both dumps */
  int64_t first_moved;    /* first position < cut whose record moved, -1 if none */
  int64_t probe_moved;    /* first probe position <= cut whose distribution moved, -1 */
  uint64_t probes_compared; /* probes at or before the cut */
  double max_abs_diff;    /* largest |nll difference| before the cut */
  uint64_t moved_after;   /* records at or after the cut that moved */
  char why[256];
} perturb_cut;

typedef struct perturb_report {
  uint64_t n_tokens;      /* the split's stream length */
  uint32_t vocab_size;    /* from the first dump */
  size_t n_cuts;
  perturb_cut cuts[PERTURB_MAX_CUTS];
  int runs;
} perturb_report;

/* The default cuts for a stream of n tokens and chunk C (0: none), sorted
 * and unique; returns how many (<= PERTURB_MAX_CUTS). */
size_t perturb_choose_cuts(uint64_t n_tokens, uint64_t chunk, uint64_t *cuts);

/* Write the perturbed copy of data_dir's validation split into out_dir
 * (created): val shards rewritten from index cut on, every other entry
 * linked. */
int perturb_write_copy(const char *data_dir, const char *out_dir, uint64_t cut,
                       uint32_t vocab_size, pg_error *err);

/* Run the whole test. Returns the number of cuts that did not pass, or -1
 * (err) when it could not run: an evaluation failed, a dump is malformed,
 * the split cannot be read. */
int perturb_run(const perturb_opts *o, perturb_eval_fn eval, void *ctx, perturb_report *r,
                pg_error *err);

const char *perturb_status_name(perturb_status s);

#endif
