#include "kernels/col_dot.h"

#include <stddef.h>

#include "kernels/reduce_tree.h"

void col_dot_tree_ref(float *out, const float *a, const float *b, int rows, int d, int flags) {
#pragma omp parallel for schedule(static)
  for (int c = 0; c < d; c++) {
    double p[TREE_LANES];
    for (int k = 0; k < TREE_LANES; k++) {
      double acc = 0.0;
      for (int r = k; r < rows; r += TREE_LANES) {
        size_t i = (size_t)r * d + c;
        acc = acc + (double)col_dot_term(a[i], b[i], flags);
      }
      p[k] = acc;
    }
    col_dot_finish(&out[c], tree_combine_f64(p), flags);
  }
}
