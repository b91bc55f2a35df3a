#include "kernels/softcap_cross_entropy.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

static float capped(float th, float cap, int flags) { return kernel_round(cap * th, flags); }

float softcap_cross_entropy_forward(float *th, float *lse, float *nll, const float *z,
                                    const uint16_t *y, int N, int V, float cap, int flags) {
  const float inv_cap = 1.0f / cap;
  float *row_nll = malloc((size_t)N * sizeof *row_nll);
  if (!row_nll) abort();
#pragma omp parallel for schedule(static)
  for (int r = 0; r < N; r++) {
    const float *zr = z + (size_t)r * V;
    float *tr = th + (size_t)r * V;
    float m = -INFINITY;
    for (int i = 0; i < V; i++) {
      float u = (flags & KERNEL_BF16) ? bf16_round(zr[i] * inv_cap) : zr[i] / cap;
      tr[i] = kernel_round(tanhf(u), flags);
      float l = capped(tr[i], cap, flags);
      if (l > m) m = l;
    }
    float s = 0.0f;
    for (int i = 0; i < V; i++) s += expf(capped(tr[i], cap, flags) - m);
    lse[r] = m + logf(s);
    row_nll[r] = lse[r] - capped(tr[y[r]], cap, flags);
  }
  double sum = 0.0;
  for (int r = 0; r < N; r++) sum += row_nll[r];
  if (nll)
    for (int r = 0; r < N; r++) nll[r] = row_nll[r];
  free(row_nll);
  return (float)(sum / N);
}

void softcap_cross_entropy_backward(float *dz, const float *th, const float *lse,
                                    const uint16_t *y, int N, int V, float cap, float g,
                                    int flags) {
  const float w = g / (float)N, inv_cap = 1.0f / cap;
#pragma omp parallel for schedule(static)
  for (int r = 0; r < N; r++) {
    const float *tr = th + (size_t)r * V;
    float *dr = dz + (size_t)r * V;
    for (int i = 0; i < V; i++) {
      float p = expf(capped(tr[i], cap, flags) - lse[r]);
      float dl = kernel_round(i == y[r] ? p * w - w : p * w, flags);
      float dth = kernel_round(dl * cap, flags);
      float du = kernel_round(dth * (1.0f - tr[i] * tr[i]), flags);
      float d = (flags & KERNEL_BF16) ? du * inv_cap : du / cap;
      kernel_store(&dr[i], d, flags);
    }
  }
}
