/* Negative controls: evaluators that break one score-first condition each,
 * on purpose, built from the same session primitives as the legal ones
 * (trainer/eval_session.h). They exist only in the test binary: pgolf
 * itself cannot run them.
 *
 *   adapt_before_score  trains on each chunk, then scores it (C3)
 *   best_of_two         scores a chunk, trains on it, scores it again and
 *                       keeps the better nll of each position (C4: best
 *                       of k; the second score also follows the update, C3)
 *   read_target         mixes the target into its own distribution:
 *                       q = (1-a) p + a onehot(target), normalized and
 *                       reported consistently, so only the perturbation
 *                       test (a probe at the cut moves) can see it (C1)
 *   not_normalized      reports p * 1.25 (sums to 1.25), nll consistent
 *                       with it (C2)
 *   skip_token          leaves one position out (C4)
 *   score_twice         writes one position's record twice (C4)
 * Each control's honest parts (events, sums) are kept honest, so the
 * audit must find exactly the condition it breaks. */
#ifndef PGOLF_TEST_EVAL_CONTROLS_H
#define PGOLF_TEST_EVAL_CONTROLS_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainer/eval_session.h"

#define CONTROL_SKIPPED_POSITION 100
#define CONTROL_TWICE_POSITION 200
#define CONTROL_READ_ALPHA 0.5
#define CONTROL_MASS 1.25

typedef int (*control_fn)(eval_session *s, pg_error *err);

/* The chunks of a TTT session: chunk c is [*a, *b]. */
static void control_chunk(const eval_session *s, uint64_t c, uint64_t *a, uint64_t *b) {
  const uint64_t C = s->cfg.chunk, last = s->v->n_tokens - 1;
  *a = 1 + c * C;
  *b = last - *a + 1 > C ? *a + C - 1 : last;
}

static int control_adapt_before_score(eval_session *s, pg_error *err) {
  const uint64_t K = eval_ttt_chunks(s->v->n_tokens, s->cfg.chunk);
  for (uint64_t c = 0; c < K; c++) {
    uint64_t a, b;
    control_chunk(s, c, &a, &b);
    if (eval_adapt_range(s, c, a, b, eval_ttt_lr(s->cfg.lr, c, K), err) ||
        eval_score_range(s, c, a, b, err))
      return -1;
  }
  return 0;
}

/* best_of_two keeps the first pass aside, then emits the better of both. */
typedef struct best_of_two {
  uint64_t first;      /* the chunk's first position */
  double *nll;         /* first pass, by position - first */
  double *dist;        /* first pass's probe distributions, V each */
  uint64_t *dist_pos;
  size_t n_dist, cap_dist;
  int second;
} best_of_two;

static int best_hook(eval_session *s, void *ctx, uint64_t p, uint32_t target, double nll,
                     double *dist, pg_error *err) {
  best_of_two *b = ctx;
  const size_t V = (size_t)s->l->cfg.vocab_size;
  if (!b->second) {
    b->nll[p - b->first] = nll;
    s->range_nats += nll; /* its SCORE event honestly sums what it scored */
    if (dist && b->n_dist < b->cap_dist) {
      memcpy(b->dist + b->n_dist * V, dist, V * sizeof *dist);
      b->dist_pos[b->n_dist++] = p;
    }
    return 0;
  }
  double old = b->nll[p - b->first];
  if (old <= nll) {
    const double *d = NULL;
    for (size_t i = 0; dist && i < b->n_dist; i++)
      if (b->dist_pos[i] == p) d = b->dist + i * V;
    return eval_emit(s, p, target, old, d, err);
  }
  return eval_emit(s, p, target, nll, dist, err);
}

static int control_best_of_two(eval_session *s, pg_error *err) {
  const uint64_t K = eval_ttt_chunks(s->v->n_tokens, s->cfg.chunk);
  const size_t V = (size_t)s->l->cfg.vocab_size;
  best_of_two b = {0};
  b.nll = malloc(s->cfg.chunk * sizeof *b.nll);
  b.cap_dist = s->n_probes;
  b.dist = malloc((b.cap_dist + 1) * V * sizeof *b.dist);
  b.dist_pos = malloc((b.cap_dist + 1) * sizeof *b.dist_pos);
  int rc = !b.nll || !b.dist || !b.dist_pos ? pg_fail(err, "", -1, "out of memory") : 0;
  s->hook = best_hook;
  s->hook_ctx = &b;
  for (uint64_t c = 0; c < K && !rc; c++) {
    uint64_t a, e;
    control_chunk(s, c, &a, &e);
    b.first = a;
    b.second = 0;
    b.n_dist = 0;
    rc = eval_score_range(s, c, a, e, err);
    if (!rc) rc = eval_adapt_range(s, c, a, e, eval_ttt_lr(s->cfg.lr, c, K), err);
    b.second = 1;
    if (!rc) rc = eval_score_range(s, c, a, e, err);
  }
  s->hook = NULL;
  free(b.nll), free(b.dist), free(b.dist_pos);
  return rc;
}

static int read_target_hook(eval_session *s, void *ctx, uint64_t p, uint32_t target, double nll,
                            double *dist, pg_error *err) {
  (void)ctx;
  const double a = CONTROL_READ_ALPHA;
  double q = (1 - a) * exp(-nll) + a;
  if (dist) {
    for (int i = 0; i < s->l->cfg.vocab_size; i++) dist[i] *= 1 - a;
    dist[target] += a;
    q = dist[target];
  }
  return eval_emit(s, p, target, -log(q), dist, err);
}

static int not_normalized_hook(eval_session *s, void *ctx, uint64_t p, uint32_t target,
                               double nll, double *dist, pg_error *err) {
  (void)ctx;
  if (dist)
    for (int i = 0; i < s->l->cfg.vocab_size; i++) dist[i] *= CONTROL_MASS;
  double v = nll - log(CONTROL_MASS);
  return eval_emit(s, p, target, v > 0 ? v : 0, dist, err);
}

static int skip_hook(eval_session *s, void *ctx, uint64_t p, uint32_t target, double nll,
                     double *dist, pg_error *err) {
  (void)ctx;
  if (p == CONTROL_SKIPPED_POSITION) return 0;
  return eval_emit(s, p, target, nll, dist, err);
}

static int twice_hook(eval_session *s, void *ctx, uint64_t p, uint32_t target, double nll,
                      double *dist, pg_error *err) {
  (void)ctx;
  if (p == CONTROL_TWICE_POSITION && eval_emit(s, p, target, nll, dist, err)) return -1;
  return eval_emit(s, p, target, nll, dist, err);
}

/* The sliding evaluator with a hook on every scored position. */
static int sliding_with(eval_session *s, eval_emit_hook h, pg_error *err) {
  s->hook = h;
  int rc = eval_score_range(s, 0, 1, s->v->n_tokens - 1, err);
  s->hook = NULL;
  return rc;
}

static int control_read_target(eval_session *s, pg_error *err) {
  return sliding_with(s, read_target_hook, err);
}
static int control_not_normalized(eval_session *s, pg_error *err) {
  return sliding_with(s, not_normalized_hook, err);
}
static int control_skip_token(eval_session *s, pg_error *err) {
  return sliding_with(s, skip_hook, err);
}
static int control_score_twice(eval_session *s, pg_error *err) {
  return sliding_with(s, twice_hook, err);
}

#endif
