/* Validation loss and bits per byte over the whole split (see eval.h). */
#include "trainer/eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/byte_accounting.h"

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int eval_batch_ids(const val_data *v, const byte_luts *luts, uint64_t s0, int b, uint16_t *win,
                   uint16_t *x, uint16_t *y, uint64_t *bytes, pg_error *err) {
  const uint64_t T = v->seq_len, span = (uint64_t)b * T;
  if (val_data_copy(v, s0 * T, span + 1, win, err)) return -1;
  if (val_window_bytes(luts, win, span, bytes, err)) return -1;
  for (int s = 0; s < b; s++) {
    memcpy(x + (size_t)s * T, win + (size_t)s * T, T * sizeof *x);
    memcpy(y + (size_t)s * T, win + (size_t)s * T + 1, T * sizeof *y);
  }
  return 0;
}

void eval_result_finish(eval_result *r, uint64_t n_seq, uint64_t T, double seconds) {
  r->seconds = seconds;
  r->sequences = n_seq;
  r->tokens = n_seq * T;
  memcpy(&r->loss_sum_bits, &r->loss_sum, sizeof r->loss_sum_bits);
  r->val_loss = r->loss_sum / (double)r->tokens;
  r->val_bpb = bpb_from_nats(r->loss_sum, r->bytes);
  r->tokens_per_second = r->seconds > 0 ? (double)r->tokens / r->seconds : 0.0;
}

/* One forward pass over sequences [s0, s0 + b): fills x, y, nll; adds the
 * nats in token order and the bytes. */
static int eval_batch(const val_data *v, const byte_luts *luts, const gpt_layout *l,
                      const gpt_params *p, gpt_acts *acts, const eval_opts *o, uint64_t s0, int b,
                      uint16_t *win, uint16_t *x, uint16_t *y, float *nll, eval_result *r,
                      pg_error *err) {
  const uint64_t T = v->seq_len, span = (uint64_t)b * T;
  if (eval_batch_ids(v, luts, s0, b, win, x, y, &r->bytes, err)) return -1;
  float *dst = o->nll_out ? o->nll_out + s0 * T : nll;
  gpt_forward(l, p, acts, x, y, b, (int)T, o->precision, dst);
  for (uint64_t i = 0; i < span; i++) r->loss_sum += (double)dst[i];
  return 0;
}

int eval_val(const val_data *v, const byte_luts *luts, const gpt_layout *l, const gpt_params *p,
             const eval_opts *o, eval_result *r, pg_error *err) {
  memset(r, 0, sizeof *r);
  if (o->batch_seqs < 1)
    return pg_fail(err, "", -1, "evaluation: batch of %d sequences; need at least 1",
                   o->batch_seqs);
  if (v->vocab_size != (uint32_t)l->cfg.vocab_size)
    return pg_fail(err, "", -1, "evaluation: data checked for vocabulary %u, the model has %d",
                   v->vocab_size, l->cfg.vocab_size);
  const uint64_t T = v->seq_len, n_seq = (v->n_tokens - 1) / T;
  int B = (uint64_t)o->batch_seqs < n_seq ? o->batch_seqs : (int)n_seq;
  gpt_acts *acts = gpt_acts_new(l, B, (int)T, err);
  if (!acts) return -1;
  if (o->tree_refs) gpt_acts_use_tree_refs(acts);
  size_t cap = (size_t)B * T;
  uint16_t *win = malloc((cap + 1) * sizeof *win), *x = malloc(cap * sizeof *x),
           *y = malloc(cap * sizeof *y);
  float *nll = malloc(cap * sizeof *nll);
  int rc = -1;
  if (!win || !x || !y || !nll) {
    pg_fail(err, "", -1, "evaluation: out of memory for %d x %llu tokens", B,
            (unsigned long long)T);
    goto done;
  }
  double t0 = now_seconds();
  for (uint64_t s0 = 0; s0 < n_seq; s0 += (uint64_t)B) {
    int b = n_seq - s0 < (uint64_t)B ? (int)(n_seq - s0) : B;
    if (eval_batch(v, luts, l, p, acts, o, s0, b, win, x, y, nll, r, err)) goto done;
  }
  eval_result_finish(r, n_seq, T, now_seconds() - t0);
  rc = 0;
done:
  free(win), free(x), free(y), free(nll);
  gpt_acts_free(acts);
  return rc;
}
