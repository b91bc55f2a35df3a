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
#include <string.h>

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

/* Copy rows [m0, m0 + MR) of A(m, k) into one k-major panel, zero past M.
 * Pure copies: the loop order (chosen so the reads are contiguous) does
 * not change a value. Locals, not g->..., so stores through float
 * pointers do not force the fields to be reloaded (-fno-strict-aliasing). */
static void pack_panel(float *dst, const float *src, size_t s_row, size_t s_k, int rows, int W,
                       int K) {
  if (rows < W) memset(dst, 0, (size_t)K * W * sizeof *dst);
  if (s_k == 1) {
    for (int r = 0; r < rows; r++) {
      const float *row = src + (size_t)r * s_row;
      for (int k = 0; k < K; k++) dst[(size_t)k * W + r] = row[k];
    }
  } else {
    for (int k = 0; k < K; k++) {
      const float *col = src + (size_t)k * s_k;
      float *d = dst + (size_t)k * W;
      for (int r = 0; r < rows; r++) d[r] = col[(size_t)r * s_row];
    }
  }
}

/* Store one finished tile (rows x cols of it) into C. */
static void store_tile(float *C, size_t ldc, const float *tile, int NR, int rows, int cols,
                       int flags) {
  for (int r = 0; r < rows; r++) {
    float *c = C + (size_t)r * ldc;
    const float *t = tile + (size_t)r * NR;
    if (flags == 0)
      memcpy(c, t, (size_t)cols * sizeof *c);
    else
      for (int j = 0; j < cols; j++) kernel_store(&c[j], t[j], flags);
  }
}

static void gemm_run(const gemm *g) {
  int NR;
  micro_fn micro = pick_micro(&NR);
  const int M = g->M, N = g->N, K = g->K, flags = g->flags;
  const int mp = (M + MR - 1) / MR, np = (N + NR - 1) / NR;
  const float *A = g->A, *B = g->B;
  const size_t sam = g->sam, sak = g->sak, sbn = g->sbn, sbk = g->sbk, ldc = g->ldc;
  float *C = g->C;
  float *Ap = malloc((size_t)mp * MR * (K > 0 ? K : 1) * sizeof *Ap);
  float *Bp = malloc((size_t)np * NR * (K > 0 ? K : 1) * sizeof *Bp);
  if (!Ap || !Bp) abort();
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int p = 0; p < mp; p++) {
      int rows = M - p * MR < MR ? M - p * MR : MR;
      pack_panel(Ap + (size_t)p * K * MR, A + (size_t)p * MR * sam, sam, sak, rows, MR, K);
    }
#pragma omp for schedule(static)
    for (int q = 0; q < np; q++) {
      int cols = N - q * NR < NR ? N - q * NR : NR;
      pack_panel(Bp + (size_t)q * K * NR, B + (size_t)q * NR * sbn, sbn, sbk, cols, NR, K);
    }
    float tile[MR * NR_MAX];
#pragma omp for schedule(static)
    for (long t = 0; t < (long)mp * np; t++) {
      /* B panels outer: one B panel (NR x K) stays in cache while the
       * smaller A panels (MR x K) stream past it. */
      int q = (int)(t / mp), p = (int)(t % mp);
      micro(Ap + (size_t)p * K * MR, Bp + (size_t)q * K * NR, K, tile);
      int rows = M - p * MR < MR ? M - p * MR : MR, cols = N - q * NR < NR ? N - q * NR : NR;
      store_tile(C + (size_t)p * MR * ldc + (size_t)q * NR, ldc, tile, NR, rows, cols, flags);
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
