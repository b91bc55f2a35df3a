/* Validation documents in training shards; see data_overlap.h. */
#include "formats/data_overlap.h"

#include <stdlib.h>
#include <string.h>

#include "formats/shard.h"

/* Two hashes of a document's tokens, fed one token at a time. */
typedef struct doc_hash {
  uint64_t a, b, len;
} doc_hash;

static void hash_start(doc_hash *h) { *h = (doc_hash){1469598103934665603ull, 0x243f6a8885a308d3ull, 0}; }

static void hash_add(doc_hash *h, uint16_t t) {
  h->a = (h->a ^ (t & 0xff)) * 1099511628211ull;
  h->a = (h->a ^ (t >> 8)) * 1099511628211ull;
  h->b = (h->b + t + 1) * 0x9e3779b97f4a7c15ull;
  h->b ^= h->b >> 29;
  h->len++;
}

/* ---- the validation table ---- */

typedef struct vslot {
  uint64_t a, b, len; /* len + 1, 0 = empty */
  size_t shard;
  uint64_t offset;
  int matched;
} vslot;

typedef struct vtable {
  vslot *s;
  size_t mask;
} vtable;

static vslot *lookup(const vtable *t, const doc_hash *h) {
  for (size_t i = (size_t)(h->a ^ h->b) & t->mask;; i = (i + 1) & t->mask) {
    vslot *s = &t->s[i];
    if (!s->len) return s;
    if (s->a == h->a && s->b == h->b && s->len == h->len + 1) return s;
  }
}

/* ---- streaming documents ---- */

/* The split's shards, opened one at a time (each is validated by
 * shard_open before a token is read). */
typedef struct stream {
  char **paths;
  size_t n;
  size_t cur;  /* index of the open shard */
  shard sh;
  int open;
} stream;

static int stream_open(stream *st, size_t i, pg_error *err) {
  if (st->open && st->cur == i) return 0;
  if (st->open) shard_close(&st->sh);
  st->open = 0;
  if (shard_open(st->paths[i], 0, &st->sh, err)) return -1;
  st->open = 1;
  st->cur = i;
  return 0;
}

static void stream_close(stream *st) {
  if (st->open) shard_close(&st->sh);
  st->open = 0;
}

/* One document as found: where its BOS is, and its hash. */
typedef struct doc {
  size_t shard;
  uint64_t offset;
  doc_hash h;
} doc;

/* Documents starting in shard `first` (with the head of the stream, before
 * any BOS, for shard 0), each followed to its end through later shards.
 * fn gets every document; returns -1 on a read error. */
typedef int (*doc_fn)(const doc *d, void *ctx);

static int docs_of_shard(char **paths, size_t n, size_t first, uint16_t bos, uint64_t *tokens,
                         doc_fn fn, void *ctx, pg_error *err) {
  stream st = {paths, n, 0, {{0, 0}, 0, 0, 0, NULL}, 0};
  *tokens = 0;
  if (stream_open(&st, first, err)) return -1;
  *tokens = st.sh.n_tokens;
  uint64_t i = 0, nt = st.sh.n_tokens;
  if (first > 0) /* the head belongs to the document the previous shard started */
    while (i < nt && shard_token(&st.sh, i) != bos) i++;
  int rc = 0;
  doc d = {first, i, {0, 0, 0}};
  int have = i < nt || first == 0;
  if (have) {
    hash_start(&d.h);
    if (i < nt && shard_token(&st.sh, i) == bos) i++;
    else if (first == 0) d.offset = 0; /* a stream that does not begin with BOS */
  }
  while (have && !rc) {
    /* Extend the current document to the next BOS, across shards. */
    for (;;) {
      while (i < st.sh.n_tokens) {
        uint16_t t = shard_token(&st.sh, i);
        if (t == bos) break;
        hash_add(&d.h, t);
        i++;
      }
      if (i < st.sh.n_tokens || st.cur + 1 >= n) break;
      if (stream_open(&st, st.cur + 1, err)) {
        rc = -1;
        break;
      }
      i = 0;
    }
    if (rc) break;
    rc = fn(&d, ctx);
    if (rc || st.cur != first || i >= st.sh.n_tokens) break; /* the next one starts in a later shard */
    d = (doc){first, i, {0, 0, 0}};
    hash_start(&d.h);
    i++;
  }
  stream_close(&st);
  return rc;
}

/* ---- validation side ---- */

typedef struct vctx {
  vtable t;
  size_t used;
  uint64_t min_tokens;
  overlap_report *r;
  const char *dir;
  pg_error *err;
} vctx;

