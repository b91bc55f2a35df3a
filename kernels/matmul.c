#include "kernels/matmul.h"

#include <math.h>
#include <stddef.h>

#include "kernels/gemm.h"
#include "kernels/scratch.h"

/* ---- Plain loops: the definition of every sum's order. ----
 * Each term is one fused multiply-add (fmaf: one rounding, correctly
 * rounded by the C library where the CPU has no FMA unit). */

void matmul_forward_simple(float *y, const float *x, const float *w, int n, int in, int out,
                           int flags) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < n; r++)
    for (int o = 0; o < out; o++) {
      float acc = 0.0f;
      for (int i = 0; i < in; i++) acc = fmaf(x[(size_t)r * in + i], w[(size_t)o * in + i], acc);
      kernel_store(&y[(size_t)r * out + o], acc, flags);
    }
}

void matmul_backward_input_simple(float *dx, const float *dy, const float *w, int n, int in,
                                  int out, int flags) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < n; r++)
    for (int i = 0; i < in; i++) {
      float acc = 0.0f;
      for (int o = 0; o < out; o++)
        acc = fmaf(dy[(size_t)r * out + o], w[(size_t)o * in + i], acc);
      kernel_store(&dx[(size_t)r * in + i], acc, flags);
    }
}

void matmul_backward_weight_simple(float *dw, const float *dy, const float *x, int n, int in,
                                   int out, int flags) {
#pragma omp parallel for schedule(static)
  for (int o = 0; o < out; o++)
    for (int i = 0; i < in; i++) {
      float acc = 0.0f;
      for (int r = 0; r < n; r++) acc = fmaf(dy[(size_t)r * out + o], x[(size_t)r * in + i], acc);
      kernel_store(&dw[(size_t)o * in + i], acc, flags);
    }
}

/* ---- Blocked kernels (kernels/gemm.h) ----
 * B is packed into panels of NR columns (k-major, zero-padded at the
 * edge); each MR x NR tile of C is computed by one thread with its sums in
 * registers: for each k, one broadcast of A(m, k) (read in place: packing
 * A cost as much as the products for the small model's shapes) times a
 * vector of B(n.., k), fused into the accumulators. Each accumulator
 * receives exactly the fused multiply-adds of the plain loop in the same
 * order, so the bits are the plain loop's: the vector paths only widen
 * the vectors (_mm512_fmadd_ps and _mm256_fmadd_ps round each lane once,
 * as fmaf does), and the path for a CPU without FMA calls fmaf itself. No
 * path depends on the compiler contracting a * b + c (-ffp-contract=off):
 * every FMA is written out. */

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define GEMM_X86 1
#endif

enum { MR = 6, NR_MAX = 32 };

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* tile[MR][2W] (rows ldt floats apart) = (init ? tile : 0) + the sum over k in [k0, k1) of
 * ar[r][k * sak] * bp[k][c], one FMA per term (ar: the tile's MR row
 * pointers into A). Under tri (GEMM_K_LE_M or GEMM_K_GE_M) the k in the
 * band [d, d + MR) are kept only for the rows on the kept side of row r's
 * diagonal k = d + r; the caller has already cut [k0, k1) to the kept
 * side of the band. */
