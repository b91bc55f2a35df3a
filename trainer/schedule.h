/* Step-based schedules and the wall-clock planner.
 *
 * Learning-rate multiplier: the official lr_mul without a wall-clock cap
 * (train_gpt.py's `max_wallclock_ms is None` branch), in double as Python
 * computes it:
 *   warmdown_iters <= 0                       -> 1
 *   max(iterations - warmdown_iters, 0) <= step < iterations
 *                                             -> max((iterations - step) / max(warmdown_iters, 1), 0)
 *   otherwise                                 -> 1
 * so the last warm-down step (iterations - 1) runs at 1/warmdown_iters and
 * the step before the warm-down starts at 1. Each group's learning rate is
 * base_lr * multiplier, also in double.
 *
 * Muon momentum warm-up, as the official loop:
 *   frac = min(step / warmup_steps, 1)   (1 when warmup_steps <= 0)
 *   momentum = (1 - frac) * start + frac * momentum
 *
 * Planner. pgolf never stops on the clock: a wall-clock budget becomes a
 * step count before training, and the run is step-based from then on (so
 * a replay runs exactly those steps). The caller times a few training
 * steps and passes their durations; the rule is:
 *   measured_step_ms = median of the samples after the first (the first
 *                      step pays for cold caches and page faults);
 *   planned_steps    = floor(budget_ms * SCHEDULE_SAFETY / measured_step_ms),
 *                      at most max_iterations, and at least 1 or an error.
 * SCHEDULE_SAFETY = 0.95 leaves 5% of the budget for step-time jitter, so a
 * run whose steps are up to ~5% slower than measured still ends inside the
 * budget. The official script counts only training time against its cap
 * (validation excluded); the budget here is the same training time. The
 * warm-down then covers the last warmdown_iters of the planned steps, the
 * step-based twin of the official time-based warm-down.
 *
 * The official WARMUP_STEPS (20 steps run before training to prime
 * torch.compile) restore the model, the optimizers and the loader
 * afterwards, so they change no result; pgolf has no such phase. */
#ifndef PGOLF_SCHEDULE_H
#define PGOLF_SCHEDULE_H

#include <jansson.h>
#include <stdint.h>

#include "common/error.h"

#define SCHEDULE_SAFETY 0.95
#define SCHEDULE_MAX_SAMPLES 1024

double schedule_lr_mult(int64_t step, int64_t iterations, int64_t warmdown_iters);

double schedule_muon_momentum(int64_t step, double start, double momentum, int warmup_steps);

typedef struct schedule_plan {
  double budget_seconds;   /* wall-clock training budget */
  double measured_step_ms; /* median step time used for the plan */
  int measured_samples;    /* step timings given (including the dropped first) */
  double safety;           /* fraction of the budget planned for */
  int64_t max_iterations;  /* the configured iterations: the plan's cap */
  int64_t planned_steps;   /* the run's step count */
} schedule_plan;

/* Median of ms[1..n) (ms[0] dropped; with n == 1, ms[0] itself). Every
 * sample must be finite and > 0. */
int schedule_step_ms(const double *ms, int n, double *out, pg_error *err);

/* The plan for budget_seconds from n step timings (milliseconds). Errors:
 * non-positive or non-finite budget or timings, too many samples, or a
 * budget too small for one step. */
int schedule_plan_steps(double budget_seconds, const double *step_ms, int n,
                        int64_t max_iterations, schedule_plan *out, pg_error *err);

/* The plan as a JSON object for the manifest (predicate.schedule.plan):
 * budget_seconds, measured_step_ms, measured_samples, safety,
 * max_iterations, planned_steps and the rule in words. NULL on OOM. */
json_t *schedule_plan_to_json(const schedule_plan *p);

#endif
