#include "kernels/embedding.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void embedding_forward(float *y, const float *table, const uint16_t *ids, int n, int d) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < n; r++) memcpy(y + (size_t)r * d, table + (size_t)ids[r] * d, (size_t)d * sizeof *y);
}

void embedding_backward(float *dtable, const float *dy, const uint16_t *ids, int n, int vocab,
                        int d, int flags) {
  /* start[v] .. start[v+1]: the positions n with ids[n] == v, ascending. */
  int *start = calloc((size_t)vocab + 1, sizeof *start);
  int *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
  if (!start || !order) abort();
  for (int r = 0; r < n; r++) start[ids[r] + 1]++;
  for (int v = 0; v < vocab; v++) start[v + 1] += start[v];
  int *fill = malloc((size_t)vocab * sizeof *fill);
  if (!fill) abort();
  memcpy(fill, start, (size_t)vocab * sizeof *fill);
  for (int r = 0; r < n; r++) order[fill[ids[r]]++] = r;
  free(fill);
#pragma omp parallel
  {
    float *acc = malloc((size_t)d * sizeof *acc);
    if (!acc) abort();
#pragma omp for schedule(static)
    for (int v = 0; v < vocab; v++) {
      float *out = dtable + (size_t)v * d;
      if (start[v] == start[v + 1]) {
        if (!(flags & KERNEL_ACCUMULATE)) memset(out, 0, (size_t)d * sizeof *out);
        continue;
      }
      for (int j = 0; j < d; j++) acc[j] = 0.0f;
      for (int k = start[v]; k < start[v + 1]; k++) {
        const float *g = dy + (size_t)order[k] * d;
        for (int j = 0; j < d; j++) acc[j] += g[j];
      }
      for (int j = 0; j < d; j++) kernel_store(&out[j], acc[j], flags);
    }
    free(acc);
  }
  free(start);
  free(order);
}

void embedding_backward_tree_ref(float *dtable, const float *dy, const uint16_t *ids, int n,
                                 int vocab, int d, int flags) {
  for (int v = 0; v < vocab; v++)
    for (int j = 0; j < d; j++) {
      float acc = 0.0f;
      int found = 0;
      for (int r = 0; r < n; r++)
        if (ids[r] == v) acc = acc + dy[(size_t)r * d + j], found = 1;
      float *out = &dtable[(size_t)v * d + j];
      if (found)
        kernel_store(out, acc, flags);
      else if (!(flags & KERNEL_ACCUMULATE))
        *out = 0.0f;
    }
}
