/* The perturbation test (see audit_perturb.h): the replacement stream,
 * the perturbed copies of the split, the runs and their comparison. */
#include "verifier/audit_perturb.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/shard.h"
#include "verifier/audit.h"
#include "manifests/score_dump.h"

uint64_t perturb_splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint16_t perturb_token(uint16_t t, uint64_t i, uint32_t vocab_size) {
  uint64_t x = perturb_splitmix64(PERTURB_SEED + i);
  return (uint16_t)(((uint64_t)t % vocab_size + 1 + x % (vocab_size - 1)) % vocab_size);
}

const char *perturb_status_name(perturb_status s) {
  switch (s) {
  case PERTURB_PASS: return "pass";
  case PERTURB_MOVED: return "moved";
  case PERTURB_INCONCLUSIVE: return "inconclusive";
  }
  return "?";
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

size_t perturb_choose_cuts(uint64_t n_tokens, uint64_t chunk, uint64_t *cuts) {
  uint64_t c[4];
  size_t m = 0;
  if (chunk > 0) {
    uint64_t K = (n_tokens - 1 + chunk - 1) / chunk;
    c[m++] = 1 + chunk;                     /* first position of the second chunk */
    c[m++] = 1 + (K > 0 ? K - 1 : 0) * chunk; /* first position of the last chunk */
    c[m++] = 1 + chunk / 2;                 /* inside the first chunk */
    c[m++] = 1 + (K / 2) * chunk + chunk / 2; /* inside a middle chunk */
  } else {
    for (int q = 1; q <= 3; q++) c[m++] = 1 + (uint64_t)q * (n_tokens - 1) / 4;
  }
  qsort(c, m, sizeof *c, cmp_u64);
  size_t n = 0;
  for (size_t i = 0; i < m; i++)
    if (c[i] >= 2 && c[i] < n_tokens && (n == 0 || cuts[n - 1] != c[i])) cuts[n++] = c[i];
  return n;
}

/* ---- the perturbed copy ---- */

static int join(char *out, size_t cap, const char *dir, const char *name) {
  return snprintf(out, cap, "%s/%s", dir, name) >= (int)cap ? -1 : 0;
}

static int is_listed(char *const *paths, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++) {
    const char *b = strrchr(paths[i], '/');
    if (!strcmp(b ? b + 1 : paths[i], name)) return 1;
  }
  return 0;
}

/* Link every entry of data_dir that is not a validation shard. */
static int link_others(const char *data_dir, const char *out_dir, char *const *val, size_t n_val,
                       pg_error *err) {
  DIR *d = opendir(data_dir);
  if (!d) return pg_fail_errno(err, data_dir, "cannot list");
  char abs_dir[4096];
  if (!realpath(data_dir, abs_dir)) {
    closedir(d);
    return pg_fail_errno(err, data_dir, "cannot resolve");
  }
  int rc = 0;
  struct dirent *e;
  while (!rc && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || is_listed(val, n_val, e->d_name))
      continue;
    char from[4096], to[4096];
    if (join(from, sizeof from, abs_dir, e->d_name) || join(to, sizeof to, out_dir, e->d_name))
      rc = pg_fail(err, data_dir, -1, "path too long: %s", e->d_name);
    else if (symlink(from, to))
      rc = pg_fail_errno(err, to, "cannot link");
  }
  closedir(d);
  return rc;
}

/* One shard, its tokens from stream index *index on, replaced past cut. */
static int write_shard(const char *path, const char *out_dir, uint64_t cut, uint32_t V,
                       uint64_t *index, pg_error *err) {
  shard s;
  if (shard_open(path, 0, &s, err)) return -1;
  const char *b = strrchr(path, '/');
  char to[4096];
  if (join(to, sizeof to, out_dir, b ? b + 1 : path)) {
    shard_close(&s);
    return pg_fail(err, path, -1, "path too long");
  }
  size_t len = SHARD_HEADER_BYTES + 2 * (size_t)s.n_tokens;
  uint8_t *buf = malloc(len ? len : 1);
  if (!buf) {
    shard_close(&s);
    return pg_fail(err, path, -1, "out of memory for a copy of %zu bytes", len);
  }
  memcpy(buf, s.map.data, SHARD_HEADER_BYTES);
  for (uint64_t i = 0; i < s.n_tokens; i++) {
    uint16_t t = shard_token(&s, i);
    if (*index + i >= cut) t = perturb_token(t, *index + i, V);
    buf[SHARD_HEADER_BYTES + 2 * i] = (uint8_t)t;
    buf[SHARD_HEADER_BYTES + 2 * i + 1] = (uint8_t)(t >> 8);
  }
  *index += s.n_tokens;
  shard_close(&s);
  FILE *f = fopen(to, "wb");
  int ok = f && fwrite(buf, 1, len, f) == len;
  if (f && fclose(f)) ok = 0;
  free(buf);
  return ok ? 0 : pg_fail_errno(err, to, "cannot write");
}

