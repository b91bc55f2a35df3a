/* Settings a log prints whose value the shipped code computes from the
 * seed: each run's own, as the seed is.
 *
 * A loader that spreads its batches over the shards with a stride chosen
 * from the seed (the Rascal family: `self.batch_shard_stride =
 * choose_coprime_stride(self.num_shards, seed * 41 + 3)`) prints
 * `batch_stride:47` for seed 42 and `batch_stride:63` for seed 300. Two
 * runs of one configuration then print different values, and that is no
 * sign that the configuration changed (CONFIG_MISMATCH).
 *
 * Read from the text, not run: the key is seed-derived when a string
 * literal of the script holds `KEY:{EXPR}` (an f-string's field), EXPR is
 * a (dotted) name, and that name's last part is assigned, in the script,
 * from an expression that names `seed` (a word of its own, as `seed`,
 * `args.seed`, `self.seed`), directly or through up to
 * SEED_DERIVED_ROUNDS assignments of such names; string literals in the
 * expression do not count. */
#ifndef PGOLF_SEED_DERIVED_H
#define PGOLF_SEED_DERIVED_H

#include "verifier/pysrc.h"

#define SEED_DERIVED_ROUNDS 4

/* 1 if the script src (verifier/pysrc.h) prints key from a seed-derived
 * name, 0 if not (or out of memory). */
int seed_derived_key(const py_src *src, const char *key);

#endif
