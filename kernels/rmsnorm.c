#include "kernels/rmsnorm.h"

#include <stddef.h>

#include "kernels/reduce_tree.h"

void rmsnorm_forward(float *y, float *rstd, const float *x, int rows, int d, int flags) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++) {
    const float *xr = x + (size_t)r * d;
    float ss = 0.0f;
    for (int j = 0; j < d; j++) ss += xr[j] * xr[j];
    float s = rmsnorm_rstd(ss, d);
    rstd[r] = s;
    float *yr = y + (size_t)r * d;
    for (int j = 0; j < d; j++) yr[j] = kernel_round_out(xr[j] * s, flags);
  }
}

void rmsnorm_backward(float *dx, const float *dy, const float *x, const float *rstd, int rows,
                      int d, int flags) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++) {
    const float *xr = x + (size_t)r * d, *gr = dy + (size_t)r * d;
    float dot = 0.0f;
    for (int j = 0; j < d; j++) dot += gr[j] * xr[j];
    float s = rstd[r];
    float c = rmsnorm_grad_coef(s, dot, d);
    float *dr = dx + (size_t)r * d;
    for (int j = 0; j < d; j++) kernel_store(&dr[j], rmsnorm_dx(s, gr[j], xr[j], c), flags);
  }
}

/* Lane partials of the tree (reduce_tree.h, step 1) for sum_j a[j] * b[j]. */
static float tree_dot(const float *a, const float *b, int d) {
  float p[TREE_LANES];
  for (int k = 0; k < TREE_LANES; k++) {
    float acc = 0.0f;
    for (int j = k; j < d; j += TREE_LANES) acc = acc + a[j] * b[j];
    p[k] = acc;
  }
  return tree_combine(p);
}

void rmsnorm_forward_tree_ref(float *y, float *rstd, const float *x, int rows, int d, int flags) {
  for (int r = 0; r < rows; r++) {
    const float *xr = x + (size_t)r * d;
    float s = rmsnorm_rstd(tree_dot(xr, xr, d), d);
    rstd[r] = s;
    float *yr = y + (size_t)r * d;
    for (int j = 0; j < d; j++) yr[j] = kernel_round_out(xr[j] * s, flags);
  }
}

void rmsnorm_backward_tree_ref(float *dx, const float *dy, const float *x, const float *rstd,
                               int rows, int d, int flags) {
  for (int r = 0; r < rows; r++) {
    const float *xr = x + (size_t)r * d, *gr = dy + (size_t)r * d;
    float s = rstd[r];
    float c = rmsnorm_grad_coef(s, tree_dot(gr, xr, d), d);
    float *dr = dx + (size_t)r * d;
    for (int j = 0; j < d; j++) kernel_store(&dr[j], rmsnorm_dx(s, gr[j], xr[j], c), flags);
  }
}
