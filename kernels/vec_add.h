/* y[i] = y[i] + x[i], rounded as the flags say (KERNEL_BF16: the sum is
 * stored to a bf16 tensor): the gradient sums of the model that are no
 * other kernel's, a skip connection's gradient joining the stream's, and
 * the tied embedding's two gradient parts. Elementwise; the addition is
 * vec_add_elem, shared with the CUDA twin. */
#ifndef PGOLF_VEC_ADD_H
#define PGOLF_VEC_ADD_H

#include <stddef.h>

#include "kernels/flags.h"

PGOLF_HD float vec_add_elem(float y, float x, int flags) { return kernel_round(y + x, flags); }

#ifdef __cplusplus
extern "C" {
#endif

void vec_add(float *y, const float *x, size_t n, int flags);

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

/* The CUDA twin (kernels/vec_add.cu): device arrays, the same bits. */
int vec_add_cuda(float *y, const float *x, size_t n, int flags, cudaStream_t stream, pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
