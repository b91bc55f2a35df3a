/* The one reduction tree of pgolf's CUDA kernels, and its CPU twin.
 *
 * A row of n terms is reduced by TREE_LANES = 256 lanes (the 256 threads
 * of one block):
 *   1. lane k sums the terms j = k, k + 256, k + 512, ... in increasing j,
 *      starting from zero (one float add per term, in that order);
 *   2. the 256 partials are combined pairwise, halving: for off = 128, 64,
 *      ..., 1, p[k] = p[k] + p[k + off] for every k < off;
 *   3. the result is p[0].
 * The shape depends on n alone, never on the GPU's SM count, occupancy or
 * timing, so a kernel gives the same bits on every run of every GPU, and
 * the CPU reproduces them with the functions below (each kernel's
 * *_tree_ref builds on them). A term is rounded to the accumulator's type
 * before it is added (no fused multiply-add on either side). */
#ifndef PGOLF_REDUCE_TREE_H
#define PGOLF_REDUCE_TREE_H

#include <stddef.h>

#include "kernels/hd.h"

#define TREE_LANES 256

/* Steps 2-3 on p[TREE_LANES] (destroyed). */
PGOLF_HD float tree_combine(float *p) {
  for (int off = TREE_LANES / 2; off > 0; off >>= 1)
    for (int k = 0; k < off; k++) p[k] = p[k] + p[k + off];
  return p[0];
}

PGOLF_HD double tree_combine_f64(double *p) {
  for (int off = TREE_LANES / 2; off > 0; off >>= 1)
    for (int k = 0; k < off; k++) p[k] = p[k] + p[k + off];
  return p[0];
}

/* The same shape for a maximum (the cross-entropy's row max): each lane
 * starts from -infinity and keeps x when x > its running max, and the
 * halving keeps p[k + off] when it is > p[k]. A NaN term is never kept,
 * as in the CPU kernels' sequential max. */
PGOLF_HD float tree_max2(float acc, float x) { return x > acc ? x : acc; }

PGOLF_HD float tree_combine_max(float *p) {
  for (int off = TREE_LANES / 2; off > 0; off >>= 1)
    for (int k = 0; k < off; k++) p[k] = tree_max2(p[k], p[k + off]);
  return p[0];
}

/* The whole tree over terms[0..n), float32. */
PGOLF_HD float tree_sum_ref(const float *terms, size_t n) {
  float p[TREE_LANES];
  for (int k = 0; k < TREE_LANES; k++) {
    float a = 0.0f;
    for (size_t j = (size_t)k; j < n; j += TREE_LANES) a = a + terms[j];
    p[k] = a;
  }
  return tree_combine(p);
}

/* The same tree in float64 (the loss mean over rows). */
PGOLF_HD double tree_sum_f64_ref(const double *terms, size_t n) {
  double p[TREE_LANES];
  for (int k = 0; k < TREE_LANES; k++) {
    double a = 0.0;
    for (size_t j = (size_t)k; j < n; j += TREE_LANES) a = a + terms[j];
    p[k] = a;
  }
  return tree_combine_f64(p);
}

#endif
