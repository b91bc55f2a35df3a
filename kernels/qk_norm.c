#include "kernels/qk_norm.h"

#include <stddef.h>

#include "kernels/q_gain.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"

void qk_norm_forward(float *rope, float *fin, float *rstd, const float *x, const float *gain,
                     const float *cos_t, const float *sin_t, int rows, int T, int heads,
                     int head_dim, int flags, float *scratch) {
  const int f = flags & ~KERNEL_TREE;
  (flags & KERNEL_TREE ? rmsnorm_forward_tree_ref : rmsnorm_forward)(scratch, rstd, x, rows * heads,
                                                                     head_dim, 0);
  if (!gain) {
    rope_forward(fin, scratch, cos_t, sin_t, rows, T, heads, head_dim, f);
    return;
  }
  float *r = rope ? rope : scratch; /* rope_forward may run in place */
  rope_forward(r, scratch, cos_t, sin_t, rows, T, heads, head_dim, 0);
  q_gain_forward(fin, r, gain, rows, heads, head_dim, f);
}

void qk_norm_backward(float *dx, const float *dy, const float *x, const float *rstd,
                      const float *gain, const float *cos_t, const float *sin_t, int rows, int T,
                      int heads, int head_dim, int flags, float *scratch) {
  const int f = flags & ~KERNEL_TREE;
  const size_t w = (size_t)heads * head_dim;
  if (gain) { /* q_gain_backward's dq, float32: dy g */
    const long long n = (long long)rows * (long long)w;
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < n; i++)
      kernel_store(&scratch[i], q_gain_dq(dy[i], gain[(size_t)i % w / (size_t)head_dim], 0), 0);
    dy = scratch;
  }
  rope_backward(scratch, dy, cos_t, sin_t, rows, T, heads, head_dim, 0);
  (flags & KERNEL_TREE ? rmsnorm_backward_tree_ref : rmsnorm_backward)(dx, scratch, x, rstd,
                                                                       rows * heads, head_dim, f);
}
