/* One log file holding several runs, one after the other: PR #1722's
 * train_v3_3seeds.log (seeds 42, 314 and 999, each printing its own
 * `seed:N`, its steps and its final metrics), PR #455's train.log, PR
 * #1662's eval_seeds42_314.log (two evaluations, each printing the
 * evaluating process's seed 42, the file's name saying whose artifacts
 * they scored). Read as one log, such a file is one run of its first seed
 * whose final metric is its last run's: the other seeds' runs are lost,
 * and claims that use them look unsupported.
 *
 * A file is split into parts, each then read as a log of its own with the
 * file's line numbers: one per segment (log_parse.h: a new seed, a step
 * count starting again, a Hyperparameters block after a score) that holds
 * a result (a step, a metric or a stop line); a segment without one stays
 * in the part before it. Each part prints its own seed, or takes its seed
 * from the file name: the k-th of k seeds the name lists
 * (eval_seeds42_314.log, train_seeds_42_999.log), or the one it names
 * (eval_seed7.log); else the part before it's (see submission.c). So a
 * run's settings, clock and scores are its own, and a smoke test or an
 * earlier attempt before the run in one file is read apart from it. */
#ifndef PGOLF_LOG_PARTS_H
#define PGOLF_LOG_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "verifier/log_parse.h"

#define LOG_MAX_PARTS 64

typedef struct log_part {
  uint32_t first_line;
  int64_t name_seed; /* the seed the file name gives this part; -1 if it gives none */
} log_part;

/* The parts of l, the whole file whose base name is name, into out (at
 * most LOG_MAX_PARTS). Returns how many: 1 if the file is one run, or
 * holds more parts than LOG_MAX_PARTS. */
size_t log_parts(const pg_log *l, const char *name, log_part *out);

/* The seeds a file name lists after "seed" or "seeds" ("eval_seeds42_314.log":
 * 42, 314; "train_seed1337.log": 1337), at most cap; returns how many. */
size_t log_name_seeds(const char *name, int64_t *out, size_t cap);

#endif
