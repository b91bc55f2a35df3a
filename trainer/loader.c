/* The official training loader (see loader.h). */
#include "trainer/loader.h"

#include <stdlib.h>
#include <string.h>

static void close_shards(token_loader *L, size_t n_open) {
  for (size_t i = 0; i < n_open; i++) shard_close(&L->shards[i]);
}

int loader_open_paths(token_loader *L, char *const *paths, size_t n, uint32_t vocab_size,
                      pg_error *err) {
  memset(L, 0, sizeof *L);
  if (n == 0) return pg_fail(err, "", -1, "loader: no shards given");
  L->paths = calloc(n, sizeof *L->paths);
  L->shards = calloc(n, sizeof *L->shards);
  if (!L->paths || !L->shards) {
    free(L->paths);
    free(L->shards);
    return pg_fail(err, "", -1, "loader: out of memory for %zu shards", n);
  }
  L->vocab_size = vocab_size;
  for (size_t i = 0; i < n; i++) {
    L->paths[i] = strdup(paths[i]);
    /* Headers and sizes only (vocab 0): ids are checked as they are taken,
     * so opening billions of tokens does not page them all in. */
    if (!L->paths[i] || shard_open(paths[i], 0, &L->shards[i], err)) {
      if (!L->paths[i]) pg_fail(err, paths[i], -1, "loader: out of memory");
      close_shards(L, i);
      L->n_shards = i + 1;
      shard_paths_free(L->paths, L->n_shards);
      free(L->shards);
      memset(L, 0, sizeof *L);
      return -1;
    }
    L->total_tokens += L->shards[i].n_tokens;
    L->n_shards = i + 1;
  }
  if (L->total_tokens == 0) {
    /* The official stream would loop forever looking for a token. */
    pg_fail(err, paths[0], -1, "loader: all %zu shards are empty", n);
    loader_close(L);
    return -1;
  }
  return 0;
}

int loader_open(token_loader *L, const char *dir, const char *prefix, uint32_t vocab_size,
                pg_error *err) {
  char **paths;
  size_t n;
  if (shard_glob(dir, prefix, &paths, &n, err)) return -1;
  int rc = loader_open_paths(L, paths, n, vocab_size, err);
  shard_paths_free(paths, n);
  return rc;
}

void loader_close(token_loader *L) {
  if (L->shards) close_shards(L, L->n_shards);
  if (L->paths) shard_paths_free(L->paths, L->n_shards);
  free(L->shards);
  memset(L, 0, sizeof *L);
}

/* Copy (or skip) k tokens of the current file at the current position. */
static int copy_run(token_loader *L, uint64_t k, uint16_t *out, pg_error *err) {
  const shard *s = &L->shards[L->st.file_idx];
  uint64_t p = L->st.pos;
  if (out) {
    for (uint64_t i = 0; i < k; i++) {
      uint16_t t = shard_token(s, p + i);
      if (L->vocab_size && t >= L->vocab_size)
        return pg_fail(err, L->paths[L->st.file_idx],
                       (long long)(SHARD_HEADER_BYTES + 2 * (p + i)),
                       "token %u at index %llu is not below the vocabulary size %u", t,
                       (unsigned long long)(p + i), L->vocab_size);
      out[i] = t;
    }
  }
  L->st.pos += k;
  L->st.consumed += k;
  return 0;
}

/* The official TokenStream.take: move to the next file (wrapping) only when
 * a token is needed and the current file has none left. */
int loader_take(token_loader *L, uint64_t n, uint16_t *out, pg_error *err) {
  loader_state saved = L->st;
  uint64_t done = 0;
  while (done < n) {
    uint64_t avail = L->shards[L->st.file_idx].n_tokens - L->st.pos;
    if (avail == 0) {
      L->st.file_idx = (L->st.file_idx + 1) % L->n_shards;
      L->st.pos = 0;
      continue;
    }
    uint64_t k = n - done < avail ? n - done : avail;
    if (copy_run(L, k, out ? out + done : NULL, err)) {
      L->st = saved;
      return -1;
    }
    done += k;
  }
  return 0;
}

