/* The full configuration of a training run: the model, the batch and the
 * schedule, the optimizer hyperparameters, logging cadence, seed,
 * precision and threads.
 *
 * Names and defaults are the official train_gpt.py Hyperparameters (the
 * environment variables, lower-cased), so a challenge config reads the
 * same here. A configuration starts from a preset and a JSON file may
 * override any key. Reading is strict: an unknown key, a value of the
 * wrong JSON type and a value outside its range are errors naming the key.
 *
 * Presets:
 *   baseline  the official defaults: 9x512, 8 heads, 4 KV heads, MLP 2x,
 *             vocab 1024, seq 1024, 524,288 tokens per step, 20,000
 *             iterations, warm-down 1,200, validation every 1,000 steps;
 *   tiny      the tiny model of trainer/model.h, seq 128, 8,192 tokens per
 *             step (8 micro-steps of 8 sequences), a short run sized for
 *             `make demo` on 2 cores.
 *
 * train_config_to_json prints every key back (the manifest's
 * predicate.config); reading that JSON gives the same configuration. */
#ifndef PGOLF_TRAIN_CONFIG_H
#define PGOLF_TRAIN_CONFIG_H

#include <jansson.h>
#include <stdint.h>

#include "common/error.h"
#include "trainer/model.h"
#include "trainer/optim.h"

#define TRAIN_CONFIG_MAX_BYTES ((size_t)1 << 20)
#define TRAIN_MAX_ITERATIONS 1000000 /* MANIFEST_MAX_STEPS */
#define TRAIN_PATH_MAX 1024
#define TRAIN_MAX_WORLD 8 /* the official world_size divides 8 (grad_accum_steps = 8 // world_size) */

typedef enum train_precision { TRAIN_FP32 = 0, TRAIN_MIXED = 1 } train_precision;

typedef struct train_config {
  char preset[32];
  gpt_config model; /* model.seq_len is the official train_seq_len */

  /* batch; the schedule (iterations, warmdown_iters) is in opt */
  int64_t train_batch_tokens; /* tokens per optimizer step, all micro-steps */
  int grad_accum_steps;       /* official: 8 / world_size */
  int world_size;             /* official ranks (1, 2, 4, 8), however many processes run them */
  double budget_seconds; /* 0: none; > 0: iterations planned from step time */

  /* optimizer and schedule (trainer/optim.h; embed_lr and head_lr, which
   * only an untied model uses, are not configurable keys) */
  optim_hparams opt;

  /* evaluation and logging */
  int64_t val_batch_size;
  int64_t val_loss_every; /* 0: only at the end */
  int64_t train_log_every;

  /* run */
  uint64_t seed;
  train_precision precision;
  int threads; /* 0: OpenMP's default */
  char data[TRAIN_PATH_MAX];      /* "" until set */
  char tokenizer[TRAIN_PATH_MAX]; /* "" until set */
} train_config;

/* Fill *c from a preset name; -1 (and err) for an unknown name. */
int train_config_preset(const char *name, train_config *c, pg_error *err);

/* Apply the keys of a JSON object over *c. A "preset" key, if present, is
 * applied first, whatever its position. name is used in errors. */
int train_config_apply_json(train_config *c, json_t *obj, const char *name, pg_error *err);
/* Parse JSON text (at most TRAIN_CONFIG_MAX_BYTES) and apply it. */
int train_config_parse(train_config *c, const uint8_t *buf, size_t len, const char *name,
                       pg_error *err);
int train_config_load(train_config *c, const char *path, pg_error *err);

/* Checks that span keys: the model (gpt_layout_init), the batch split
 * (train_batch_tokens divisible by grad_accum_steps * seq_len), warm-down
 * no longer than the run. */
int train_config_check(const train_config *c, pg_error *err);

/* Every key, in a fixed order, as a new JSON object. */
json_t *train_config_to_json(const train_config *c);

/* Derived sizes. */
int64_t train_config_micro_tokens(const train_config *c); /* per rank and micro-step */
int train_config_micro_batch(const train_config *c);      /* sequences per rank and micro-step */

const char *train_precision_name(train_precision p);

#endif
