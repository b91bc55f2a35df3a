#include "kernels/matmul.h"

#include <stddef.h>

/* ---- Plain loops: the definition of every sum's order. ---- */

void matmul_forward_simple(float *y, const float *x, const float *w, int n, int in, int out,
                           int flags) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < n; r++)
    for (int o = 0; o < out; o++) {
      float acc = 0.0f;
      for (int i = 0; i < in; i++) acc += x[(size_t)r * in + i] * w[(size_t)o * in + i];
      kernel_store(&y[(size_t)r * out + o], acc, flags);
    }
}

void matmul_backward_input_simple(float *dx, const float *dy, const float *w, int n, int in,
                                  int out, int flags) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < n; r++)
    for (int i = 0; i < in; i++) {
      float acc = 0.0f;
      for (int o = 0; o < out; o++) acc += dy[(size_t)r * out + o] * w[(size_t)o * in + i];
      kernel_store(&dx[(size_t)r * in + i], acc, flags);
    }
}

void matmul_backward_weight_simple(float *dw, const float *dy, const float *x, int n, int in,
                                   int out, int flags) {
#pragma omp parallel for schedule(static)
  for (int o = 0; o < out; o++)
    for (int i = 0; i < in; i++) {
      float acc = 0.0f;
      for (int r = 0; r < n; r++) acc += dy[(size_t)r * out + o] * x[(size_t)r * in + i];
      kernel_store(&dw[(size_t)o * in + i], acc, flags);
    }
}

/* ---- Blocked kernels ----
 * One generic product C[m][n] = sum_k A(m, k) B(n, k), k ascending from 0,
 * with A and B addressed through strides. A is packed into panels of MR
 * rows and B into panels of NR columns (k-major, zero-padded at the
 * edges), then each MR x NR tile of C is computed by one thread with its
 * sums in registers: for each k, one broadcast of A(m, k) times a vector
 * of B(n.., k) added into the accumulators. Each accumulator receives
 * exactly the additions of the plain loop in the same order (no fused
 * multiply-add: contraction is off and no FMA target is enabled), so the
 * bits are the plain loop's. The AVX2 build of the micro-kernel only
 * widens the vectors; its lanes do the same IEEE operations. */

#include <stdlib.h>

enum { MR = 6, NR_MAX = 32 };

typedef float v8sf __attribute__((vector_size(32)));
typedef float v16sf __attribute__((vector_size(64)));

typedef struct gemm {
  const float *A, *B;
  size_t sam, sak, sbn, sbk; /* A(m,k) = A[m*sam + k*sak], B(n,k) = B[n*sbn + k*sbk] */
  int M, N, K;
  float *C;
  size_t ldc;
  int flags;
} gemm;

/* A tile of MR rows by two vectors of VT (W lanes each): NR = 2 W. */
#define MICRO_KERNEL_BODY(VT, W)                                                   \
  VT acc[MR][2];                                                                   \
  for (int r = 0; r < MR; r++) acc[r][0] = acc[r][1] = (VT){0};                    \
  for (int k = 0; k < K; k++) {                                                    \
    VT b0, b1;                                                                     \
    __builtin_memcpy(&b0, bp + (size_t)k * 2 * W, sizeof b0);                      \
    __builtin_memcpy(&b1, bp + (size_t)k * 2 * W + W, sizeof b1);                  \
    for (int r = 0; r < MR; r++) {                                                 \
      VT av = ap[(size_t)k * MR + r] - (VT){0};                                    \
      acc[r][0] += av * b0;                                                        \
      acc[r][1] += av * b1;                                                        \
    }                                                                              \
  }                                                                                \
  for (int r = 0; r < MR; r++) {                                                   \
    __builtin_memcpy(out + (size_t)r * 2 * W, &acc[r][0], sizeof acc[r][0]);       \
    __builtin_memcpy(out + (size_t)r * 2 * W + W, &acc[r][1], sizeof acc[r][1]);   \
  }