#define MICRO_BODY(VT, W, ZERO, LOAD, STORE, BCAST, FMA)                                   \
  VT acc[MR][2];                                                                           \
  _Pragma("GCC unroll 6") for (int r = 0; r < MR; r++) {                                   \
    acc[r][0] = init ? LOAD(tile + (size_t)r * ldt) : ZERO;                                \
    acc[r][1] = init ? LOAD(tile + (size_t)r * ldt + W) : ZERO;                            \
  }                                                                                        \
  int b0 = k1, b1 = k1;                                                                    \
  if (tri != GEMM_FULL) {                                                                  \
    b0 = clampi(d, k0, k1);                                                                \
    b1 = clampi(d + MR, k0, k1);                                                           \
  }                                                                                        \
  for (int k = k0; k < b0; k++) {                                                          \
    VT x0 = LOAD(bp + (size_t)k * 2 * W), x1 = LOAD(bp + (size_t)k * 2 * W + W);           \
    _Pragma("GCC unroll 6") for (int r = 0; r < MR; r++) {                                 \
      VT av = BCAST(ar[r][(size_t)k * sak]);                                               \
      acc[r][0] = FMA(av, x0, acc[r][0]);                                                  \
      acc[r][1] = FMA(av, x1, acc[r][1]);                                                  \
    }                                                                                      \
  }                                                                                        \
  for (int k = b0; k < b1; k++) {                                                          \
    VT x0 = LOAD(bp + (size_t)k * 2 * W), x1 = LOAD(bp + (size_t)k * 2 * W + W);           \
    _Pragma("GCC unroll 6") for (int r = 0; r < MR; r++) {                                 \
      if (tri == GEMM_K_LE_M ? r < k - d : r > k - d) continue;                            \
      VT av = BCAST(ar[r][(size_t)k * sak]);                                               \
      acc[r][0] = FMA(av, x0, acc[r][0]);                                                  \
      acc[r][1] = FMA(av, x1, acc[r][1]);                                                  \
    }                                                                                      \
  }                                                                                        \
  for (int k = b1; k < k1; k++) {                                                          \
    VT x0 = LOAD(bp + (size_t)k * 2 * W), x1 = LOAD(bp + (size_t)k * 2 * W + W);           \
    _Pragma("GCC unroll 6") for (int r = 0; r < MR; r++) {                                 \
      VT av = BCAST(ar[r][(size_t)k * sak]);                                               \
      acc[r][0] = FMA(av, x0, acc[r][0]);                                                  \
      acc[r][1] = FMA(av, x1, acc[r][1]);                                                  \
    }                                                                                      \
  }                                                                                        \
  _Pragma("GCC unroll 6") for (int r = 0; r < MR; r++) {                                   \
    STORE(tile + (size_t)r * ldt, acc[r][0]);                                              \
    STORE(tile + (size_t)r * ldt + W, acc[r][1]);                                          \
  }

#define MICRO_ARGS                                                                          \
  const float *const *restrict ar, size_t sak, const float *restrict bp, int k0, int k1, int d, \
      int tri, float *restrict tile, size_t ldt, int init

#ifdef GEMM_X86
#define L512(p) _mm512_loadu_ps(p)
#define S512(p, v) _mm512_storeu_ps((p), (v))
__attribute__((target("avx512f"))) static void micro_avx512(MICRO_ARGS) {
  MICRO_BODY(__m512, 16, _mm512_setzero_ps(), L512, S512, _mm512_set1_ps, _mm512_fmadd_ps)
}

#define L256(p) _mm256_loadu_ps(p)
#define S256(p, v) _mm256_storeu_ps((p), (v))
__attribute__((target("avx2,fma"))) static void micro_avx2(MICRO_ARGS) {
  MICRO_BODY(__m256, 8, _mm256_setzero_ps(), L256, S256, _mm256_set1_ps, _mm256_fmadd_ps)
}
#endif

/* The path for a CPU without FMA: the library's fmaf, one lane at a time.
 * (Compiled for baseline x86-64, so fmaf is a call, never an instruction
 * the CPU may lack.) */
#define LF(p) (*(p))
#define SF(p, v) (*(p) = (v))
#define BF(a) (a)
static void micro_fmaf(MICRO_ARGS) { MICRO_BODY(float, 1, 0.0f, LF, SF, BF, fmaf) }

typedef void (*micro_fn)(MICRO_ARGS);

static int kernel_choice; /* gemm_select_kernel */

void gemm_select_kernel(int which) { kernel_choice = which; }

/* The micro-kernel for kernel_choice that this CPU runs, its tile width
 * (2 vectors) and its name. */
static micro_fn pick_micro(int *nr, const char **name) {
#ifdef GEMM_X86
  __builtin_cpu_init();
  int has512 = __builtin_cpu_supports("avx512f");
  int has2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (kernel_choice != GEMM_FMAF && has512 &&
      (kernel_choice != GEMM_AVX2 || !has2)) {
    *nr = 32;
    *name = "avx512f";
    return micro_avx512;
  }
  if (kernel_choice != GEMM_FMAF && has2) {
    *nr = 16;
    *name = "avx2+fma";
    return micro_avx2;
  }
#endif
  *nr = 2;
  *name = "fmaf (no FMA unit: slow)";
  return micro_fmaf;
}

