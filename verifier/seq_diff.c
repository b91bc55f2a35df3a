/* Myers' diff; see seq_diff.h. */
#include "verifier/seq_diff.h"

#include <stdlib.h>
#include <string.h>

uint64_t seq_hash(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

/* One edit, forward order: from (x, y) one step right (delete a[x]) or
 * down (insert b[y]). */
typedef struct edit {
  size_t x, y;
} edit;

/* Group edits that touch into hunks. */
static int to_hunks(const edit *e, size_t ne, const uint8_t *del, diff_hunk **out, size_t *n) {
  *out = NULL;
  *n = 0;
  if (!ne) return 0;
  diff_hunk *h = malloc(ne * sizeof *h);
  if (!h) return -1;
  size_t k = 0;
  for (size_t i = 0; i < ne; i++) {
    size_t x1 = e[i].x + del[i], y1 = e[i].y + !del[i];
    if (k && h[k - 1].a1 == e[i].x && h[k - 1].b1 == e[i].y) {
      h[k - 1].a1 = x1;
      h[k - 1].b1 = y1;
    } else {
      h[k++] = (diff_hunk){e[i].x, x1, e[i].y, y1};
    }
  }
  *out = h;
  *n = k;
  return 0;
}

int seq_diff(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, size_t max_d,
             diff_hunk **hunks, size_t *n, size_t *d_out) {
  *hunks = NULL;
  *n = 0;
  size_t max = na + nb;
  if (max_d > max) max_d = max;
  /* trace[d] holds V[k] for k in [-d, d] after round d, at offset d*d. */
  size_t cap = (max_d + 1) * (max_d + 1);
  long *trace = malloc(cap * sizeof *trace);
  if (!trace) return -1;
  long dfound = -1;
  for (size_t d = 0; d <= max_d && dfound < 0; d++) {
    long *V = trace + d * d, *P = d ? trace + (d - 1) * (d - 1) : NULL;
    long D = (long)d;
    for (long k = -D; k <= D; k += 2) {
      long x;
      if (d == 0) x = 0;
      else if (k == -D || (k != D && P[k - 1 + (D - 1)] < P[k + 1 + (D - 1)])) x = P[k + 1 + (D - 1)];
      else x = P[k - 1 + (D - 1)] + 1;
      long y = x - k;
      while ((size_t)x < na && y >= 0 && (size_t)y < nb && a[x] == b[y]) x++, y++;
      V[k + D] = x;
      if ((size_t)x >= na && y >= 0 && (size_t)y >= nb) {
        dfound = D;
        break;
      }
    }
  }
  if (dfound < 0) {
    free(trace);
    *d_out = max_d + 1;
    return 1;
  }
  *d_out = (size_t)dfound;
  edit *e = malloc(((size_t)dfound + 1) * sizeof *e);
  uint8_t *del = malloc((size_t)dfound + 1);
  if (!e || !del) {
    free(e);
    free(del);
    free(trace);
    return -1;
  }
  long x = (long)na, y = (long)nb;
  for (long D = dfound; D > 0; D--) {
    const long *P = trace + (D - 1) * (D - 1);
    long k = x - y, pk;
    int ins = k == -D || (k != D && P[k - 1 + (D - 1)] < P[k + 1 + (D - 1)]);
    pk = ins ? k + 1 : k - 1;
    long px = P[pk + (D - 1)], py = px - pk;
    e[D - 1] = (edit){(size_t)px, (size_t)py};
    del[D - 1] = !ins;
    x = px;
    y = py;
  }
  free(trace);
  int rc = to_hunks(e, (size_t)dfound, del, hunks, n);
  free(e);
  free(del);
  return rc;
}
