/* Matrix multiply of a linear layer without bias, as F.linear:
 *   y[n, o] = sum_i x[n, i] * w[o, i]        (y = x W^T, W is [out, in])
 * and its backward
 *   dx[n, i] = sum_o dy[n, o] * w[o, i]
 *   dw[o, i] = sum_n dy[n, o] * x[n, i].
 * Every output element is one float32 sum taken by one thread in index
 * order (i, o or n ascending, starting from 0), each term added by one
 * fused multiply-add (acc = fmaf(a, b, acc): one rounding per term, as
 * PyTorch's CPU matmuls do), so the result is the same bits for any thread
 * count, any tiling and any x86-64: the blocked kernels only change which
 * outputs are computed together, never a sum's order, and their FMA
 * instructions round as fmaf does (kernels/gemm.h).
 * Flags (kernels/flags.h): KERNEL_BF16 rounds each finished sum (bf16
 * matmul output with float32 accumulation; inputs must already be bf16);
 * KERNEL_ACCUMULATE / KERNEL_OUT_FP32 add into the destination. */
#ifndef PGOLF_MATMUL_H
#define PGOLF_MATMUL_H

#include <stdint.h>

#include "kernels/flags.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What cuBLASLt may assume of an operand's address: the largest power of
 * two that divides it, at most 256 (cuBLASLt's default assumption and what
 * cudaMalloc gives). A weight inside the flat parameter buffer has less;
 * kernels/matmul.cu tells the heuristic so and keys its plans by it. Plain
 * C so that the CPU tests check it. */
static inline unsigned matmul_cuda_alignment(const void *p) {
  uintptr_t a = (uintptr_t)p;
  unsigned k = 256;
  while (k > 1 && a % k) k >>= 1;
  return k;
}

void matmul_forward(float *y, const float *x, const float *w, int n, int in, int out, int flags);
void matmul_backward_input(float *dx, const float *dy, const float *w, int n, int in, int out,
                           int flags);
void matmul_backward_weight(float *dw, const float *dy, const float *x, int n, int in, int out,
                            int flags);

/* For tests: which micro-kernel the blocked kernels use (gemm.h's
 * GEMM_*). 0: the widest the CPU supports (default); 1: scalar fmaf (the
 * path of a CPU without FMA); 2: AVX2 + FMA; 3: AVX-512F, each where
 * supported. All give the same bits. */
void matmul_select_kernel(int which);
/* The micro-kernel in use: "avx512f", "avx2+fma", or "fmaf (no FMA unit:
 * slow)"; matmul_kernel_slow() is 1 for the last, the path of a CPU
 * without FMA (the same bits through the C library's fmaf, many times
 * slower: the trainer says so in its log). */
const char *matmul_kernel_name(void);
int matmul_kernel_slow(void);

/* The plain triple loops the blocked kernels must equal bit for bit (kept
 * for the tests). */
void matmul_forward_simple(float *y, const float *x, const float *w, int n, int in, int out,
                           int flags);
void matmul_backward_input_simple(float *dx, const float *dy, const float *w, int n, int in,
                                  int out, int flags);
void matmul_backward_weight_simple(float *dw, const float *dy, const float *x, int n, int in,
                                   int out, int flags);

#ifdef PGOLF_HAVE_CUDA
/* The GPU twins, through cuBLASLt (kernels/matmul.cu). Not the CPU's bits:
 * cuBLASLt sums in its own order, so a GPU product is compared with the
 * CPU's within |gpu - cpu| <= MATMUL_CUDA_RTOL * k * sum_k |a b| (+ one bf16
 * rounding of the result under KERNEL_BF16); run to run it is bitwise,
 * because:
 *   - the algorithm is chosen once per shape and operand alignment (the
 *     first call; the heuristic is told each operand's alignment, since
 *     its default of 256 bytes does not hold for views) and reused,
 *     with split-K reduction masked off (CUBLASLT_REDUCTION_SCHEME_NONE, so
 *     no partial sums land in an order the hardware decides), from one
 *     fixed workspace, on the caller's one stream;
 *   - fp32 is CUBLAS_COMPUTE_32F with float32 operands (TF32 only ever
 *     comes with the *_FAST_TF32 compute types, never used here);
 *     KERNEL_BF16 means bf16 operands (device arrays of bf16, as
 *     uint16_t) with float32 accumulation and a bf16 result, as autocast's
 *     linear layers compute.
 * Every chosen algorithm is recorded (its 64 descriptor bytes, the
 * workspace it uses) for the run manifest, so a replay can tell when it
 * runs something else. */
#include <cuda_runtime_api.h>

#include "common/error.h"

/* jansson's object, declared rather than included: the .cu files that
 * include this header compile where jansson's headers may be absent (the
 * GPU machine's static checks); the .c callers include <jansson.h>. */