static int add_val(const doc *d, void *p) {
  vctx *v = p;
  if (d->h.len < v->min_tokens) {
    v->r->val_short++;
    return 0;
  }
  v->r->val_docs++;
  vslot *s = lookup(&v->t, &d->h);
  if (s->len) return 0; /* the same document twice in validation: one entry */
  if (++v->used > OVERLAP_MAX_VAL_DOCS)
    return pg_fail(v->err, v->dir, -1, "more than %u distinct validation documents",
                   OVERLAP_MAX_VAL_DOCS);
  *s = (vslot){d->h.a, d->h.b, d->h.len + 1, d->shard, d->offset, 0};
  return 0;
}

/* A table twice the largest possible document count (tokens + shards),
 * capped at the bound. */
static int val_table(overlap_report *r, vctx *v, pg_error *err) {
  uint64_t tokens = 0;
  for (size_t i = 0; i < r->n_val; i++) {
    shard sh;
    if (shard_open(r->val_paths[i], 0, &sh, err)) return -1;
    tokens += sh.n_tokens;
    shard_close(&sh);
  }
  uint64_t want = tokens + r->n_val + 1;
  if (want > OVERLAP_MAX_VAL_DOCS) want = OVERLAP_MAX_VAL_DOCS;
  size_t cap = 1024;
  while (cap < 2 * want) cap *= 2;
  v->t.s = calloc(cap, sizeof *v->t.s);
  if (!v->t.s) return pg_fail(err, "validation", -1, "out of memory for %zu document slots", cap);
  v->t.mask = cap - 1;
  return 0;
}

/* ---- training side ---- */

typedef struct tctx {
  vtable *t;
  uint64_t min_tokens;
  uint64_t docs, shorts, matched_docs, new_val;
  overlap_match first[OVERLAP_SHOW];
  size_t n_first;
} tctx;

static int check_train(const doc *d, void *p) {
  tctx *c = p;
  if (d->h.len < c->min_tokens) {
    c->shorts++;
    return 0;
  }
  c->docs++;
  vslot *s = lookup(c->t, &d->h);
  if (!s->len) return 0;
  c->matched_docs++;
  int fresh = 0;
#pragma omp atomic capture
  fresh = s->matched++;
  c->new_val += fresh == 0;
  if (c->n_first < OVERLAP_SHOW)
    c->first[c->n_first++] = (overlap_match){s->shard, d->shard, s->offset, d->offset, d->h.len};
  return 0;
}

static int scan_train(overlap_report *r, vtable *t, uint16_t bos, uint64_t min_tokens, pg_error *err) {
  size_t n = r->n_train;
  tctx *c = calloc(n, sizeof *c);
  uint64_t *tokens = calloc(n, sizeof *tokens);
  pg_error *errs = calloc(n, sizeof *errs);
  int *rcs = calloc(n, sizeof *rcs);
  if (!c || !tokens || !errs || !rcs) {
    free(c), free(tokens), free(errs), free(rcs);
    return pg_fail(err, "training", -1, "out of memory");
  }
#pragma omp parallel for schedule(dynamic)
  for (size_t i = 0; i < n; i++) {
    c[i] = (tctx){.t = t, .min_tokens = min_tokens};
    rcs[i] = docs_of_shard(r->train_paths, n, i, bos, &tokens[i], check_train, &c[i], &errs[i]);
  }
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    if (rcs[i]) {
      *err = errs[i];
      rc = -1;
      break;
    }
    r->train_tokens += tokens[i];
    r->train_docs += c[i].docs;
    r->train_short += c[i].shorts;
    r->matched_train_docs += c[i].matched_docs;
    r->matched_val_docs += c[i].new_val;
    for (size_t k = 0; k < c[i].n_first && r->n_first < OVERLAP_SHOW; k++) r->first[r->n_first++] = c[i].first[k];
  }
  free(c), free(tokens), free(errs), free(rcs);
  return rc;
}

int data_overlap(const char *train_dir, const char *val_dir, uint16_t bos, uint64_t min_tokens,
                 overlap_report *r, pg_error *err) {
  memset(r, 0, sizeof *r);
  if (shard_glob(val_dir, "fineweb_val_", &r->val_paths, &r->n_val, err) ||
      shard_glob(train_dir, "fineweb_train_", &r->train_paths, &r->n_train, err)) {
    overlap_report_free(r);
    return -1;
  }
  vctx v = {.min_tokens = min_tokens, .r = r, .dir = val_dir, .err = err};
  int rc = val_table(r, &v, err);
  for (size_t i = 0; i < r->n_val && !rc; i++) {
    uint64_t tokens = 0;
    rc = docs_of_shard(r->val_paths, r->n_val, i, bos, &tokens, add_val, &v, err);
    r->val_tokens += tokens;
  }
  if (!rc) rc = scan_train(r, &v.t, bos, min_tokens, err);
  free(v.t.s);
  if (rc) overlap_report_free(r);
  return rc;
}

void overlap_report_free(overlap_report *r) {
  shard_paths_free(r->val_paths, r->n_val);
  shard_paths_free(r->train_paths, r->n_train);
  memset(r, 0, sizeof *r);
}