int loader_batch_shape_for(uint64_t global_tokens, int seq_len, int grad_accum, int rank, int world,
                           loader_batch_shape *shape, pg_error *err) {
  if (world < 1) return pg_fail(err, "", -1, "loader: world size must be >= 1, got %d", world);
  if (rank < 0 || rank >= world)
    return pg_fail(err, "", -1, "loader: rank %d is outside world size %d", rank, world);
  if (grad_accum < 1)
    return pg_fail(err, "", -1, "loader: grad_accum_steps must be >= 1, got %d", grad_accum);
  if (seq_len < 1) return pg_fail(err, "", -1, "loader: seq_len must be >= 1, got %d", seq_len);
  /* Integer division, as the official loader (tokens beyond a multiple of
   * world*grad_accum are simply not used). */
  uint64_t local = global_tokens / ((uint64_t)world * (uint64_t)grad_accum);
  if (local == 0)
    return pg_fail(err, "", -1,
                   "loader: global batch of %llu tokens gives no tokens per rank and micro-step "
                   "(world %d x grad_accum %d)",
                   (unsigned long long)global_tokens, world, grad_accum);
  if (local % (uint64_t)seq_len)
    return pg_fail(err, "", -1,
                   "loader: tokens per rank and micro-step %llu = %llu / (world %d x grad_accum %d) "
                   "is not a multiple of seq_len %d",
                   (unsigned long long)local, (unsigned long long)global_tokens, world, grad_accum,
                   seq_len);
  if (local > (UINT64_MAX / 2) / (uint64_t)world)
    return pg_fail(err, "", -1, "loader: global batch of %llu tokens is too large",
                   (unsigned long long)global_tokens);
  shape->local_tokens = local;
  shape->rows = local / (uint64_t)seq_len;
  shape->chunk_tokens = (uint64_t)world * (local + 1);
  return 0;
}

int loader_next_batch(token_loader *L, uint64_t global_tokens, int seq_len, int grad_accum,
                      int rank, int world, uint16_t *x, uint16_t *y, pg_error *err) {
  loader_batch_shape sh;
  if (loader_batch_shape_for(global_tokens, seq_len, grad_accum, rank, world, &sh, err)) return -1;
  uint64_t span = sh.local_tokens + 1;
  loader_state saved = L->st;
  /* Skip the spans of the ranks before, read ours into x (whose last
   * token, the span's final one, is kept aside), skip the rest. */
  if (loader_take(L, (uint64_t)rank * span, NULL, err) ||
      loader_take(L, sh.local_tokens, x, err) || loader_take(L, 1, &y[sh.local_tokens - 1], err) ||
      loader_take(L, (uint64_t)(world - rank - 1) * span, NULL, err)) {
    L->st = saved;
    return -1;
  }
  /* y = span[1:] = x[1:] followed by the span's last token. */
  memmove(y, x + 1, (size_t)(sh.local_tokens - 1) * sizeof *y);
  return 0;
}

void loader_get_state(const token_loader *L, loader_state *s) { *s = L->st; }

int loader_set_state(token_loader *L, const loader_state *s, pg_error *err) {
  if (s->file_idx >= L->n_shards)
    return pg_fail(err, "", -1, "loader state: file index %llu, but only %zu shards are open",
                   (unsigned long long)s->file_idx, L->n_shards);
  const shard *f = &L->shards[s->file_idx];
  if (s->pos > f->n_tokens)
    return pg_fail(err, L->paths[s->file_idx], -1,
                   "loader state: position %llu is past the shard's %llu tokens",
                   (unsigned long long)s->pos, (unsigned long long)f->n_tokens);
  L->st = *s;
  return 0;
}
