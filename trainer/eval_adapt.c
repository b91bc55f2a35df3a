/* Test-time training on a range of positions: SGD with momentum over every
 * parameter, gradient clipping, E epochs (see eval_session.h). */
#include "trainer/eval_session.h"

#include <string.h>

#include "kernels/optim_step.h"
#include "trainer/clip.h"

/* torch.optim.SGD(momentum=mu, dampening=0, nesterov=False,
 * weight_decay=0).step(), element by element (kernels/optim_step.h, the
 * arithmetic the GPU's twin shares). */
static void sgd_momentum_step(float *w, float *buf, const float *g, size_t n, float lr, float mu) {
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) sgd_momentum_elem(&w[i], &buf[i], g[i], lr, mu);
}

/* One step on sequences [s0, s0 + b) of the range starting at first. */
static int adapt_step(eval_session *s, uint64_t first, uint64_t s0, int b, float lr,
                      pg_error *err) {
  const uint64_t T = s->cfg.seq_len;
  if (val_data_copy(s->v, first - 1 + s0 * T, (uint64_t)b * T + 1, s->win, err)) return -1;
  for (int j = 0; j < b; j++) {
    memcpy(s->x + (size_t)j * T, s->win + (size_t)j * T, T * sizeof *s->x);
    memcpy(s->y + (size_t)j * T, s->win + (size_t)j * T + 1, T * sizeof *s->y);
  }
  if (s->gpu) {
    if (eval_gpu_adapt(s->gpu, s->x, s->y, b, (int)T, lr, (float)s->cfg.momentum, s->cfg.clip,
                       err))
      return -1;
    s->adapt_steps++;
    return 0;
  }
  memset(s->grads, 0, s->l->n_params * sizeof *s->grads);
  gpt_forward(s->l, &s->p, s->acts, s->x, s->y, b, (int)T, s->cfg.precision, NULL);
  gpt_backward(s->l, &s->p, &s->g, s->acts, s->x, s->y, b, (int)T, s->cfg.precision, 1.0f);
  if (s->cfg.clip > 0)
    clip_grad_norm_tree(s->grads, s->l, s->cfg.clip, s->cfg.precision, s->cfg.gpu_trees);
  sgd_momentum_step(s->flat, s->mom, s->grads, s->l->n_params, lr, (float)s->cfg.momentum);
  s->adapt_steps++;
  return 0;
}

int eval_adapt_range(eval_session *s, uint64_t chunk, uint64_t first, uint64_t last, double lr,
                     pg_error *err) {
  if (s->cfg.mode != EVAL_MODE_TTT)
    return pg_fail(err, "", -1, "evaluation: this session cannot adapt");
  if (first < 1 || first > last || last >= s->v->n_tokens)
    return pg_fail(err, "", -1, "evaluation: positions %llu..%llu outside 1..%llu",
                   (unsigned long long)first, (unsigned long long)last,
                   (unsigned long long)(s->v->n_tokens - 1));
  const uint64_t T = s->cfg.seq_len, k = (last - first + 1) / T;
  if (k == 0 || s->cfg.epochs == 0) return 0;
  const uint64_t B = (uint64_t)s->cfg.ttt_batch_seqs;
  for (int ep = 0; ep < s->cfg.epochs; ep++)
    for (uint64_t s0 = 0; s0 < k; s0 += B) {
      int b = (int)(k - s0 < B ? k - s0 : B);
      if (adapt_step(s, first, s0, b, (float)lr, err)) return -1;
    }
  return eval_events_append(&s->events, &s->events_cap, EVAL_ADAPT, chunk, first,
                            first - 1 + k * T, 0, err);
}
