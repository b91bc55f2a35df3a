#include "verifier/reproduction.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/grow.h"
#include "common/le.h"
#include "verifier/welch.h"

/* ---- the folder's digest ---- */

typedef struct path_list {
  char **v;
  size_t n, cap;
} path_list;

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Regular files under root/rel, recursively, as paths relative to root. */
static int walk(const char *root, const char *rel, path_list *out, int depth, pg_error *err) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s%s%s", root, *rel ? "/" : "", rel);
  if (depth > 16) return pg_fail(err, dir, -1, "folders nested more than 16 deep");
  DIR *d = opendir(dir);
  if (!d) return pg_fail_errno(err, dir, "cannot read the folder");
  struct dirent *e;
  int rc = 0;
  while (rc == 0 && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char sub[4096], full[8192];
    snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
    snprintf(full, sizeof full, "%s/%s", root, sub);
    struct stat st;
    if (lstat(full, &st) != 0) rc = pg_fail_errno(err, full, "cannot stat");
    else if (S_ISDIR(st.st_mode)) rc = walk(root, sub, out, depth + 1, err);
    else if (S_ISREG(st.st_mode)) {
      if (PG_GROW(out->v, out->cap, out->n + 1, 64) || !(out->v[out->n] = strdup(sub)))
        rc = pg_fail(err, full, -1, "out of memory");
      else out->n++;
    }
  }
  closedir(d);
  return rc;
}

/* SHA-256 over "hex  relpath\n" lines of the sorted files: what
 * `cd DIR && find . -type f | sort | xargs sha256sum | sha256sum` gives,
 * without the "./" prefixes. */
static int folder_digest(const char *dir, uint8_t out[SHA256_LEN], pg_error *err) {
  path_list l = {0};
  int rc = walk(dir, "", &l, 0, err);
  if (rc == 0 && l.n == 0) rc = pg_fail(err, dir, -1, "the folder has no files");
  if (l.n) qsort(l.v, l.n, sizeof *l.v, cmp_str);
  sha256_ctx *h = rc == 0 ? sha256_new() : NULL;
  if (rc == 0 && !h) rc = pg_fail(err, dir, -1, "out of memory");
  for (size_t i = 0; rc == 0 && i < l.n; i++) {
    char full[8192], hex[SHA256_HEX_LEN + 1], line[8400];
    uint8_t d[SHA256_LEN];
    snprintf(full, sizeof full, "%s/%s", dir, l.v[i]);
    if (sha256_file(full, d, NULL, err)) {
      rc = -1;
      break;
    }
    sha256_hex(d, hex);
    int len = snprintf(line, sizeof line, "%s  %s\n", hex, l.v[i]);
    sha256_update(h, line, (size_t)len);
  }
  if (rc == 0) sha256_final(h, out);
  sha256_free(h);
  for (size_t i = 0; i < l.n; i++) free(l.v[i]);
  free(l.v);
  return rc;
}

int fresh_seeds(const char *dir, const char *salt, int k, uint32_t *seeds,
                char digest_hex[SHA256_HEX_LEN + 1], pg_error *err) {
  if (k < 1 || k > FRESH_SEEDS_MAX)
    return pg_fail(err, "", -1, "fresh seeds: K must be in [1, %d]", FRESH_SEEDS_MAX);
  if (!salt || !*salt)
    return pg_fail(err, "", -1, "fresh seeds: a salt is required (the maintainer's, published "
                                "after the replay)");
  uint8_t digest[SHA256_LEN];
  if (folder_digest(dir, digest, err)) return -1;
  sha256_hex(digest, digest_hex);
  static const char tag[] = "pgolf-fresh-seed-v1";
  int have = 0;
  for (uint32_t j = 0; have < k; j++) {
    sha256_ctx *h = sha256_new();
    if (!h) return pg_fail(err, "", -1, "out of memory");
    uint8_t jb[4], d[SHA256_LEN];
    le_put_u32(jb, j);
    sha256_update(h, tag, sizeof tag - 1);
    sha256_update(h, digest, sizeof digest);
    sha256_update(h, salt, strlen(salt));
    sha256_update(h, jb, sizeof jb);
    sha256_final(h, d);
    sha256_free(h);
    uint32_t s = le_u32(d) & 0x7fffffffu;
    int dup = 0;
    for (int i = 0; i < have; i++) dup |= seeds[i] == s;
    if (!dup) seeds[have++] = s;
  }
  return 0;
}

/* ---- the gap ---- */

static double mean_of(const double *v, size_t n) {
  double s = 0.0;
  for (size_t i = 0; i < n; i++) s += v[i];
  return s / (double)n;
}

/* Negated copy, so a one-sample test can put either side first. */
static double *negated(const double *v, size_t n) {
  double *o = malloc(n * sizeof *o);
  for (size_t i = 0; o && i < n; i++) o[i] = -v[i];
  return o;
}

int reproduction_test(const double *claimed, size_t nc, const double *replayed, size_t nr,
                      double alpha, repro_result *out, pg_error *err) {
  memset(out, 0, sizeof *out);
  out->t = out->df = out->p = NAN;
  out->test = "none";
  if (nc < 1 || nr < 1) return pg_fail(err, "", -1, "reproduction: each side needs a run");
  if (!(alpha > 0.0 && alpha < 1.0)) return pg_fail(err, "", -1, "reproduction: alpha in (0, 1)");
  for (size_t i = 0; i < nc; i++)
    if (!isfinite(claimed[i])) return pg_fail(err, "claimed", -1, "value %zu is not finite", i + 1);
  for (size_t i = 0; i < nr; i++)
    if (!isfinite(replayed[i])) return pg_fail(err, "replayed", -1, "value %zu is not finite", i + 1);
  out->n_claimed = nc, out->n_replayed = nr;
  out->claimed_mean = mean_of(claimed, nc);
  out->replayed_mean = mean_of(replayed, nr);
  out->gap = out->replayed_mean - out->claimed_mean;
  if (nc == 1 && nr == 1) return 0;
  margin_test m;
  sample_summary a, b;
  pg_error e2;
  int rc;
  if (nc >= 2 && nr >= 2) {
    if (summarize_sample(claimed, nc, "claimed", &a, err) ||
        summarize_sample(replayed, nr, "replayed", &b, err))
      return -1;
    if (a.sd == 0 && b.sd == 0) return 0; /* no spread at all: no test */
    rc = welch_margin_test(a, b, 0.0, alpha, &m, &e2);
    out->test = "welch";
  } else if (nr == 1) {
    if (summarize_sample(claimed, nc, "claimed", &a, err)) return -1;
    if (a.sd == 0) return 0;
    rc = one_sample_margin_test(a, replayed[0], 0.0, alpha, &m, &e2);
    out->test = "one-sample";
  } else {
    double *neg = negated(replayed, nr);
    if (!neg) return pg_fail(err, "", -1, "out of memory");
    rc = summarize_sample(neg, nr, "replayed", &b, err);
    free(neg);
    if (rc) return -1;
    if (b.sd == 0) return 0;
    rc = one_sample_margin_test(b, -claimed[0], 0.0, alpha, &m, &e2);
    out->test = "one-sample";
  }
  if (rc) {
    *err = e2;
    return -1;
  }
  out->testable = 1;
  out->t = m.t, out->df = m.df, out->p = m.p_zero_margin;
  out->gap_significant = out->p < alpha;
  return 0;
}
