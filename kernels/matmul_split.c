/* The split weight-gradient product: the CPU's, and the GPU's chunks
 * launched from the host (see matmul_split.h). */
#include "kernels/matmul_split.h"

#include "kernels/matmul.h"

void matmul_split_sum(float *dw, const float *partials, int chunks, size_t len, int flags) {
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < len; i++) matmul_split_store(dw, partials, len, chunks, i, flags);
}

void matmul_backward_weight_split(float *dw, const float *dy, const float *x, int n, int in,
                                  int out, int flags, int rows, float *partials) {
  const int chunks = matmul_split_chunks(n, rows);
  const size_t len = (size_t)out * in;
  for (int c = 0; c < chunks; c++) {
    int r0 = c * rows, m = n - r0 < rows ? n - r0 : rows;
    matmul_backward_weight(partials + c * len, dy + (size_t)r0 * out, x + (size_t)r0 * in, m, in,
                           out, 0);
  }
  matmul_split_sum(dw, partials, chunks, len, flags);
}

#ifdef PGOLF_HAVE_CUDA
int matmul_backward_weight_split_cuda(matmul_cuda_ctx *c, float *dw, const void *dy, const void *x,
                                      int n, int in, int out, int flags, int rows, float *partials,
                                      cudaStream_t stream, pg_error *err) {
  if (n < 1 || in < 1 || out < 1 || rows < 1)
    return pg_fail(err, "", -1, "matmul split: bad shape n=%d in=%d out=%d rows=%d", n, in, out,
                   rows);
  const int chunks = matmul_split_chunks(n, rows), bf = flags & KERNEL_BF16;
  const size_t len = (size_t)out * in, elem = bf ? 2 : 4;
  const char *dyb = dy, *xb = x;
  /* The full chunks as one batched product (their partials come out back
   * to back, as their rows lie), so their tiles run side by side; one
   * cuBLASLt call per chunk ran each on a few of the GPU's SMs (8 blocks
   * for the baseline's, H100 profile of 2026-11-28). A short last chunk
   * on its own. */
  const int full = n / rows, last = n - full * rows;
  if (full > 0 && matmul_backward_weight_batch_cuda(c, partials, dy, x, rows, in, out, full,
                                                    KERNEL_PARTIAL | bf, stream, err))
    return -1;
  if (last > 0 && matmul_backward_weight_cuda(c, partials + (size_t)full * len,
                                              dyb + (size_t)full * rows * out * elem,
                                              xb + (size_t)full * rows * in * elem, last, in, out,
                                              KERNEL_PARTIAL | bf, stream, err))
    return -1;
  return matmul_split_sum_cuda(dw, partials, chunks, len, flags, stream, err);
}
#endif
