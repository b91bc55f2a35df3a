#include "kernels/q_gain.h"

#include <stddef.h>

void q_gain_forward(float *y, const float *q, const float *g, int rows, int heads, int head_dim,
                    int flags) {
  const int w = heads * head_dim;
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < w; c++) {
      size_t i = (size_t)r * w + c;
      y[i] = kernel_round(q[i] * kernel_round(g[c / head_dim], flags), flags);
    }
}

void q_gain_backward(float *dq, float *dg, const float *dy, const float *q, const float *g,
                     int rows, int heads, int head_dim, int flags) {
  const int w = heads * head_dim;
#pragma omp parallel for schedule(static)
  for (int h = 0; h < heads; h++) {
    double acc = 0.0;
    for (int r = 0; r < rows; r++)
      for (int j = 0; j < head_dim; j++) {
        size_t i = (size_t)r * w + (size_t)h * head_dim + j;
        acc += kernel_round(dy[i] * q[i], flags);
      }
    dg[h] += kernel_round((float)acc, flags);
  }
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < w; c++) {
      size_t i = (size_t)r * w + c;
      kernel_store(&dq[i], dy[i] * kernel_round(g[c / head_dim], flags), flags);
    }
}
