/* The evaluation session: configuration, buffers, probes, the dump and
 * the event log (see eval_session.h). */
#include "trainer/eval_session.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const mode_names[] = {"plain", "sliding", "ttt"};

const char *eval_mode_name(eval_mode m) {
  return (unsigned)m < 3 ? mode_names[m] : "?";
}

int eval_mode_parse(const char *s, eval_mode *m) {
  for (int i = 0; i < 3; i++)
    if (!strcmp(s, mode_names[i])) {
      *m = (eval_mode)i;
      return 0;
    }
  return -1;
}

void eval_config_default(eval_config *c, eval_mode mode, uint32_t seq_len) {
  memset(c, 0, sizeof *c);
  c->mode = mode;
  c->seq_len = seq_len;
  c->stride = mode == EVAL_MODE_PLAIN ? seq_len : (seq_len < 64 ? seq_len : 64);
  c->chunk = 32768;
  c->epochs = 3;
  c->lr = 0.002;
  c->momentum = 0.9;
  c->clip = 1.0;
  c->batch_seqs = 32;
  c->ttt_batch_seqs = 32;
  c->precision = GPT_FP32;
  c->n_probes = EVAL_DEFAULT_PROBES;
}

int eval_config_check(const eval_config *c, const gpt_layout *l, pg_error *err) {
  if ((unsigned)c->mode > EVAL_MODE_TTT) return pg_fail(err, "", -1, "--mode: unknown mode");
  if (c->seq_len < 1 || c->seq_len > (uint32_t)l->cfg.seq_len)
    return pg_fail(err, "", -1, "--seq-len %u: must be in 1..%d (the model's sequence length)",
                   c->seq_len, l->cfg.seq_len);
  if (c->stride < 1 || c->stride > c->seq_len)
    return pg_fail(err, "", -1, "--stride %u: must be in 1..%u (the window length)", c->stride,
                   c->seq_len);
  if (c->mode == EVAL_MODE_PLAIN && c->stride != c->seq_len)
    return pg_fail(err, "", -1, "--stride: plain windows do not overlap (stride = seq_len)");
  if (c->batch_seqs < 1 || c->batch_seqs > 4096)
    return pg_fail(err, "", -1, "--batch %d: must be in 1..4096", c->batch_seqs);
  if (c->mode != EVAL_MODE_TTT) return 0;
  if (c->chunk < 1) return pg_fail(err, "", -1, "--chunk: must be at least 1");
  if (c->epochs < 0 || c->epochs > 1000)
    return pg_fail(err, "", -1, "--epochs %d: must be in 0..1000", c->epochs);
  if (!isfinite(c->lr) || c->lr < 0) return pg_fail(err, "", -1, "--lr: must be finite, >= 0");
  if (!(c->momentum >= 0 && c->momentum < 1))
    return pg_fail(err, "", -1, "--momentum: must be in [0, 1)");
  if (!isfinite(c->clip)) return pg_fail(err, "", -1, "--clip: must be finite");
  if (c->ttt_batch_seqs < 1 || c->ttt_batch_seqs > 4096)
    return pg_fail(err, "", -1, "--ttt-batch %d: must be in 1..4096", c->ttt_batch_seqs);
  return 0;
}

/* The probe positions: the given list, or n evenly spread over [1, n_tokens). */
static int make_probes(eval_session *s, pg_error *err) {
  const eval_config *c = &s->cfg;
  uint64_t targets = s->v->n_tokens - 1;
  size_t n = c->probe_at ? c->n_probe_at : c->n_probes;
  if (n > EVAL_MAX_PROBES) return pg_fail(err, "", -1, "--probes: at most %d", EVAL_MAX_PROBES);
  if (!c->probe_at && n > targets) n = (size_t)targets;
  if (n == 0) return 0;
  s->probes = malloc(n * sizeof *s->probes);
  if (!s->probes) return pg_fail(err, "", -1, "out of memory for %zu probes", n);
  for (size_t j = 0; j < n; j++) {
    uint64_t p = c->probe_at ? c->probe_at[j] : 1 + (uint64_t)((double)j * (double)targets / n);
    if (p < 1 || p > targets || (j > 0 && p <= s->probes[j - 1]))
      return pg_fail(err, "", -1, "probe position %llu: positions must increase within 1..%llu",
                     (unsigned long long)p, (unsigned long long)targets);
    s->probes[j] = p;
  }
  s->n_probes = n;
  return 0;
}

/* The host's buffers; the CPU's activations (with the GPU's trees when
 * gpu_trees) or, on the GPU, a row of logits for the probes. */
