#include "kernels/rope.h"

#include "kernels/bf16.h"
#include "kernels/det_math.h"

#include <stddef.h>

void rope_table(float *cos_t, float *sin_t, int T, int head_dim, float base, int flags) {
  int half = head_dim / 2, bf16 = flags & KERNEL_BF16;
  for (int j = 0; j < half; j++) {
    /* torch.arange(0, dim, 2, float32) / dim, then base ** that, then 1 / it:
     * three float32 operations, each correctly rounded. base ** e is taken
     * as exp(e log base) in double (det_math: relative error ~1e-15, no
     * libm) and rounded once. Then the buffer's bf16 round trip. */
    float e = (float)(2 * j) / (float)head_dim;
    float p = (float)det_exp((double)e * det_log((double)base));
    float inv = bf16_round(1.0f / p);
    for (int t = 0; t < T; t++) {
      float *c = &cos_t[(size_t)t * half + j], *s = &sin_t[(size_t)t * half + j];
      float f = bf16 ? bf16_round(bf16_round((float)t) * inv) : (float)t * inv;
      det_sincosf(f, s, c);
      if (bf16) {
        *c = bf16_round(*c);
        *s = bf16_round(*s);
      }
    }
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
      for (int j = 0; j < half; j++) {
        float a = kernel_round(x1[j] * c[j], flags), b = kernel_round(x2[j] * s[j], flags);
        float e = kernel_round(x1[j] * -s[j], flags), f = kernel_round(x2[j] * c[j], flags);
        y1[j] = kernel_round(a + b, flags);
        y2[j] = kernel_round(e + f, flags);
      }
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
      for (int j = 0; j < half; j++) {
        float a = kernel_round(g1[j] * c[j], flags), b = kernel_round(g2[j] * -s[j], flags);
        float e = kernel_round(g1[j] * s[j], flags), f = kernel_round(g2[j] * c[j], flags);
        kernel_store(&d1[j], a + b, flags);
        kernel_store(&d2[j], e + f, flags);
      }
    }
  }
}
