#include "kernels/col_dot.h"

#include <stddef.h>

#include "kernels/reduce_tree.h"

/* Channels per block: 32 float64 accumulators, and each row's 128 bytes of
 * a and of b per block. */
enum { COL_BLOCK = 32 };

void col_dot_sums(double *sums, const float *a, const float *b, int rows, int d, int flags) {
  const int nblocks = (d + COL_BLOCK - 1) / COL_BLOCK;
#pragma omp parallel for schedule(static)
  for (int blk = 0; blk < nblocks; blk++) {
    const int c0 = blk * COL_BLOCK, w = d - c0 < COL_BLOCK ? d - c0 : COL_BLOCK;
    double acc[COL_BLOCK] = {0};
    for (int r = 0; r < rows; r++) {
      const float *ar = a + (size_t)r * d + c0, *br = b + (size_t)r * d + c0;
      for (int j = 0; j < w; j++) acc[j] += (double)col_dot_term(ar[j], br[j], flags);
    }
    for (int j = 0; j < w; j++) sums[c0 + j] = acc[j];
  }
}

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
