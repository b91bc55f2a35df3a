#include "kernels/rmsnorm.h"

#include <float.h>
#include <math.h>
#include <stddef.h>

void rmsnorm_forward(float *y, float *rstd, const float *x, int rows, int d, int flags) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++) {
    const float *xr = x + (size_t)r * d;
    float ss = 0.0f;
    for (int j = 0; j < d; j++) ss += xr[j] * xr[j];
    /* PyTorch: rsqrt(mean + eps), and its CPU rsqrt is 1 / sqrt. */
    float s = 1.0f / sqrtf(ss / (float)d + FLT_EPSILON);
    rstd[r] = s;
    float *yr = y + (size_t)r * d;
    for (int j = 0; j < d; j++) yr[j] = kernel_round(xr[j] * s, flags);
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
    float c = s * s * s * dot / (float)d;
    float *dr = dx + (size_t)r * d;
    for (int j = 0; j < d; j++) kernel_store(&dr[j], s * gr[j] - xr[j] * c, flags);
  }
}
