/* Muon's orthogonalisation: the quintic Newton-Schulz iteration of the
 * official zeropower_via_newtonschulz5, with coefficients
 * (a, b, c) = (3.4445, -4.7750, 2.0315):
 *
 *   X = G / (||G||_F + 1e-7)
 *   if rows > cols: X = X^T           (iterate on the wide orientation)
 *   repeat steps times:
 *     A = X X^T
 *     B = b A + (c A) A               (Python's `c * A @ A` is (c*A) @ A)
 *     X = a X + B X
 *   return X (transposed back)
 *
 * Precision:
 *   flags 0            every operation in float32 (the fp32 reference);
 *   flags KERNEL_BF16  as PyTorch runs it on bf16 tensors on CPU: G is
 *                      rounded to bf16 first and the result of every
 *                      operation above (the norm, norm + eps, the division,
 *                      each scalar product, each matmul with float32
 *                      accumulation, each sum) is rounded to bf16.
 * The scalars are the float32 values of the Python constants, as PyTorch
 * narrows a Python float for a float32 or bf16 tensor operation.
 *
 * Determinism: the norm is kernels/l2norm.h (float64 partial sums over
 * fixed blocks, combined in block order; with KERNEL_TREE the GPU's tree,
 * l2norm_tree_ref); the matmuls are kernels/matmul.h (each output one
 * float32 sum in index order). The result is the same bits for any thread
 * count.
 *
 * The CUDA twin (newton_schulz.cu) runs the same operations, each
 * elementwise step by the shared functions below and the norm by
 * l2norm_cuda's tree; its GEMMs are cuBLASLt's, so with the CPU's
 * products (the CPU stand-in of ci/cuda-emu.sh) it equals
 * newton_schulz5(..., flags | KERNEL_TREE) bit for bit. */
#ifndef PGOLF_NEWTON_SCHULZ_H
#define PGOLF_NEWTON_SCHULZ_H

#include <stddef.h>

#include "kernels/flags.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NS_A 3.4445
#define NS_B (-4.7750)
#define NS_C 2.0315
#define NS_EPS 1e-7

/* Floats of scratch newton_schulz5 needs for a rows x cols matrix. */
size_t newton_schulz5_work_floats(int rows, int cols);

/* out[rows, cols] = the orthogonalised g[rows, cols] (row-major). out may
 * alias g. work holds newton_schulz5_work_floats(rows, cols) floats.
 * flags: 0 or KERNEL_BF16, with KERNEL_TREE or not. */
void newton_schulz5(float *out, const float *g, int rows, int cols, int steps, int flags,
                    float *work);

/* x / (||x|| + eps) per element: the divisor from the norm, then the
 * quotient, each rounded as the flags say. */
PGOLF_HD float ns_divisor(float norm, int flags) {
  return kernel_round(kernel_round(norm, flags) + (float)NS_EPS, flags);
}
PGOLF_HD float ns_divide_elem(float x, float d, int flags) { return kernel_round(x / d, flags); }

/* round(round(s * x) + z): the `s * X + Z` of the iteration (Z a product). */
PGOLF_HD float ns_scale_add_elem(float x, float s, float z, int flags) {
  return kernel_round(kernel_round(s * x, flags) + z, flags);
}

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "common/error.h"
#include "kernels/matmul.h"

/* The CUDA twin: device arrays; work holds newton_schulz5_work_floats
 * floats (the fp32 iterate; under KERNEL_BF16 the rounded input for the
 * norm and the packed iterate, which fit in less), norm one float and
 * sumsq one double of scratch. On stream through mm's cuBLASLt plans; no
 * allocation. */
int newton_schulz5_cuda(matmul_cuda_ctx *mm, float *out, const float *g, int rows, int cols,
                        int steps, int flags, float *work, float *norm, double *sumsq,
                        cudaStream_t stream, pg_error *err);
/* batch matrices of one shape at once, each stored right after the last
 * in g and out (rows * cols floats apart): each the unbatched call's
 * sequence on its own matrix, every launch and product covering the
 * batch (kernels/matmul.h's batches). work holds batch *
 * newton_schulz5_work_floats floats, norm batch floats and sumsq batch
 * doubles. */
int newton_schulz5_batch_cuda(matmul_cuda_ctx *mm, float *out, const float *g, int batch, int rows,
                              int cols, int steps, int flags, float *work, float *norm,
                              double *sumsq, cudaStream_t stream, pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
