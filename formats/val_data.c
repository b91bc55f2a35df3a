/* The validation stream (see val_data.h). */
#include "formats/val_data.h"

#include <stdlib.h>
#include <string.h>

#include "formats/byte_accounting.h"

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

int val_window_bytes(const byte_luts *luts, const uint16_t *w, uint64_t count, uint64_t *bytes,
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
    if (val_data_copy(v, s, k + 1, w, err) || val_window_bytes(luts, w, k, &total, err)) {
      free(w);
      return -1;
    }
  }
  free(w);
  *bytes = total;
  return 0;
}