struct json_t;

/* 2 x FLT_EPSILON: each summation order errs by at most k eps sum |a b|. */
#define MATMUL_CUDA_RTOL 2.4e-7

typedef struct matmul_cuda_ctx matmul_cuda_ctx;

/* A cuBLASLt handle and one workspace of workspace_bytes on the current
 * device. Fails with "no CUDA device: ..." where there is none. */
int matmul_cuda_init(matmul_cuda_ctx **ctx, size_t workspace_bytes, pg_error *err);
void matmul_cuda_free(matmul_cuda_ctx *ctx);

/* y[n,out] = x[n,in] W[out,in]^T. Flags: KERNEL_BF16 (all three bf16). */
int matmul_forward_cuda(matmul_cuda_ctx *c, void *y, const void *x, const void *w, int n, int in,
                        int out, int flags, cudaStream_t stream, pg_error *err);
/* dx[n,in] = dy[n,out] W[out,in]. */
int matmul_backward_input_cuda(matmul_cuda_ctx *c, void *dx, const void *dy, const void *w, int n,
                               int in, int out, int flags, cudaStream_t stream, pg_error *err);
/* batch products of one shape at once (one cuBLASLt call, strided
 * batches): matrix b of each operand and of the result is stored right
 * after matrix b - 1 (x + b n in, w + b out in, y + b n out, and so on).
 * Each product is the unbatched call's on its matrices; whether a GPU
 * gives it the same bits as the unbatched plan is cuBLASLt's choice of
 * algorithm (the plan, recorded with its batch), run to run it is
 * bitwise. Newton-Schulz iterates the Muon matrices of one shape so. */
int matmul_forward_batch_cuda(matmul_cuda_ctx *c, void *y, const void *x, const void *w, int n,
                              int in, int out, int batch, int flags, cudaStream_t stream,
                              pg_error *err);
int matmul_backward_input_batch_cuda(matmul_cuda_ctx *c, void *dx, const void *dy, const void *w,
                                     int n, int in, int out, int batch, int flags,
                                     cudaStream_t stream, pg_error *err);
/* dw[out,in] = dy[n,out]^T x[n,in]; KERNEL_ACCUMULATE adds into dw
 * (float32 only: a bf16 gradient is added to its float32 .grad by the
 * caller, rounded first, as autograd does). KERNEL_PARTIAL: dw is a
 * float32 partial sum, unrounded even of bf16 operands, never
 * accumulated (kernels/matmul_split.h). */
int matmul_backward_weight_cuda(matmul_cuda_ctx *c, void *dw, const void *dy, const void *x, int n,
                                int in, int out, int flags, cudaStream_t stream, pg_error *err);
/* batch weight gradients of one shape at once (strided batches, as the
 * forward's): dw + b out in from dy + b n out and x + b n in. The split
 * product's chunks run so (kernels/matmul_split.h). */
int matmul_backward_weight_batch_cuda(matmul_cuda_ctx *c, void *dw, const void *dy, const void *x,
                                      int n, int in, int out, int batch, int flags,
                                      cudaStream_t stream, pg_error *err);

/* One chosen plan as a manifest records it (matmul_cuda_plans_json). */
typedef struct matmul_plan_info {
  const char *op; /* "forward", "backward_input", "backward_weight" */
  int n, in, out, batch;
  const char *dtype; /* "fp32", "bf16", or with ", partial": KERNEL_PARTIAL's float32 result */
  int accumulate;
  unsigned align_bytes[3];     /* A, B, D as the plan assumed them */
  unsigned char algo[64];      /* cuBLASLt's cublasLtMatmulAlgo_t, its bytes */
  size_t algo_workspace_bytes; /* of the workspace, what the algorithm uses */
} matmul_plan_info;

/* The plans chosen so far, in the order of their first use; plan i
 * (0 <= i < count) into *out. */
int matmul_cuda_plan_count(const matmul_cuda_ctx *c);
void matmul_cuda_plan_info(const matmul_cuda_ctx *c, int i, matmul_plan_info *out);
/* The workspace's bytes, and the cuBLASLt library's version (0 where
 * there is none: the CPU stand-in). */
size_t matmul_cuda_workspace_bytes(const matmul_cuda_ctx *c);
size_t matmul_cuda_lt_version(void);

/* {"cublaslt_version": N, "workspace_bytes": N, "plans": [{"op", "n", "in",
 * "out", "batch", "dtype", "accumulate", "align_bytes": [A, B, D],
 * "algo": "<128 hex digits>", "algo_workspace_bytes"}...]}: the fields
 * above (kernels/matmul_plans.c; NULL when out of memory). */
struct json_t *matmul_cuda_plans_json(const matmul_cuda_ctx *c);
#endif

#ifdef __cplusplus
}
#endif

#endif