const char *gemm_kernel_name(void) {
  int nr;
  const char *name;
  pick_micro(&nr, &name);
  return name;
}

/* Copy rows [n0, n0 + W) of B(n, k) into one k-major panel, zero past N.
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
      if (s_row == 1)
        memcpy(d, col, (size_t)rows * sizeof *d);
      else
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

/* The tile's starting sums under cont: C's values, zero in the padding. */
static void load_tile(float *tile, const float *C, size_t ldc, int NR, int rows, int cols) {
  memset(tile, 0, (size_t)MR * NR * sizeof *tile);
  for (int r = 0; r < rows; r++)
    memcpy(tile + (size_t)r * NR, C + (size_t)r * ldc, (size_t)cols * sizeof *tile);
}

/* Terms per pass: a product of K terms is computed in passes of at most
 * KC, each tile's sums carried between passes (stored and reloaded
 * exactly, in C or, when the flags must finish the whole sum, in a
 * scratch; the flags applied after the last pass), which is the plain
 * loop continued (kernels/gemm.h, cont). Bounds the packed panels
 * (a B panel of NR x KC floats stays in L2 while the tiles of its column
 * stream past) and the packing buffers, whatever K: a weight gradient
 * sums over every token of a micro-batch. The buffers are the calling
 * thread's (kernels/scratch.h), kept for the next product. */
enum { KC = 1024 };

/* One product's micro-kernel, tiling and, pass by pass, its packed
 * panels. */
typedef struct plan {
  micro_fn micro;
  int NR, mp, np;
  int c0, kc; /* the pass: terms [c0, c0 + kc) */
  /* B: own (packed here: panel q at Bp + q * kc * NR, the pass's terms)
   * or the caller's (panel q at Bp + q * kp * NR, every term). */
  const float *Bp;
  float *own_b;
  size_t kp;
  /* A, packed when its terms are not adjacent in memory (sak != 1, as in
   * a weight gradient's dy^T) and at least 4 B panels reuse it: panel p
   * at Ap + p * kc * MR holds A(m0 + r, c0 + k) at k * MR + r, so the
   * broadcasts of each k are adjacent instead of one page apart. With
   * fewer panels (attention's dk and dv, 64 columns) the packing costs
   * more than it saves. NULL: A read in place. */
  float *Ap;
  /* Where the sums wait between passes: C itself, unless the finishing
   * flags must see the whole sum at once (a rounding, or an accumulation
   * into C's old value), then a scratch M x N (ldw = N). */
  float *W;
  size_t ldw;
} plan;

/* The plan of g's first pass; the packing buffers from the calling
 * thread's cache. */
static void plan_init(plan *pl, const gemm *g) {
  const char *name;
  pl->micro = pick_micro(&pl->NR, &name);
  pl->mp = (g->M + MR - 1) / MR;
  pl->np = (g->N + pl->NR - 1) / pl->NR;
  size_t kc = (size_t)(g->K < KC ? g->K : KC);
  if (kc == 0) kc = 1;
  pl->c0 = 0;
  pl->kc = g->K < KC ? g->K : KC;
  pl->own_b = g->Bp ? NULL : scratch_floats(SCRATCH_GEMM_B, (size_t)pl->np * pl->NR * kc);
  pl->Bp = g->Bp ? g->Bp : pl->own_b;
  pl->kp = g->Bp ? (size_t)g->kp : kc;
  pl->Ap = g->sak != 1 && g->M > 0 && pl->np >= 4
               ? scratch_floats(SCRATCH_GEMM_A, (size_t)pl->mp * MR * kc)
               : NULL;
  pl->W = g->C;
  pl->ldw = g->ldc;
  if (g->K > KC && g->flags != 0) {
    pl->W = scratch_floats(SCRATCH_GEMM_C, (size_t)g->M * g->N);
    pl->ldw = (size_t)g->N;
  }
}

