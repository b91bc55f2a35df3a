/* The weight gradient's product with its sum split into chunks of rows,
 * in a fixed order:
 *
 *     P_c[o, i] = sum over rows n of chunk c of dy[n, o] x[n, i]
 *     dw[o, i]  = store((((P_0 + P_1) + P_2) + ...) + P_{S-1})
 *
 * Chunk c is rows [c R, min((c+1) R, n)) for a fixed width R (the model
 * uses MATMUL_SPLIT_ROWS); each partial P_c is one product (kernels/
 * matmul.h: float32, unrounded, KERNEL_PARTIAL); the partials are added
 * in chunk order by one thread per element (ordered_sum_elem, float32)
 * and stored by kernel_store with the caller's flags (under KERNEL_BF16
 * the sum is rounded once; KERNEL_ACCUMULATE adds it into dw).
 *
 * Why: with split-K masked off (determinism, kernels/matmul.h) cuBLASLt
 * computes a weight gradient as one long sum per output tile: for the
 * baseline's 65,536-token micro-batch a 512 x 512 gradient is K = 65,536
 * on 16 thread blocks (tiles of 64 x 256) of a GPU with 132 SMs (ncu on an
 * H200: a bf16 GEMM with such tiles took 1.47 ms, 190 times in 3,000
 * launches; taken to be the weight gradients, not yet confirmed by its
 * grid). Split into chunks of R rows the same
 * product runs S times as many blocks, and because R is fixed the tree's
 * shape depends on the batch alone, never on the GPU or the launch, so
 * the bits repeat run to run and the CPU computes the same tree
 * (matmul_backward_weight_split, which the CPU model uses with the GPU's
 * trees). One chunk (n <= R) is the plain product. */
#ifndef PGOLF_MATMUL_SPLIT_H
#define PGOLF_MATMUL_SPLIT_H

#include <stddef.h>

#include "kernels/flags.h"
#include "kernels/hd.h"
#include "kernels/ordered_sum.h"

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"
#include "kernels/matmul.h"
#endif

/* The model's chunk width: 8 chunks of the baseline's micro-batch, so a
 * 512 x 512 gradient runs on 8 times the blocks of the unsplit product
 * (about one wave of an H100's 132 SMs). */
#define MATMUL_SPLIT_ROWS 8192

#ifdef __cplusplus
extern "C" {
#endif

/* Chunks of n rows at width rows (1 when n <= rows). */
static inline int matmul_split_chunks(int n, int rows) {
  return n <= rows ? 1 : (int)(((long long)n + rows - 1) / rows);
}

/* Floats of partials scratch for n rows and an out x in gradient. */
static inline size_t matmul_split_floats(int n, int rows, int in, int out) {
  return (size_t)matmul_split_chunks(n, rows) * (size_t)in * (size_t)out;
}

/* One element of the sum, stored: the expression both sides evaluate. */
PGOLF_HD void matmul_split_store(float *dw, const float *partials, size_t len, int chunks, size_t i,
                                 int flags) {
  kernel_store(&dw[i], ordered_sum_elem(partials, len, chunks, i, 1.0f), flags);
}

/* dw (out x in) from the chunks' partials (chunks x len floats, chunk
 * after chunk), every element by matmul_split_store. */
void matmul_split_sum(float *dw, const float *partials, int chunks, size_t len, int flags);

/* The CPU's split product: dy [n, out], x [n, in] float32 (bf16 values
 * under KERNEL_BF16); partials: matmul_split_floats(n, rows, in, out)
 * floats of scratch. One chunk gives matmul_backward_weight's bits. */
void matmul_backward_weight_split(float *dw, const float *dy, const float *x, int n, int in,
                                  int out, int flags, int rows, float *partials);

#ifdef PGOLF_HAVE_CUDA
/* The CUDA twin of matmul_split_sum (kernels/matmul_split.cu). */
int matmul_split_sum_cuda(float *dw, const float *partials, int chunks, size_t len, int flags,
                          cudaStream_t stream, pg_error *err);

/* The GPU's split product: dy and x device arrays (bf16 under
 * KERNEL_BF16), dw float32; each chunk one cuBLASLt product
 * (KERNEL_PARTIAL) into partials (device, matmul_split_floats floats),
 * then matmul_split_sum_cuda. */
int matmul_backward_weight_split_cuda(matmul_cuda_ctx *c, float *dw, const void *dy, const void *x,
                                      int n, int in, int out, int flags, int rows, float *partials,
                                      cudaStream_t stream, pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
