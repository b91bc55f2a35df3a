#include "kernels/q_gain.h"

#include <stddef.h>

#include "kernels/col_dot.h"
#include "kernels/reduce_tree.h"

void q_gain_forward(float *y, const float *q, const float *g, int rows, int heads, int head_dim,
                    int flags) {
  const int w = heads * head_dim;
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < w; c++) {
      size_t i = (size_t)r * w + c;
      y[i] = q_gain_y(q[i], g[c / head_dim], flags);
    }
}

/* dq = dy * g for every element (both backwards); after the sums, which
 * read dy that dq may overwrite. */
static void backward_dq(float *dq, const float *dy, const float *g, int rows, int heads,
                        int head_dim, int flags) {
  const int w = heads * head_dim;
  if (!dq) return; /* dg alone */
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < w; c++) {
      size_t i = (size_t)r * w + c;
      kernel_store(&dq[i], q_gain_dq(dy[i], g[c / head_dim], flags), flags);
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
        acc += col_dot_term(dy[i], q[i], flags);
      }
    col_dot_finish(&dg[h], acc, flags);
  }
  backward_dq(dq, dy, g, rows, heads, head_dim, flags);
}

void q_gain_backward_tree_ref(float *dq, float *dg, const float *dy, const float *q, const float *g,
                              int rows, int heads, int head_dim, int flags) {
  const size_t w = (size_t)heads * head_dim, terms = (size_t)rows * head_dim;
#pragma omp parallel for schedule(static)
  for (int h = 0; h < heads; h++) {
    double p[TREE_LANES];
    for (int k = 0; k < TREE_LANES; k++) {
      double acc = 0.0;
      for (size_t m = (size_t)k; m < terms; m += TREE_LANES) {
        size_t i = (m / head_dim) * w + (size_t)h * head_dim + m % head_dim;
        acc = acc + (double)col_dot_term(dy[i], q[i], flags);
      }
      p[k] = acc;
    }
    col_dot_finish(&dg[h], tree_combine_f64(p), flags);
  }
  backward_dq(dq, dy, g, rows, heads, head_dim, flags);
}
