/* Scoring a range of positions with sliding windows, parameters read only
 * (see eval_session.h for the windows). */
#include "trainer/eval_session.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/bf16.h"
#include "kernels/det_math.h"

/* The distribution the forward scored with, from one row of the tied
 * head's output z: logit = cap * tanh(z / cap) with the forward's
 * rounding and its tanh (kernels/softcap_cross_entropy.h), then softmax
 * in float64 with det_exp, so probes have the same bits on any machine. */
static void row_distribution(const float *z, int V, float cap, gpt_precision prec, double *out) {
  const float inv_cap = 1.0f / cap;
  double m = -INFINITY;
  for (int i = 0; i < V; i++) {
    float logit;
    if (prec == GPT_MIXED)
      logit = bf16_round(cap * bf16_round(det_tanhf(bf16_round(z[i] * inv_cap))));
    else
      logit = cap * det_tanhf(z[i] / cap);
    out[i] = logit;
    if (out[i] > m) m = out[i];
  }
  double sum = 0.0;
  for (int i = 0; i < V; i++) {
    out[i] = det_exp(out[i] - m);
    sum += out[i];
  }
  for (int i = 0; i < V; i++) out[i] /= sum;
}

typedef struct window {
  uint64_t after; /* the previous window's end: this one scores (after, end] */
  uint64_t end;
} window;

/* Up to max windows of one length L from *prev on; returns how many. */
static int next_batch(const eval_session *s, uint64_t *prev, uint64_t last, window *w, int max,
                      uint32_t *L) {
  const uint64_t T = s->cfg.seq_len, S = s->cfg.stride;
  int b = 0;
  while (b < max && *prev < last) {
    uint64_t e = last - *prev > S ? *prev + S : last;
    uint32_t len = (uint32_t)(e < T ? e : T);
    if (b > 0 && len != *L) break;
    *L = len;
    w[b].after = *prev;
    w[b].end = e;
    b++;
    *prev = e;
  }
  return b;
}

/* Hand one scored position to the hook or to eval_emit; z: the row of
 * logits it was scored from (on the GPU: brought back for probes only). */
static int emit_position(eval_session *s, uint64_t p, uint16_t target, float nll, const float *z,
                         size_t row, pg_error *err) {
  double *dist = NULL;
  if (eval_is_probe(s, p)) {
    if (s->gpu) {
      if (eval_gpu_logits_row(s->gpu, row, s->zrow, err)) return -1;
      z = s->zrow;
    }
    row_distribution(z, s->l->cfg.vocab_size, s->l->cfg.logit_softcap, s->cfg.precision, s->dist);
    dist = s->dist;
  }
  if (s->hook) return s->hook(s, s->hook_ctx, p, target, (double)nll, dist, err);
  return eval_emit(s, p, target, (double)nll, dist, err);
}

/* The windows' inputs and targets into x, y, rows of `stride` ids (L of
 * them used); on the GPU the rest of each row, and the rows past b, are
 * token 0 (eval_cuda.h: one shape for every batch). */
static int load_windows(eval_session *s, const window *w, int b, uint32_t L, size_t stride,
                        pg_error *err) {
  if (s->gpu) {
    memset(s->x, 0, (size_t)s->acts_B * stride * sizeof *s->x);
    memset(s->y, 0, (size_t)s->acts_B * stride * sizeof *s->y);
  }
  for (int j = 0; j < b; j++) {
    uint64_t start = w[j].end - L;
    if (val_data_copy(s->v, start, (uint64_t)L + 1, s->win, err)) return -1;
    memcpy(s->x + (size_t)j * stride, s->win, L * sizeof *s->x);
    memcpy(s->y + (size_t)j * stride, s->win + 1, L * sizeof *s->y);
  }
  return 0;
}

/* One forward pass over b windows of length L, then their positions in order. */
static int score_batch(eval_session *s, const window *w, int b, uint32_t L, pg_error *err) {
  const size_t stride = s->gpu ? s->cfg.seq_len : L, V = (size_t)s->l->cfg.vocab_size;
  const float *z = NULL;
  if (load_windows(s, w, b, L, stride, err)) return -1;
  if (s->gpu) {
    if (eval_gpu_score(s->gpu, s->x, s->y, s->nll, err)) return -1;
  } else {
    gpt_forward(s->l, &s->p, s->acts, s->x, s->y, b, (int)L, s->cfg.precision, s->nll);
    size_t nz;
    z = gpt_acts_tensor(s->acts, s->l, 0, "z", b, (int)L, &nz);
  }
  for (int j = 0; j < b; j++) {
    uint64_t start = w[j].end - L;
    for (uint64_t p = w[j].after + 1; p <= w[j].end; p++) {
      size_t row = (size_t)j * stride + (size_t)(p - start - 1);
      if (emit_position(s, p, s->y[row], s->nll[row], z ? z + row * V : NULL, row, err)) return -1;
    }
  }
  return 0;
}

int eval_score_range(eval_session *s, uint64_t chunk, uint64_t first, uint64_t last,
                     pg_error *err) {
  if (first < 1 || first > last || last >= s->v->n_tokens)
    return pg_fail(err, "", -1, "evaluation: positions %llu..%llu outside 1..%llu",
                   (unsigned long long)first, (unsigned long long)last,
                   (unsigned long long)(s->v->n_tokens - 1));
  window *w = malloc((size_t)s->cfg.batch_seqs * sizeof *w);
  if (!w) return pg_fail(err, "", -1, "evaluation: out of memory");
  s->range_nats = 0.0;
  uint64_t prev = first - 1;
  int rc = 0;
  while (prev < last && !rc) {
    uint32_t L = 0;
    int b = next_batch(s, &prev, last, w, s->cfg.batch_seqs, &L);
    rc = score_batch(s, w, b, L, err);
  }
  free(w);
  if (rc) return -1;
  uint64_t bits;
  memcpy(&bits, &s->range_nats, sizeof bits);
  return eval_events_append(&s->events, &s->events_cap, EVAL_SCORE, chunk, first, last, bits,
                            err);
}