static int alloc_buffers(eval_session *s, pg_error *err) {
  const gpt_layout *l = s->l;
  const int ttt = s->cfg.mode == EVAL_MODE_TTT, cpu = !s->cfg.device_cuda;
  int B = s->cfg.batch_seqs;
  if (ttt && s->cfg.ttt_batch_seqs > B) B = s->cfg.ttt_batch_seqs;
  s->acts_B = B;
  if (cpu) {
    s->acts = gpt_acts_new(l, B, (int)s->cfg.seq_len, err);
    if (!s->acts) return -1;
    if (s->cfg.gpu_trees) gpt_acts_use_tree_refs(s->acts);
  } else {
    s->zrow = malloc((size_t)l->cfg.vocab_size * sizeof *s->zrow);
    if (!s->zrow) return pg_fail(err, "", -1, "evaluation: out of memory");
  }
  size_t cap = (size_t)B * s->cfg.seq_len;
  s->win = malloc((cap + 1) * sizeof *s->win);
  s->x = malloc(cap * sizeof *s->x);
  s->y = malloc(cap * sizeof *s->y);
  s->nll = malloc(cap * sizeof *s->nll);
  s->dist = malloc((size_t)l->cfg.vocab_size * sizeof *s->dist);
  s->flat = malloc(l->n_params * sizeof *s->flat);
  if (!s->win || !s->x || !s->y || !s->nll || !s->dist || !s->flat)
    return pg_fail(err, "", -1, "evaluation: out of memory");
  if (ttt && cpu) {
    s->grads = calloc(l->n_params, sizeof *s->grads);
    s->mom = calloc(l->n_params, sizeof *s->mom);
    if (!s->grads || !s->mom) return pg_fail(err, "", -1, "evaluation: out of memory");
    gpt_params_bind(&s->g, l, s->grads);
  }
  return 0;
}

int eval_session_open(eval_session *s, const eval_config *c, const val_data *v,
                      const byte_luts *luts, const gpt_layout *l, const float *flat,
                      const char *dump_path, pg_error *err) {
  memset(s, 0, sizeof *s);
  s->cfg = *c;
  s->v = v;
  s->luts = luts;
  s->l = l;
  eval_events_begin(&s->events, eval_mode_name(c->mode));
  if (eval_config_check(c, l, err)) return -1;
  if (v->vocab_size != (uint32_t)l->cfg.vocab_size)
    return pg_fail(err, "", -1, "evaluation: data checked for vocabulary %u, the model has %d",
                   v->vocab_size, l->cfg.vocab_size);
  if (v->seq_len != c->seq_len)
    return pg_fail(err, "", -1, "evaluation: stream truncated for %u, windows of %u", v->seq_len,
                   c->seq_len);
  if (alloc_buffers(s, err) || make_probes(s, err)) goto fail;
  memcpy(s->flat, flat, l->n_params * sizeof *flat);
  gpt_params_bind(&s->p, l, s->flat);
  if (c->device_cuda && eval_gpu_open(&s->gpu, l, s->acts_B, (int)c->seq_len, c->precision,
                                      c->mode == EVAL_MODE_TTT, s->flat, err))
    goto fail;
  if (dump_path && score_dump_writer_open(&s->dump, dump_path, (uint32_t)l->cfg.vocab_size,
                                          c->seq_len, err))
    goto fail;
  return 0;
fail:
  eval_session_close(s);
  return -1;
}

/* The dump records the chain head as the evaluation ended: it commits to
 * every SCORE and ADAPT event, so the audit can tell this evaluation's
 * event log from any other. */
int eval_session_finish(eval_session *s, pg_error *err) {
  if (!s->dump) return 0;
  score_dump_writer *w = s->dump;
  s->dump = NULL;
  return score_dump_writer_close(w, s->events.head, err);
}

void eval_session_close(eval_session *s) {
  score_dump_writer_abort(s->dump);
  eval_gpu_close(s->gpu);
  gpt_acts_free(s->acts);
  if (s->p.blocks) gpt_params_free(&s->p);
  if (s->g.blocks) gpt_params_free(&s->g);
  free(s->win), free(s->x), free(s->y), free(s->nll), free(s->dist), free(s->zrow);
  free(s->flat), free(s->grads), free(s->mom), free(s->probes);
  eval_events_free(&s->events);
  memset(s, 0, sizeof *s);
}

int eval_emit(eval_session *s, uint64_t position, uint32_t target, double nll, const double *dist,
              pg_error *err) {
  if (s->dump && score_dump_writer_add(s->dump, position, target, nll, err)) return -1;
  if (dist && s->dump && score_dump_writer_add_probe(s->dump, position, target, dist, err))
    return -1;
  s->nats += nll;
  s->range_nats += nll;
  s->tokens++;
  return 0;
}

int eval_is_probe(const eval_session *s, uint64_t position) {
  size_t lo = 0, hi = s->n_probes;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->probes[mid] < position) lo = mid + 1;
    else hi = mid;
  }
  return lo < s->n_probes && s->probes[lo] == position;
}

int eval_run_mode(eval_session *s, pg_error *err) {
  switch (s->cfg.mode) {
  case EVAL_MODE_PLAIN: return eval_plain(s, err);
  case EVAL_MODE_SLIDING: return eval_sliding(s, err);
  case EVAL_MODE_TTT: return eval_ttt(s, err);
  }
  return pg_fail(err, "", -1, "evaluation: unknown mode");
}