/* The number of passes and the terms of pass c. */
static int passes(const gemm *g) { return g->K <= KC ? 1 : (g->K + KC - 1) / KC; }

static void plan_pass(plan *pl, const gemm *g, int c) {
  pl->c0 = c * KC;
  pl->kc = g->K - pl->c0 < KC ? g->K - pl->c0 : KC;
}

/* Packing job j of the pass: B panel j (when B is packed here), then A
 * panel j - np (when A is). */
static int pack_jobs(const plan *pl) { return (pl->own_b ? pl->np : 0) + (pl->Ap ? pl->mp : 0); }

static void pack_job(const gemm *g, const plan *pl, int j) {
  const int NR = pl->NR, K = pl->kc;
  if (pl->own_b && j < pl->np) {
    int cols = g->N - j * NR < NR ? g->N - j * NR : NR;
    pack_panel(pl->own_b + (size_t)j * K * NR,
               g->B + (size_t)j * NR * g->sbn + (size_t)pl->c0 * g->sbk, g->sbn, g->sbk, cols,
               NR, K);
    return;
  }
  int p = pl->own_b ? j - pl->np : j, m0 = p * MR;
  int rows = g->M - m0 < MR ? g->M - m0 : MR;
  float *dst = pl->Ap + (size_t)p * K * MR;
  /* Rows past M repeat the last row (their sums are not stored). k
   * outer: the MR values of one k are adjacent when sam is 1. */
  const float *a[MR];
  for (int r = 0; r < MR; r++)
    a[r] = g->A + (size_t)(m0 + (r < rows ? r : rows - 1)) * g->sam + (size_t)pl->c0 * g->sak;
  for (int k = 0; k < K; k++)
    for (int r = 0; r < MR; r++) dst[(size_t)k * MR + r] = a[r][(size_t)k * g->sak];
}

/* Tile t of C over the pass's terms (B panels outer: one B panel stays in
 * cache while the smaller A panels stream past it), its k range cut to
 * the triangle; the first pass starts from 0 (or C under cont), the
 * others from C, and the last applies the flags. */
static void run_tile(const gemm *g, const plan *pl, long t, int last, float *tile) {
  const int NR = pl->NR, q = (int)(t / pl->mp), p = (int)(t % pl->mp);
  const int m0 = p * MR, n0 = q * NR, c0 = pl->c0;
  const int rows = g->M - m0 < MR ? g->M - m0 : MR, cols = g->N - n0 < NR ? g->N - n0 : NR;
  const int d = m0 + g->diag;
  int k0 = 0, k1 = g->K, tri = GEMM_FULL;
  if (g->tri == GEMM_N_LE_M && n0 > m0 + rows - 1 + g->diag) return;
  if (g->tri == GEMM_K_LE_M) k1 = clampi(d + MR, 0, g->K);
  if (g->tri == GEMM_K_GE_M) k0 = clampi(d, 0, g->K);
  if (g->tri == GEMM_K_LE_M || g->tri == GEMM_K_GE_M) tri = g->tri;
  /* This pass's share of [k0, k1), relative to c0. */
  k0 = clampi(k0 - c0, 0, pl->kc);
  k1 = clampi(k1 - c0, 0, pl->kc);
  int init = g->cont || c0 > 0;
  /* A whole tile whose sums need no finishing is computed in place (in
   * C, or in W between passes); an edge tile or one the flags finish
   * goes through the local buffer. */
  float *dst = last ? g->C + (size_t)m0 * g->ldc + n0 : pl->W + (size_t)m0 * pl->ldw + n0;
  size_t ldd = last ? g->ldc : pl->ldw;
  int direct = rows == MR && cols == NR && (!last || g->cont || g->flags == 0);
  /* Under cont W is C (cont comes with flags 0), and a direct tile that
   * starts from W ends in W (or in C, which W then is). */
  if (init && !direct)
    load_tile(tile, pl->W + (size_t)m0 * pl->ldw + n0, pl->ldw, NR, rows, cols);
  const float *ar[MR];
  size_t sak = g->sak;
  if (pl->Ap) {
    for (int r = 0; r < MR; r++) ar[r] = pl->Ap + (size_t)p * pl->kc * MR + r;
    sak = MR;
  } else {
    for (int r = 0; r < MR; r++)
      ar[r] = g->A + (size_t)(m0 + (r < rows ? r : rows - 1)) * g->sam + (size_t)c0 * g->sak;
  }
  const float *bp = pl->own_b ? pl->own_b + (size_t)q * pl->kc * NR
                              : pl->Bp + (size_t)q * pl->kp * NR + (size_t)c0 * NR;
  if (direct) {
    pl->micro(ar, sak, bp, k0, k1, d - c0, tri, dst, ldd, init);
    return;
  }
  pl->micro(ar, sak, bp, k0, k1, d - c0, tri, tile, (size_t)NR, init);
  store_tile(dst, ldd, tile, NR, rows, cols, last && !g->cont ? g->flags : 0);
}

