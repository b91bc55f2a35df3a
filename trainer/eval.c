/* Validation loss and bits per byte over the whole split (see eval.h). */
#include "trainer/eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trainer/byte_accounting.h"

int val_data_open_paths(val_data *v, char *const *paths, size_t n, uint32_t seq_len,
                        uint32_t vocab_size, pg_error *err) {
  memset(v, 0, sizeof *v);
  if (n == 0) return pg_fail(err, "", -1, "validation: no shards given");
  if (seq_len < 1) return pg_fail(err, "", -1, "validation: seq_len must be >= 1");
  v->paths = calloc(n, sizeof *v->paths);
  v->shards = calloc(n, sizeof *v->shards);
  v->starts = calloc(n, sizeof *v->starts);
  v->seq_len = seq_len;
  v->vocab_size = vocab_size;
  if (!v->paths || !v->shards || !v->starts) {
    val_data_close(v);
    return pg_fail(err, "", -1, "validation: out of memory for %zu shards", n);
  }
  for (size_t i = 0; i < n; i++) {
    v->paths[i] = strdup(paths[i]);
    if (!v->paths[i]) {
      v->n_shards = i;
      val_data_close(v);
      return pg_fail(err, paths[i], -1, "out of memory");
    }
    /* headers only: ids are checked as they are read */
    if (shard_open(paths[i], 0, &v->shards[i], err)) {
      free(v->paths[i]);
      v->n_shards = i;
      val_data_close(v);
      return -1;
    }
    v->n_shards = i + 1;
    v->starts[i] = v->n_all;
    v->n_all += v->shards[i].n_tokens;
  }
  uint64_t targets = scored_targets(v->n_all, seq_len);
  if (targets == 0) {
    pg_fail(err, paths[0], -1,
            "validation split of %llu tokens is too short for sequences of %u",
            (unsigned long long)v->n_all, seq_len);
    val_data_close(v);
    return -1;
  }
  v->n_tokens = targets + 1;
  return 0;
}

int val_data_open(val_data *v, const char *dir, const char *prefix, uint32_t seq_len,
                  uint32_t vocab_size, pg_error *err) {
  char **paths;
  size_t n;
  if (shard_glob(dir, prefix, &paths, &n, err)) return -1;
  int rc = val_data_open_paths(v, paths, n, seq_len, vocab_size, err);
  shard_paths_free(paths, n);
  return rc;
}

void val_data_close(val_data *v) {
  for (size_t i = 0; i < v->n_shards; i++) shard_close(&v->shards[i]);
  if (v->paths) shard_paths_free(v->paths, v->n_shards);
  free(v->shards);
  free(v->starts);
  memset(v, 0, sizeof *v);
}

/* The shard holding stream index i (the last whose start is <= i). */
static size_t shard_of(const val_data *v, uint64_t i) {
  size_t lo = 0, hi = v->n_shards;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (v->starts[mid] <= i) lo = mid;
    else hi = mid;
  }
  return lo;
}

int val_data_copy(const val_data *v, uint64_t start, uint64_t n, uint16_t *out, pg_error *err) {
  if (start > v->n_all || n > v->n_all - start)
    return pg_fail(err, "", -1, "validation: tokens [%llu, %llu) are outside the %llu-token stream",
                   (unsigned long long)start, (unsigned long long)(start + n),
                   (unsigned long long)v->n_all);
  uint64_t done = 0;
  size_t f = n ? shard_of(v, start) : 0;
  while (done < n) {
    const shard *s = &v->shards[f];
    uint64_t pos = start + done - v->starts[f];
    if (pos >= s->n_tokens) { /* this shard is used up (or empty) */
      f++;
      continue;
    }
    uint64_t k = s->n_tokens - pos < n - done ? s->n_tokens - pos : n - done;
    for (uint64_t j = 0; j < k; j++) {
      uint16_t t = shard_token(s, pos + j);
      if (v->vocab_size && t >= v->vocab_size)
        return pg_fail(err, v->paths[f], (long long)(SHARD_HEADER_BYTES + 2 * (pos + j)),
                       "token %u at index %llu is not below the vocabulary size %u", t,
                       (unsigned long long)(pos + j), v->vocab_size);
      out[done + j] = t;
    }
    done += k;
  }
  return 0;
}

/* Bytes of the targets t[first+1 .. first+count] given window w = t[first ..]. */
static int window_bytes(const byte_luts *luts, const uint16_t *w, uint64_t count, uint64_t *bytes,
                        pg_error *err) {
  for (uint64_t i = 0; i < count; i++) {
    if (w[i] >= luts->vocab_size || w[i + 1] >= luts->vocab_size)
      return pg_fail(err, "", -1, "token %u is outside the tokenizer's %u-entry byte tables",
                     w[i] >= luts->vocab_size ? w[i] : w[i + 1], luts->vocab_size);
    *bytes += target_bytes(luts, w[i], w[i + 1]);
  }
  return 0;
}

/* Chunks of the stream read at once when no model runs. */
#define BYTES_CHUNK (1u << 20)

int val_data_bytes(const val_data *v, const byte_luts *luts, uint64_t *bytes, pg_error *err) {
  uint16_t *w = malloc((BYTES_CHUNK + 1) * sizeof *w);
  if (!w) return pg_fail(err, "", -1, "out of memory");
  uint64_t total = 0, targets = v->n_tokens - 1;
  for (uint64_t s = 0; s < targets; s += BYTES_CHUNK) {
    uint64_t k = targets - s < BYTES_CHUNK ? targets - s : BYTES_CHUNK;
    if (val_data_copy(v, s, k + 1, w, err) || window_bytes(luts, w, k, &total, err)) {
      free(w);
      return -1;
    }
  }
  free(w);
  *bytes = total;
  return 0;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One forward pass over sequences [s0, s0 + b): fills x, y, nll; adds the
 * nats in token order and the bytes. */
static int eval_batch(const val_data *v, const byte_luts *luts, const gpt_layout *l,
                      const gpt_params *p, gpt_acts *acts, const eval_opts *o, uint64_t s0, int b,
                      uint16_t *win, uint16_t *x, uint16_t *y, float *nll, eval_result *r,
                      pg_error *err) {
  const uint64_t T = v->seq_len, span = (uint64_t)b * T;
  if (val_data_copy(v, s0 * T, span + 1, win, err)) return -1;
  if (window_bytes(luts, win, span, &r->bytes, err)) return -1;
  for (int s = 0; s < b; s++) {
    memcpy(x + (size_t)s * T, win + (size_t)s * T, T * sizeof *x);
    memcpy(y + (size_t)s * T, win + (size_t)s * T + 1, T * sizeof *y);
  }
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
  r->seconds = now_seconds() - t0;
  r->sequences = n_seq;
  r->tokens = n_seq * T;
  memcpy(&r->loss_sum_bits, &r->loss_sum, sizeof r->loss_sum_bits);
  r->val_loss = r->loss_sum / (double)r->tokens;
  r->val_bpb = bpb_from_nats(r->loss_sum, r->bytes);
  r->tokens_per_second = r->seconds > 0 ? (double)r->tokens / r->seconds : 0.0;
  rc = 0;
done:
  free(win), free(x), free(y), free(nll);
  gpt_acts_free(acts);
  return rc;
}
