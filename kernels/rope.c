#include "kernels/rope.h"

#include <stddef.h>

void rope_table(float *cos_t, float *sin_t, int T, int head_dim, float base, int flags) {
  int half = head_dim / 2;
  for (int j = 0; j < half; j++) {
    float inv = rope_inv_freq(j, head_dim, base);
    for (int t = 0; t < T; t++)
      rope_table_entry(&cos_t[(size_t)t * half + j], &sin_t[(size_t)t * half + j], t, inv, flags);
  }
}

void rope_forward(float *y, const float *x, const float *cos_t, const float *sin_t, int rows, int T,
                  int heads, int head_dim, int flags) {
  int half = head_dim / 2;
  int width = heads * head_dim;
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++) {
    const float *c = cos_t + (size_t)(r % T) * half, *s = sin_t + (size_t)(r % T) * half;
    for (int h = 0; h < heads; h++) {
      const float *x1 = x + (size_t)r * width + h * head_dim, *x2 = x1 + half;
      float *y1 = y + (size_t)r * width + h * head_dim, *y2 = y1 + half;
      for (int j = 0; j < half; j++) rope_rotate(&y1[j], &y2[j], x1[j], x2[j], c[j], s[j], flags);
    }
  }
}

void rope_backward(float *dx, const float *dy, const float *cos_t, const float *sin_t, int rows,
                   int T, int heads, int head_dim, int flags) {
  int half = head_dim / 2;
  int width = heads * head_dim;
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++) {
    const float *c = cos_t + (size_t)(r % T) * half, *s = sin_t + (size_t)(r % T) * half;
    for (int h = 0; h < heads; h++) {
      const float *g1 = dy + (size_t)r * width + h * head_dim, *g2 = g1 + half;
      float *d1 = dx + (size_t)r * width + h * head_dim, *d2 = d1 + half;
      for (int j = 0; j < half; j++)
        rope_rotate_back(&d1[j], &d2[j], g1[j], g2[j], c[j], s[j], flags);
    }
  }
}
