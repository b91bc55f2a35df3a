#include "kernels/softcap_cross_entropy.h"

#include "kernels/det_math.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

static float capped(float th, float cap, int flags) { return kernel_round(cap * th, flags); }

float softcap_cross_entropy_forward(float *th, float *lse, float *nll, const float *z,
                                    const uint16_t *y, int N, int V, float cap, int flags) {
  const float inv_cap = 1.0f / cap;
  float *row_nll = malloc((size_t)N * sizeof *row_nll);
  if (!row_nll) abort();
#pragma omp parallel
  {
    float *e = malloc((size_t)V * sizeof *e);
    if (!e) abort();
#pragma omp for schedule(static)
    for (int r = 0; r < N; r++) {
      const float *zr = z + (size_t)r * V;
      float *tr = th + (size_t)r * V;
      for (int i = 0; i < V; i++)
        tr[i] = (flags & KERNEL_BF16) ? bf16_round(zr[i] * inv_cap) : zr[i] / cap;
      det_tanhf_array(tr, tr, (size_t)V);
      float m = -INFINITY;
      for (int i = 0; i < V; i++) {
        tr[i] = kernel_round(tr[i], flags);
        e[i] = capped(tr[i], cap, flags);
        if (e[i] > m) m = e[i];
      }
      det_expf_shift_array(e, e, m, (size_t)V);
      float s = 0.0f;
      for (int i = 0; i < V; i++) s += e[i];
      lse[r] = m + det_logf(s);
      row_nll[r] = lse[r] - capped(tr[y[r]], cap, flags);
    }
    free(e);
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
#pragma omp parallel
  {
    float *e = malloc((size_t)V * sizeof *e);
    if (!e) abort();
#pragma omp for schedule(static)
    for (int r = 0; r < N; r++) {
      const float *tr = th + (size_t)r * V;
      float *dr = dz + (size_t)r * V;
      for (int i = 0; i < V; i++) e[i] = capped(tr[i], cap, flags);
      det_expf_shift_array(e, e, lse[r], (size_t)V);
      for (int i = 0; i < V; i++) {
        float p = e[i];
        float dl = kernel_round(i == y[r] ? p * w - w : p * w, flags);
        float dth = kernel_round(dl * cap, flags);
        float du = kernel_round(dth * (1.0f - tr[i] * tr[i]), flags);
        float d = (flags & KERNEL_BF16) ? du * inv_cap : du / cap;
        kernel_store(&dr[i], d, flags);
      }
    }
    free(e);
  }
}
