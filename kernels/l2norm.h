/* The L2 norm of a float32 vector, in a fixed order.
 *
 * The sum of squares is taken in float64 over fixed blocks of
 * L2NORM_BLOCK elements (each block summed in index order by one thread),
 * and the block sums are added in block order, so the result is the same
 * bits for any thread count. The float64 sum is more accurate than
 * PyTorch's float32 reduction; the two differ by rounding only (about one
 * float32 ulp of the norm). The result is narrowed to float32 once, after
 * the square root, as PyTorch returns a float32 norm.
 *
 * The CUDA twin (l2norm.cu) sums the same float64 terms with the fixed
 * tree of kernels/reduce_tree.h (lane k sums x[k], x[k + 256], ... in
 * increasing index, then the lanes combine pairwise, halving);
 * l2norm_sumsq_tree_ref computes that tree. Both are float64 sums of exact
 * squares: each is within n * 2^-53 of the exact sum relative to it, so
 * the two norms agree to about one float32 rounding. */
#ifndef PGOLF_L2NORM_H
#define PGOLF_L2NORM_H

#include <math.h>
#include <stddef.h>

#include "kernels/hd.h"

#define L2NORM_BLOCK 4096

/* One term: x^2 in float64 (exact). */
PGOLF_HD double l2norm_term(float x) { return (double)x * (double)x; }

/* The norm from the sum of squares: IEEE square root in float64, one
 * rounding to float32. */
PGOLF_HD float l2norm_from_sumsq(double sumsq) { return (float)sqrt(sumsq); }

#ifdef __cplusplus
extern "C" {
#endif

/* Sum of x[i]^2 in float64, fixed order as above. */
double l2norm_sumsq(const float *x, size_t n);

/* sqrt(l2norm_sumsq(x, n)) narrowed to float32. */
float l2norm(const float *x, size_t n);

/* The same sum and norm by the GPU's tree. */
double l2norm_sumsq_tree_ref(const float *x, size_t n);
float l2norm_tree_ref(const float *x, size_t n);

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

/* The CUDA twin: one block of TREE_LANES threads; writes the float32 norm
 * to *norm and, when sumsq is not NULL, the float64 sum to *sumsq (device
 * pointers). Launched on stream; no allocation. */
int l2norm_cuda(float *norm, double *sumsq, const float *x, size_t n, cudaStream_t stream,
                pg_error *err);
/* batch vectors of n floats stored back to back: norm[b] (and sumsq[b])
 * of x + b n, one block each. */
int l2norm_batch_cuda(float *norm, double *sumsq, const float *x, size_t n, int batch,
                      cudaStream_t stream, pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
