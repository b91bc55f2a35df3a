/* The blocked product behind kernels/matmul.h and kernels/attention.c
 * (internal to the kernels):
 *
 *   C[m][n] = sum_k A(m, k) B(n, k),   A(m, k) = A[m*sam + k*sak],
 *                                       B(n, k) = B[n*sbn + k*sbk],
 *
 * each sum one float32 accumulator taken in k order, each term added by
 * one fused multiply-add (one rounding: fmaf's result, whatever the vector
 * width), so the bits are those of the plain loop
 *   acc = 0; for k ascending: acc = fmaf(A(m, k), B(n, k), acc)
 * for any thread count, tiling and CPU.
 *
 * tri restricts a sum to the causal triangle, with the diagonal at
 * k = m + diag (or n = m + diag):
 *   GEMM_K_LE_M  only terms k <= m + diag (trailing terms dropped);
 *   GEMM_K_GE_M  only terms k >= m + diag (leading terms dropped);
 *   GEMM_N_LE_M  full sums, but tiles wholly past the diagonal (every
 *                n > m + diag) are skipped: those C entries are left as
 *                they were, and entries of a computed tile past the
 *                diagonal hold sums the caller ignores.
 * Dropped terms are not computed at all (not added as zeros, which could
 * turn a -0 sum into +0), so a restricted sum is the plain loop over the
 * kept k. A row whose kept range is empty gets 0 (or its C value under
 * cont).
 * cont: each sum starts from C's current value instead of 0, i.e. the
 * plain loop continued: a sum split at any k into two calls, the second
 * with cont, gives the same bits as one call. Only with flags 0.
 * flags: as kernels/flags.h, applied when each finished sum is stored. */
#ifndef PGOLF_GEMM_H
#define PGOLF_GEMM_H

#include <stddef.h>

enum { GEMM_FULL = 0, GEMM_K_LE_M = 1, GEMM_K_GE_M = 2, GEMM_N_LE_M = 3 };

typedef struct gemm {
  const float *A, *B;
  size_t sam, sak, sbn, sbk;
  int M, N, K;
  float *C;
  size_t ldc;
  int flags;
  int tri, diag, cont;
  /* Optional: B already packed by gemm_pack_b for kp >= K terms and at
   * least N columns (the first K terms of each panel are used), so a B
   * read by many products is packed once. NULL: packed by the call. */
  const float *Bp;
  int kp;
} gemm;

/* C as above, the work shared among the threads of an OpenMP parallel
 * region that gemm_run opens (call it outside one). */
void gemm_run(const gemm *g);
/* The same bits computed by the calling thread alone (for use inside a
 * parallel region, one product per thread). */
void gemm_serial(const gemm *g);

/* Floats gemm_pack_b needs for a B of N columns and K terms, and the
 * packing itself (g's B, N and K), for the micro-kernel in use: select
 * the kernel before packing. */
size_t gemm_packed_b_floats(int N, int K);
void gemm_pack_b(float *Bp, const gemm *g);

/* Which micro-kernel the blocked products use: GEMM_WIDEST (default: the
 * widest this CPU runs), GEMM_FMAF (scalar fmaf, the path for CPUs
 * without FMA: slow), GEMM_AVX2 (AVX2 + FMA), GEMM_AVX512 (AVX-512F).
 * A choice the CPU cannot run falls back to the widest it can. All give
 * the same bits. Not thread-safe: set it before the products run. */
enum { GEMM_WIDEST = 0, GEMM_FMAF = 1, GEMM_AVX2 = 2, GEMM_AVX512 = 3 };
void gemm_select_kernel(int which);
/* The name of the micro-kernel in use: "avx512f", "avx2+fma", or
 * "fmaf (no FMA unit: slow)". */
const char *gemm_kernel_name(void);

#endif