int perturb_write_copy(const char *data_dir, const char *out_dir, uint64_t cut,
                       uint32_t vocab_size, pg_error *err) {
  if (vocab_size < 2) return pg_fail(err, "", -1, "perturb: vocabulary of %u ids", vocab_size);
  char **val;
  size_t n;
  if (shard_glob(data_dir, "fineweb_val_", &val, &n, err)) return -1;
  int rc = 0;
  if (mkdir(out_dir, 0755)) rc = pg_fail_errno(err, out_dir, "cannot create");
  if (!rc) rc = link_others(data_dir, out_dir, val, n, err);
  uint64_t index = 0;
  for (size_t i = 0; i < n && !rc; i++) rc = write_shard(val[i], out_dir, cut, vocab_size, &index, err);
  shard_paths_free(val, n);
  return rc;
}

static int stream_length(const char *data_dir, uint64_t *n_tokens, pg_error *err) {
  char **val;
  size_t n;
  if (shard_glob(data_dir, "fineweb_val_", &val, &n, err)) return -1;
  uint64_t total = 0;
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    shard s;
    rc = shard_open(val[i], 0, &s, err);
    if (!rc) total += s.n_tokens, shard_close(&s);
  }
  shard_paths_free(val, n);
  *n_tokens = total;
  return rc;
}

/* ---- comparison ---- */

static int same_value(double a, double b, double tol) {
  if (tol > 0) return fabs(a - b) <= tol;
  return memcmp(&a, &b, sizeof a) == 0;
}

/* Records before the cut must agree; count what moved at or after it. */
static void compare_records(const audit_index *A, const audit_index *B, double tol,
                            perturb_cut *c) {
  uint64_t i = 0, j = 0;
  while (i < A->n || j < B->n) {
    uint64_t pa = i < A->n ? audit_index_record(A, i, NULL).position : UINT64_MAX;
    uint64_t pb = j < B->n ? audit_index_record(B, j, NULL).position : UINT64_MAX;
    uint64_t p = pa < pb ? pa : pb;
    int moved;
    if (pa != pb) {
      moved = 1; /* present in one dump only */
      if (pa < pb) i++;
      else j++;
    } else {
      double a = audit_index_record(A, i, NULL).nll, b = audit_index_record(B, j, NULL).nll;
      moved = !same_value(a, b, tol);
      if (p < c->cut) {
        c->compared++;
        if (fabs(a - b) > c->max_abs_diff) c->max_abs_diff = fabs(a - b);
      }
      i++, j++;
    }
    if (!moved) continue;
    if (p < c->cut) {
      if (c->first_moved < 0) c->first_moved = (int64_t)p;
    } else {
      c->moved_after++;
    }
  }
}

static const score_probe *find_probe(const score_dump *d, uint64_t position, score_probe *tmp) {
  for (uint64_t j = 0; j < d->n_probes; j++) {
    *tmp = score_dump_probe(d, j);
    if (tmp->position == position) return tmp;
  }
  return NULL;
}

/* Probes at or before the cut must hold the same distribution. */
static void compare_probes(const score_dump *a, const score_dump *b, double tol, perturb_cut *c) {
  for (uint64_t j = 0; j < a->n_probes; j++) {
    score_probe pa = score_dump_probe(a, j), tmp;
    if (pa.position > c->cut) continue;
    const score_probe *pb = find_probe(b, pa.position, &tmp);
    c->probes_compared++;
    int moved = !pb || pb->vocab_size != pa.vocab_size;
    for (uint32_t v = 0; !moved && v < pa.vocab_size; v++)
      moved = !same_value(score_probe_prob(&pa, v), score_probe_prob(pb, v), tol);
    if (moved && (c->probe_moved < 0 || (int64_t)pa.position < c->probe_moved))
      c->probe_moved = (int64_t)pa.position;
  }
}

static void judge(perturb_cut *c) {
  if (c->first_moved >= 0 || c->probe_moved >= 0) {
    c->status = PERTURB_MOVED;
    if (c->first_moved >= 0 && (c->probe_moved < 0 || c->first_moved <= c->probe_moved))
      snprintf(c->why, sizeof c->why,
               "the nll at position %lld moved when only tokens from %llu on changed",
               (long long)c->first_moved, (unsigned long long)c->cut);
    else
      snprintf(c->why, sizeof c->why,
               "the distribution at position %lld moved when only tokens from %llu on changed",
               (long long)c->probe_moved, (unsigned long long)c->cut);
  } else if (c->moved_after == 0) {
    c->status = PERTURB_INCONCLUSIVE;
    snprintf(c->why, sizeof c->why,
             "nothing moved at or after %llu: the evaluator did not read the perturbed split",
             (unsigned long long)c->cut);
  } else {
    c->status = PERTURB_PASS;
    snprintf(c->why, sizeof c->why,
             "%llu records before %llu and %llu probes up to it unchanged; %llu records after it moved",
             (unsigned long long)c->compared, (unsigned long long)c->cut,
             (unsigned long long)c->probes_compared, (unsigned long long)c->moved_after);
  }
}

