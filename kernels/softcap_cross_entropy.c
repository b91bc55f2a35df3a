#include "kernels/softcap_cross_entropy.h"

#include "kernels/det_math.h"
#include "kernels/reduce_tree.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

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
      for (int i = 0; i < V; i++) tr[i] = softcap_u(zr[i], cap, inv_cap, flags);
      det_tanhf_array(tr, tr, (size_t)V);
      float m = -INFINITY;
      for (int i = 0; i < V; i++) {
        tr[i] = kernel_round(tr[i], flags);
        e[i] = softcap_logit(tr[i], cap, flags);
        if (e[i] > m) m = e[i];
      }
      det_expf_shift_array(e, e, m, (size_t)V);
      float s = 0.0f;
      for (int i = 0; i < V; i++) s += e[i];
      lse[r] = m + det_logf(s);
      row_nll[r] = lse[r] - softcap_logit(tr[y[r]], cap, flags);
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
      for (int i = 0; i < V; i++) e[i] = softcap_logit(tr[i], cap, flags);
      det_expf_shift_array(e, e, lse[r], (size_t)V);
      for (int i = 0; i < V; i++)
        kernel_store(&dr[i], softcap_dz(e[i], i == y[r], w, tr[i], cap, inv_cap, flags), flags);
    }
    free(e);
  }
}

/* One row by the GPU's method: the lanes' maxima and sums of
 * exp(logit - max), each combined by the tree. Returns nll. */
static float row_tree_ref(float *tr, float *lse, const float *zr, int yr, int V, float cap,
                          float inv_cap, int flags) {
  float p[TREE_LANES];
  for (int k = 0; k < TREE_LANES; k++) {
    float m = -INFINITY;
    for (int i = k; i < V; i += TREE_LANES) {
      tr[i] = softcap_th(softcap_u(zr[i], cap, inv_cap, flags), flags);
      m = tree_max2(m, softcap_logit(tr[i], cap, flags));
    }
    p[k] = m;
  }
  float m = tree_combine_max(p);
  for (int k = 0; k < TREE_LANES; k++) {
    float s = 0.0f;
    for (int i = k; i < V; i += TREE_LANES)
      s = s + det_expf_hd(softcap_logit(tr[i], cap, flags) - m);
    p[k] = s;
  }
  *lse = m + det_logf_hd(tree_combine(p));
  return *lse - softcap_logit(tr[yr], cap, flags);
}

float softcap_cross_entropy_forward_tree_ref(float *th, float *lse, float *nll, const float *z,
                                             const uint16_t *y, int N, int V, float cap,
                                             int flags) {
  const float inv_cap = 1.0f / cap;
  float *row_nll = malloc((size_t)N * sizeof *row_nll);
  if (!row_nll) abort();
#pragma omp parallel for schedule(static)
  for (int r = 0; r < N; r++)
    row_nll[r] =
        row_tree_ref(th + (size_t)r * V, &lse[r], z + (size_t)r * V, y[r], V, cap, inv_cap, flags);
  double p[TREE_LANES];
  for (int k = 0; k < TREE_LANES; k++) {
    double acc = 0.0;
    for (int r = k; r < N; r += TREE_LANES) acc = acc + (double)row_nll[r];
    p[k] = acc;
  }
  if (nll)
    for (int r = 0; r < N; r++) nll[r] = row_nll[r];
  free(row_nll);
  return (float)(tree_combine_f64(p) / N);
}
