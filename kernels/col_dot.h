/* The float32 parameter gradient of a per-channel vector: for a [rows, d]
 * pair a, b,
 *   out[c] += round(sum over rows r of round(a[r,c] * b[r,c]))
 * where each product is rounded to bf16 under KERNEL_BF16 (PyTorch's bf16
 * product), the sum runs in float64, and the result is narrowed to float32
 * and rounded once more under KERNEL_BF16 (the gradient of the parameter's
 * bf16 copy), then added to out in float32 (out is always accumulated, as
 * PyTorch accumulates a float32 .grad). scale_add's ds and residual_mix's
 * dmix are this; q_gain's dg uses the same term and finish over its own
 * index set.
 *
 * The CPU kernels sum each channel in ascending r. The CUDA twin
 * (col_dot.cu) sums with the fixed tree of kernels/reduce_tree.h applied
 * over the row index, in float64: lane k sums rows k, k + 256, ... in
 * increasing r, then the 256 lane partials combine pairwise, halving.
 * col_dot_tree_ref computes that tree on the CPU; the GPU must equal it bit
 * for bit. Both orders are float64 sums of float32 terms, so they differ
 * from each other and from the exact sum by far less than one float32 ulp
 * of the result before it is narrowed (rows * 2^-53 relative to the sum of
 * |terms|). */
#ifndef PGOLF_COL_DOT_H
#define PGOLF_COL_DOT_H

#include "kernels/flags.h"
#include "kernels/hd.h"
#include "kernels/reduce_tree.h"

/* One term of the sum: a * b, rounded under KERNEL_BF16. */
PGOLF_HD float col_dot_term(float a, float b, int flags) { return kernel_round(a * b, flags); }

/* Add a finished float64 sum into the float32 gradient *out. */
PGOLF_HD void col_dot_finish(float *out, double sum, int flags) {
  *out += kernel_round((float)sum, flags);
}

#ifdef __cplusplus
extern "C" {
#endif

/* sums[c] = the float64 sum above for c < d in ascending r (the CPU
 * kernels' order), before col_dot_finish. Channels are taken in blocks
 * whose rows are read across, each channel its own accumulator, so the
 * order per channel is the plain column walk's while the reads are
 * contiguous (a column walk touches a new page per row). */
void col_dot_sums(double *sums, const float *a, const float *b, int rows, int d, int flags);

/* out[c] += the sum above for c < d, by the GPU's tree (flags: KERNEL_BF16). */
void col_dot_tree_ref(float *out, const float *a, const float *b, int rows, int d, int flags);

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

/* The CUDA twin: device pointers, launched on stream; no allocation, no
 * atomics. scratch holds COL_DOT_SCRATCH(d) doubles (the lanes' partials)
 * and is free again once the stream has passed the call. b comes as
 * floats or packed (b or b16, exactly one: kernels/flags.h's
 * kernel_load). */
#define COL_DOT_SCRATCH(d) ((size_t)TREE_LANES * (size_t)(d))
int col_dot_cuda(float *out, const float *a, const float *b, const uint16_t *b16, int rows, int d,
                 int flags, double *scratch, cudaStream_t stream, pg_error *err);
/* The second half alone, for kernels that write the lanes' partials
 * themselves (kernels/col_dot_lanes.h's layout): out[c] += the tree's
 * combination of scratch[k * d + c] over the lanes k, finished with
 * col_dot_finish, for c < d. */
int col_dot_combine_cuda(float *out, const double *scratch, int d, int flags, cudaStream_t stream,
                         pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
