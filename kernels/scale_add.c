#include "kernels/scale_add.h"

#include <stddef.h>

void scale_add_forward(float *out, const float *x, const float *s, const float *y, int rows, int d,
                       int flags) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < d; c++) {
      size_t i = (size_t)r * d + c;
      float t = kernel_round(kernel_round(s[c], flags) * y[i], flags);
      out[i] = kernel_round(x[i] + t, flags);
    }
}

void scale_add_backward(float *dy, float *ds, const float *dout, const float *s, const float *y,
                        int rows, int d, int flags) {
#pragma omp parallel for schedule(static)
  for (int c = 0; c < d; c++) {
    double acc = 0.0;
    for (int r = 0; r < rows; r++) {
      size_t i = (size_t)r * d + c;
      acc += kernel_round(dout[i] * y[i], flags);
    }
    ds[c] += kernel_round((float)acc, flags);
  }
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < d; c++) {
      size_t i = (size_t)r * d + c;
      kernel_store(&dy[i], dout[i] * kernel_round(s[c], flags), flags);
    }
}
