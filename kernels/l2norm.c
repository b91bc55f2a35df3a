#include "kernels/l2norm.h"

#include "kernels/reduce_tree.h"

/* Blocks are summed in batches of this many, so the partial sums live on
 * the stack; batching does not change the order of the final sum. */
#define BATCH 256

static double block_sumsq(const float *x, size_t n) {
  double s = 0.0;
  for (size_t i = 0; i < n; i++) s += l2norm_term(x[i]);
  return s;
}

double l2norm_sumsq(const float *x, size_t n) {
  size_t nb = (n + L2NORM_BLOCK - 1) / L2NORM_BLOCK;
  double s = 0.0;
  for (size_t b0 = 0; b0 < nb; b0 += BATCH) {
    double part[BATCH];
    int m = (int)(nb - b0 < BATCH ? nb - b0 : BATCH);
#pragma omp parallel for schedule(static) if (m > 1)
    for (int b = 0; b < m; b++) {
      size_t lo = (b0 + (size_t)b) * L2NORM_BLOCK;
      size_t len = n - lo < L2NORM_BLOCK ? n - lo : L2NORM_BLOCK;
      part[b] = block_sumsq(x + lo, len);
    }
    for (int b = 0; b < m; b++) s += part[b];
  }
  return s;
}

float l2norm(const float *x, size_t n) { return l2norm_from_sumsq(l2norm_sumsq(x, n)); }

double l2norm_sumsq_tree_ref(const float *x, size_t n) {
  double p[TREE_LANES];
#pragma omp parallel for schedule(static)
  for (int k = 0; k < TREE_LANES; k++) {
    double acc = 0.0;
    for (size_t i = (size_t)k; i < n; i += TREE_LANES) acc = acc + l2norm_term(x[i]);
    p[k] = acc;
  }
  return tree_combine_f64(p);
}

float l2norm_tree_ref(const float *x, size_t n) {
  return l2norm_from_sumsq(l2norm_sumsq_tree_ref(x, n));
}
