/* RMSNorm without weight over the last dimension, as F.rms_norm(x, (d,))
 * with eps=None: y = x * rstd, rstd = 1 / sqrt(mean(x^2) + eps), eps the
 * float32 machine epsilon (PyTorch uses the epsilon of the op-math type,
 * float32 also for bf16 input). Every row is normalised by one thread; the
 * sum of squares runs in index order in float32.
 *
 * Under KERNEL_BF16 the input is bf16, the arithmetic is float32 (PyTorch
 * upcasts) and y is rounded to bf16; in backward dx is rounded. rstd is
 * saved in float32 for the backward. KERNEL_ROUND_OUT rounds y and dx
 * alone (kernels/flags.h).
 *
 * The CUDA twin (rmsnorm.cu) reduces each row with the fixed tree of
 * kernels/reduce_tree.h instead of in index order; rmsnorm_*_tree_ref
 * compute that tree on the CPU, so a GPU run must equal them bit for bit.
 * Everything but the sums is the shared arithmetic below. */
#ifndef PGOLF_RMSNORM_H
#define PGOLF_RMSNORM_H

#include <float.h>
#include <math.h>

#include "kernels/flags.h"
#include "kernels/hd.h"

/* rstd from the row's sum of squares. PyTorch: rsqrt(mean + eps), and its
 * CPU rsqrt is 1 / sqrt (both IEEE-rounded here and on the GPU). */
PGOLF_HD float rmsnorm_rstd(float sumsq, int d) {
  return 1.0f / sqrtf(sumsq / (float)d + FLT_EPSILON);
}

/* The backward's per-row coefficient rstd^3 * dot(dy, x) / d. */
PGOLF_HD float rmsnorm_grad_coef(float rstd, float dot, int d) {
  return rstd * rstd * rstd * dot / (float)d;
}

/* One element of dx = rstd * dy - x * coef. */
PGOLF_HD float rmsnorm_dx(float rstd, float dy, float x, float coef) {
  return rstd * dy - x * coef;
}

#ifdef __cplusplus
extern "C" {
#endif

void rmsnorm_forward(float *y, float *rstd, const float *x, int rows, int d, int flags);
/* dx = rstd * dy - x * rstd^3 * dot(dy, x) / d (flags: KERNEL_BF16, KERNEL_ACCUMULATE). */
void rmsnorm_backward(float *dx, const float *dy, const float *x, const float *rstd, int rows,
                      int d, int flags);

/* The same, with each row's sum (of x^2; of dy*x) taken by the fixed
 * tree: the bits the CUDA kernels must produce. */
void rmsnorm_forward_tree_ref(float *y, float *rstd, const float *x, int rows, int d, int flags);
void rmsnorm_backward_tree_ref(float *dx, const float *dy, const float *x, const float *rstd,
                               int rows, int d, int flags);

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

/* The CUDA twins: device pointers, one warp per row computing the
 * TREE_LANES tree (rmsnorm.cu), launched on stream; no allocation. Launch
 * errors come back as err. y16 and dx16 (may be NULL): packed copies of
 * y and dx (kernels/flags.h), for the GEMMs that read them; y may be
 * NULL where y16 is given (the float32 y unwritten: only GEMMs read it).
 * x comes as floats or packed (x or x16, exactly one: a bf16 GEMM's
 * result read where it lies, kernels/flags.h's kernel_load). */
int rmsnorm_forward_cuda(float *y, uint16_t *y16, float *rstd, const float *x, const uint16_t *x16,
                         int rows, int d, int flags, cudaStream_t stream, pg_error *err);
/* dy comes as floats, or packed (dy16, exactly one) as dy_parts arrays of
 * rows x d one after another, whose float32 sum taken in order is dy
 * (kernels/flags.h's kernel_load_sum: B2's three gradients of n1 where
 * their GEMMs left them; 1 to 3 parts). */
int rmsnorm_backward_cuda(float *dx, uint16_t *dx16, const float *dy, const uint16_t *dy16,
                          int dy_parts, const float *x, const uint16_t *x16, const float *rstd,
                          int rows, int d, int flags, cudaStream_t stream, pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
