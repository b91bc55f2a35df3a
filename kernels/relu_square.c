#include "kernels/relu_square.h"

void relu_square_forward(float *y, const float *h, size_t n, int flags) {
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) {
    float r = h[i] > 0.0f ? h[i] : 0.0f;
    y[i] = kernel_round(r * r, flags);
  }
}

void relu_square_backward(float *dh, const float *dy, const float *h, size_t n, int flags) {
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) {
    float r = h[i] > 0.0f ? h[i] : 0.0f;
    kernel_store(&dh[i], h[i] > 0.0f ? dy[i] * (2.0f * r) : 0.0f, flags);
  }
}
