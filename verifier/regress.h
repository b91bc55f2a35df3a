/* Regression of val_bpb for CI: does a training run still score like the
 * reference runs of its configuration, and (for deterministic
 * configurations) does it still produce the same losses?
 *
 * The golden file (JSON, read strictly):
 *   {"format": "pgolf/regress/v1",
 *    "false_failure_probability": P,          (optional, default 1e-3)
 *    "configs": {NAME: {
 *        "deterministic": true|false,
 *        "match": {KEY: VALUE, ...},           (optional: predicate.config must agree)
 *        "k": K,                               (optional: overrides the derived k)
 *        "val_bpb": {"mean": M, "sd": S, "n": N},
 *        "seeds": [{"seed": N, "val_bpb": X, "loss_chain_head": HEX64}, ...]}}}
 * with N >= 3 seeds whose values reproduce mean and sd (so a hand edit of
 * one without the other is caught).
 *
 * A run fails when
 *   - its configuration is deterministic, the golden holds its seed, and its
 *     loss chain head differs from the recorded one; or
 *   - its val_bpb (predicate.evaluation.val_bpb) > mean + k * sd.
 *
 * k. A correct run's val_bpb X and the N reference values are independent
 * draws from one normal distribution, so (X - mean) / (sd * sqrt(1 + 1/N))
 * has Student's t distribution with N - 1 df (the prediction interval; the
 * sd is estimated, not known). Hence
 *   k = t_{N-1}.isf(P) * sqrt(1 + 1/N)
 * makes P(a correct run fails the band) = P exactly, over the draw of the
 * reference seeds as well as of the run. For N = 3 and P = 1e-3 this is
 * k = 22.327 * 1.1547 = 25.78: three seeds pin the sd down poorly, and the
 * band says so honestly. More reference seeds shrink k quickly (N = 10:
 * k = 4.50). */
#ifndef PGOLF_REGRESS_H
#define PGOLF_REGRESS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "manifests/manifest.h"
#include "common/sha256.h"

#define REGRESS_FORMAT "pgolf/regress/v1"
#define REGRESS_MAX_BYTES ((size_t)4 << 20)
#define REGRESS_MIN_SEEDS 3
#define REGRESS_DEFAULT_P 1e-3

typedef struct regress_seed {
  uint64_t seed;
  double val_bpb;
  int has_head;
  uint8_t head[SHA256_LEN];
} regress_seed;

typedef struct regress_config {
  const char *name; /* borrowed from the golden's JSON */
  int deterministic;
  json_t *match;    /* borrowed; NULL if absent */
  double mean, sd, k;
  size_t n;
  regress_seed *seeds;
} regress_config;

typedef struct regress_golden {
  json_t *root;
  double p_false; /* false_failure_probability */
  regress_config *configs;
  size_t n_configs;
} regress_golden;

/* k for n reference seeds and false-failure probability p (see above). */
double regress_default_k(size_t n, double p);

int regress_golden_parse(const uint8_t *buf, size_t len, const char *name, regress_golden *g,
                         pg_error *err);
int regress_golden_load(const char *path, regress_golden *g, pg_error *err);
void regress_golden_free(regress_golden *g);
const regress_config *regress_find_config(const regress_golden *g, const char *name);

/* What happened to one run. */
typedef enum chain_state { CHAIN_SAME, CHAIN_DIFFERS, CHAIN_NOT_CHECKED } chain_state;

typedef struct regress_result {
  char run[PG_ERR_PATH];
  const char *config;
  uint64_t seed;
  double val_bpb, limit;
  int band_failed;
  chain_state chain;
  char chain_note[160]; /* why not checked, or the two heads */
  size_t n_steps;
} regress_result;

static inline int regress_failed(const regress_result *r) {
  return r->band_failed || r->chain == CHAIN_DIFFERS;
}

/* Judge one loaded manifest against configuration c. Errors (-1): the
 * manifest has no finite evaluation.val_bpb, or its configuration
 * disagrees with c's "match" keys (it is not a run of c). */
int regress_judge(const regress_config *c, const manifest *m, const char *run,
                  regress_result *r, pg_error *err);

/* Outputs. */
void regress_print_table(FILE *out, const regress_result *r, size_t n);
json_t *regress_json(const regress_result *r, size_t n);
/* JUnit XML: one testsuite, two testcases per run (val_bpb band and loss
 * chain; the chain case is skipped when not checked). */
char *regress_junit(const regress_result *r, size_t n);
char *regress_markdown(const regress_result *r, size_t n);

#endif