/* out[MR][NR] = the tile's sums. a - (VT){0} broadcasts a exactly (-0 too). */
__attribute__((target("avx512f"))) static void micro_avx512(const float *ap, const float *bp,
                                                             int K, float *out) {
  MICRO_KERNEL_BODY(v16sf, 16)
}

__attribute__((target("avx2"))) static void micro_avx2(const float *ap, const float *bp, int K,
                                                        float *out) {
  MICRO_KERNEL_BODY(v8sf, 8)
}

static void micro_generic(const float *ap, const float *bp, int K, float *out) {
  MICRO_KERNEL_BODY(v8sf, 8)
}

typedef void (*micro_fn)(const float *, const float *, int, float *);

static int kernel_choice; /* matmul_select_kernel */

void matmul_select_kernel(int which) { kernel_choice = which; }

/* The widest micro-kernel this CPU runs (or the one selected), and its
 * tile width. */
static micro_fn pick_micro(int *nr) {
  __builtin_cpu_init();
  *nr = 16;
  if (kernel_choice == 1) return micro_generic;
  if (kernel_choice == 2 && __builtin_cpu_supports("avx2")) return micro_avx2;
  if (__builtin_cpu_supports("avx512f")) {
    *nr = 32;
    return micro_avx512;
  }
  return __builtin_cpu_supports("avx2") ? micro_avx2 : micro_generic;
}

static void gemm_run(const gemm *g) {
  int NR;
  micro_fn micro = pick_micro(&NR);
  const int mp = (g->M + MR - 1) / MR, np = (g->N + NR - 1) / NR, K = g->K;
  float *Ap = malloc((size_t)mp * MR * (K > 0 ? K : 1) * sizeof *Ap);
  float *Bp = malloc((size_t)np * NR * (K > 0 ? K : 1) * sizeof *Bp);
  if (!Ap || !Bp) abort();
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int p = 0; p < mp; p++)
      for (int k = 0; k < K; k++)
        for (int r = 0; r < MR; r++) {
          int m = p * MR + r;
          Ap[((size_t)p * K + k) * MR + r] = m < g->M ? g->A[(size_t)m * g->sam + (size_t)k * g->sak] : 0.0f;
        }
#pragma omp for schedule(static)
    for (int q = 0; q < np; q++)
      for (int k = 0; k < K; k++)
        for (int c = 0; c < NR; c++) {
          int n = q * NR + c;
          Bp[((size_t)q * K + k) * NR + c] = n < g->N ? g->B[(size_t)n * g->sbn + (size_t)k * g->sbk] : 0.0f;
        }
    float tile[MR * NR_MAX];
#pragma omp for schedule(static)
    for (long t = 0; t < (long)mp * np; t++) {
      int p = (int)(t / np), q = (int)(t % np);
      micro(Ap + (size_t)p * K * MR, Bp + (size_t)q * K * NR, K, tile);
      for (int r = 0; r < MR && p * MR + r < g->M; r++)
        for (int c = 0; c < NR && q * NR + c < g->N; c++)
          kernel_store(&g->C[(size_t)(p * MR + r) * g->ldc + q * NR + c], tile[r * NR + c], g->flags);
    }
  }
  free(Ap);
  free(Bp);
}

void matmul_forward(float *y, const float *x, const float *w, int n, int in, int out, int flags) {
  gemm g = {x, w, (size_t)in, 1, (size_t)in, 1, n, out, in, y, (size_t)out, flags};
  gemm_run(&g);
}

void matmul_backward_input(float *dx, const float *dy, const float *w, int n, int in, int out,
                           int flags) {
  gemm g = {dy, w, (size_t)out, 1, 1, (size_t)in, n, in, out, dx, (size_t)in, flags};
  gemm_run(&g);
}

void matmul_backward_weight(float *dw, const float *dy, const float *x, int n, int in, int out,
                            int flags) {
  gemm g = {dy, x, 1, (size_t)out, 1, (size_t)in, out, in, n, dw, (size_t)in, flags};
  gemm_run(&g);
}
