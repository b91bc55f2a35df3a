#include "kernels/residual_mix.h"

#include <stddef.h>

void residual_mix_forward(float *out, const float *x, const float *x0, const float *mix, int rows,
                          int d, int flags) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < d; c++) {
      size_t i = (size_t)r * d + c;
      float a = kernel_round(kernel_round(mix[c], flags) * x[i], flags);
      float b = kernel_round(kernel_round(mix[d + c], flags) * x0[i], flags);
      out[i] = kernel_round(a + b, flags);
    }
}

void residual_mix_backward(float *dx, float *dx0, float *dmix, const float *dout, const float *x,
                           const float *x0, const float *mix, int rows, int d, int flags) {
  /* The parameter sums first: dx may overwrite dout below. */
#pragma omp parallel for schedule(static)
  for (int c = 0; c < d; c++) {
    double s0 = 0.0, s1 = 0.0;
    for (int r = 0; r < rows; r++) {
      size_t i = (size_t)r * d + c;
      s0 += kernel_round(dout[i] * x[i], flags);
      s1 += kernel_round(dout[i] * x0[i], flags);
    }
    dmix[c] += kernel_round((float)s0, flags);
    dmix[d + c] += kernel_round((float)s1, flags);
  }
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < d; c++) {
      size_t i = (size_t)r * d + c;
      float m0 = kernel_round(mix[c], flags), m1 = kernel_round(mix[d + c], flags);
      float g = dout[i];
      dx0[i] = kernel_round(dx0[i] + kernel_round(g * m1, flags), flags);
      dx[i] = kernel_round(g * m0, flags);
    }
}