static int compare_dumps(const char *base, const char *pert, double tol, perturb_cut *c,
                         pg_error *err) {
  score_dump a, b;
  if (score_dump_open(base, &a, err)) return -1;
  if (score_dump_open(pert, &b, err)) {
    score_dump_close(&a);
    return -1;
  }
  audit_index ia, ib;
  int rc = 0;
  if (audit_index_build(&a, &ia)) {
    rc = pg_fail(err, base, -1, "out of memory");
  } else if (audit_index_build(&b, &ib)) {
    audit_index_free(&ia);
    rc = pg_fail(err, pert, -1, "out of memory");
  } else {
    c->first_moved = c->probe_moved = -1;
    compare_records(&ia, &ib, tol, c);
    compare_probes(&a, &b, tol, c);
    judge(c);
    audit_index_free(&ia);
    audit_index_free(&ib);
  }
  score_dump_close(&a);
  score_dump_close(&b);
  return rc;
}

/* ---- the runs ---- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

static int dump_vocab(const char *path, uint32_t *V, pg_error *err) {
  score_dump d;
  if (score_dump_open(path, &d, err)) return -1;
  *V = d.vocab_size;
  score_dump_close(&d);
  return 0;
}

int perturb_run(const perturb_opts *o, perturb_eval_fn eval, void *ctx, perturb_report *r,
                pg_error *err) {
  memset(r, 0, sizeof *r);
  if (stream_length(o->data_dir, &r->n_tokens, err)) return -1;
  uint64_t cuts[PERTURB_MAX_CUTS];
  size_t n = o->cuts ? o->n_cuts : perturb_choose_cuts(r->n_tokens, o->chunk, cuts);
  if (o->cuts) {
    if (n == 0 || n > PERTURB_MAX_CUTS) return pg_fail(err, "", -1, "perturb: 1..%d cuts", PERTURB_MAX_CUTS);
    memcpy(cuts, o->cuts, n * sizeof *cuts);
    qsort(cuts, n, sizeof *cuts, cmp_u64);
  }
  for (size_t i = 0; i < n; i++)
    if (cuts[i] < 2 || cuts[i] >= r->n_tokens || (i > 0 && cuts[i] == cuts[i - 1]))
      return pg_fail(err, "", -1, "perturb: cut %llu: cuts must be distinct, in 2..%llu",
                     (unsigned long long)cuts[i], (unsigned long long)(r->n_tokens - 1));
  if (n == 0) return pg_fail(err, o->data_dir, -1, "perturb: the split is too short to cut");
  char tmpl[4096], path[4200], dir[4200], base[4200];
  if (o->scratch) snprintf(tmpl, sizeof tmpl, "%s", o->scratch);
  else {
    const char *t = getenv("TMPDIR");
    snprintf(tmpl, sizeof tmpl, "%s/pgolf-perturb.XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(tmpl)) return pg_fail_errno(err, tmpl, "cannot create a scratch directory");
  }
  int rc = 0;
  snprintf(base, sizeof base, "%s/base.pgsd", tmpl);
  rc = eval(ctx, o->data_dir, base, cuts, n, err);
  r->runs = 1;
  if (!rc) rc = dump_vocab(base, &r->vocab_size, err);
  for (size_t i = 0; i < n && !rc; i++) {
    perturb_cut *c = &r->cuts[i];
    c->cut = cuts[i];
    snprintf(dir, sizeof dir, "%s/cut_%llu", tmpl, (unsigned long long)cuts[i]);
    snprintf(path, sizeof path, "%s/cut_%llu.pgsd", tmpl, (unsigned long long)cuts[i]);
    rc = perturb_write_copy(o->data_dir, dir, cuts[i], r->vocab_size, err);
    if (!rc) rc = eval(ctx, dir, path, cuts, n, err);
    r->runs++;
    if (!rc) rc = compare_dumps(base, path, o->tolerance, c, err);
    r->n_cuts = i + 1;
  }
  if (!o->keep && !o->scratch) nftw(tmpl, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  if (rc) return -1;
  int failed = 0;
  for (size_t i = 0; i < r->n_cuts; i++) failed += r->cuts[i].status != PERTURB_PASS;
  return failed;
}
