#include "kernels/relu_square.h"

void relu_square_forward(float *y, const float *h, size_t n, int flags) {
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) y[i] = relu_square_y(h[i], flags);
}

void relu_square_backward(float *dh, const float *dy, const float *h, size_t n, int flags) {
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) kernel_store(&dh[i], relu_square_dh(dy[i], h[i]), flags);
}
