/* The ordered sum of n shards, element by element (the gradient
 * combination of trainer/grad_sum.h, the ranks' gradients in rank order):
 *
 *     out[i] = ((s_0[i]*scale + s_1[i]*scale) + s_2[i]*scale) + ... + s_{n-1}[i]*scale
 *
 * in float32, shard 0 first, scale 1 meaning no multiply. ordered_sum_elem
 * is the one expression: the CPU loop (trainer/grad_sum.c) and the CUDA
 * kernel (kernels/ordered_sum.cu) both evaluate it, so with contraction off
 * on both sides a GPU run combines its ranks' gradients into the CPU's bits
 * whatever the launch shape. Shard r's element i is at shards[r*stride + i]. */
#ifndef PGOLF_ORDERED_SUM_H
#define PGOLF_ORDERED_SUM_H

#include <stddef.h>

#include "kernels/hd.h"

PGOLF_HD float ordered_sum_elem(const float *shards, size_t stride, int n, size_t i, float scale) {
  float s = scale == 1.0f ? shards[i] : shards[i] * scale;
  for (int r = 1; r < n; r++) {
    float v = shards[(size_t)r * stride + i];
    s += scale == 1.0f ? v : v * scale;
  }
  return s;
}

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out[i] = ordered_sum_elem(shards, stride, n, i, scale) for i < len, on
 * device arrays, queued on stream. out may be shard 0 (in place) but must
 * not overlap shards 1..n-1. */
int ordered_sum_cuda(float *out, const float *shards, size_t stride, int n, size_t len, float scale,
                     cudaStream_t stream, pg_error *err);

#ifdef __cplusplus
}
#endif
#endif

#endif