void gemm_run(const gemm *g) {
  plan pl;
  plan_init(&pl, g);
  const int n = passes(g);
#pragma omp parallel firstprivate(pl)
  {
    float tile[MR * NR_MAX];
    for (int c = 0; c < n; c++) {
      plan_pass(&pl, g, c);
#pragma omp for schedule(static)
      for (int j = 0; j < pack_jobs(&pl); j++) pack_job(g, &pl, j);
#pragma omp for schedule(static)
      for (long t = 0; t < (long)pl.mp * pl.np; t++) run_tile(g, &pl, t, c == n - 1, tile);
    }
  }
}

void gemm_serial(const gemm *g) {
  plan pl;
  plan_init(&pl, g);
  const int n = passes(g);
  float tile[MR * NR_MAX];
  for (int c = 0; c < n; c++) {
    plan_pass(&pl, g, c);
    for (int j = 0; j < pack_jobs(&pl); j++) pack_job(g, &pl, j);
    for (long t = 0; t < (long)pl.mp * pl.np; t++) run_tile(g, &pl, t, c == n - 1, tile);
  }
}

size_t gemm_packed_b_floats(int N, int K) {
  int NR;
  const char *name;
  pick_micro(&NR, &name);
  return (size_t)((N + NR - 1) / NR) * NR * (size_t)(K > 0 ? K : 1);
}

void gemm_pack_b(float *Bp, const gemm *g) {
  int NR;
  const char *name;
  pick_micro(&NR, &name);
  for (int q = 0; q < (g->N + NR - 1) / NR; q++) {
    int cols = g->N - q * NR < NR ? g->N - q * NR : NR;
    pack_panel(Bp + (size_t)q * g->K * NR, g->B + (size_t)q * NR * g->sbn, g->sbn, g->sbk, cols,
               NR, g->K);
  }
}

void matmul_select_kernel(int which) { gemm_select_kernel(which); }

const char *matmul_kernel_name(void) { return gemm_kernel_name(); }

int matmul_kernel_slow(void) {
  int nr;
  const char *name;
  return pick_micro(&nr, &name) == micro_fmaf;
}

void matmul_forward(float *y, const float *x, const float *w, int n, int in, int out, int flags) {
  gemm g = {x, w, (size_t)in, 1, (size_t)in, 1, n, out, in, y, (size_t)out, flags,
            0, 0, 0, NULL, 0};
  gemm_run(&g);
}

void matmul_backward_input(float *dx, const float *dy, const float *w, int n, int in, int out,
                           int flags) {
  gemm g = {dy, w, (size_t)out, 1, 1, (size_t)in, n, in, out, dx, (size_t)in, flags,
            0, 0, 0, NULL, 0};
  gemm_run(&g);
}

void matmul_backward_weight(float *dw, const float *dy, const float *x, int n, int in, int out,
                            int flags) {
  gemm g = {dy, x, 1, (size_t)out, 1, (size_t)in, out, in, n, dw, (size_t)in, flags,
            0, 0, 0, NULL, 0};
  gemm_run(&g);
}
