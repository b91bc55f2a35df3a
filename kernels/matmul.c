#include "kernels/matmul.h"

#include <stddef.h>

/* ---- Plain loops: the definition of every sum's order. ---- */

void matmul_forward_simple(float *y, const float *x, const float *w, int n, int in, int out,
                           int flags) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < n; r++)
    for (int o = 0; o < out; o++) {
      float acc = 0.0f;
      for (int i = 0; i < in; i++) acc += x[(size_t)r * in + i] * w[(size_t)o * in + i];
      kernel_store(&y[(size_t)r * out + o], acc, flags);
    }
}

void matmul_backward_input_simple(float *dx, const float *dy, const float *w, int n, int in,
                                  int out, int flags) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < n; r++)
    for (int i = 0; i < in; i++) {
      float acc = 0.0f;
      for (int o = 0; o < out; o++) acc += dy[(size_t)r * out + o] * w[(size_t)o * in + i];
      kernel_store(&dx[(size_t)r * in + i], acc, flags);
    }
}

void matmul_backward_weight_simple(float *dw, const float *dy, const float *x, int n, int in,
                                   int out, int flags) {
#pragma omp parallel for schedule(static)
  for (int o = 0; o < out; o++)
    for (int i = 0; i < in; i++) {
      float acc = 0.0f;
      for (int r = 0; r < n; r++) acc += dy[(size_t)r * out + o] * x[(size_t)r * in + i];
      kernel_store(&dw[(size_t)o * in + i], acc, flags);
    }
}

void matmul_forward(float *y, const float *x, const float *w, int n, int in, int out, int flags) {
  matmul_forward_simple(y, x, w, n, in, out, flags);
}

void matmul_backward_input(float *dx, const float *dy, const float *w, int n, int in, int out,
                           int flags) {
  matmul_backward_input_simple(dx, dy, w, n, in, out, flags);
}

void matmul_backward_weight(float *dw, const float *dy, const float *x, int n, int in, int out,
                            int flags) {
  matmul_backward_weight_simple(dw, dy, x, n, in, out, flags);
}
