/* A residual update of the stream and the RMSNorm of its result, in one
 * pass over each row: the forward's x_mix -> n1, x_mid -> n2 and x_out ->
 * the final norm, each of which was a residual kernel writing the stream
 * and a norm reading it straight back. Per row:
 *   u = scale_add_out(x, s, y)           when s is given (stored in u:
 *                                        x_mid, x_out, or a skip's x_in)
 *   v = residual_mix_out(u, x0, mix)     when mix is given (stored in v:
 *                                        x_mix); u is x without s
 *   n = rmsnorm(v, or u without mix), rstd
 * with add_flags for the first two (scale_add.h's and residual_mix.h's
 * elementwise code) and norm_flags for the norm (rmsnorm.h's).
 *
 * residual_norm_forward is that sequence of kernels on the CPU,
 * scale_add_forward, residual_mix_forward and rmsnorm_forward (or its
 * tree ref with KERNEL_TREE in norm_flags), so the contract is theirs.
 * The CUDA twin (residual_norm.cu): one warp per row, as rmsnorm.cu's,
 * each lane computing and storing its elements of u and v, then the row's
 * sum of squares by rmsnorm_warp.h's tree over the values it stored (its
 * own writes, read back by the same thread), so it equals
 * residual_norm_forward with KERNEL_TREE bit for bit. */
#ifndef PGOLF_RESIDUAL_NORM_H
#define PGOLF_RESIDUAL_NORM_H

#include <stdint.h>

#include "kernels/flags.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The arrays of one call: [rows, d] unless said; s and mix per channel. */
typedef struct residual_norm_io {
  const float *x;      /* the stream's input */
  const float *s;      /* scale_add's scale [d], or NULL: no add */
  const float *y;      /* its addend, floats ... */
  const uint16_t *y16; /* ... or packed (CUDA only; exactly one of the two) */
  float *u;            /* x + s y (may be x) */
  const float *x0;     /* the mix's second input */
  const float *mix;    /* residual_mix's [2, d] weights, or NULL: no mix */
  float *v;            /* the mix */
  float *n;            /* the norm's output (may be NULL on the GPU with n16) */
  uint16_t *n16;       /* its packed copy (CUDA only), or NULL */
  float *rstd;         /* [rows] */
} residual_norm_io;

/* On the CPU: floats only (y16 and n16 unused; n required). */
void residual_norm_forward(const residual_norm_io *io, int rows, int d, int add_flags,
                           int norm_flags);

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

/* The CUDA twin: device pointers, launched on stream; no scratch, no
 * allocation. Refused: s without u or without exactly one of y and y16;
 * mix without v or x0; neither n nor n16; a packed copy of results that
 * are not all bf16 (kernels/flags.h). */
int residual_norm_forward_cuda(const residual_norm_io *io, int rows, int d, int add_flags,
                               int norm_flags, cudaStream_t stream, pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
