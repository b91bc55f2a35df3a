/* matmul: forward against a float64 reference, backward against float64
 * central differences, the blocked kernels bit-identical to the plain
 * (fmaf) loops for 1, 2 and 3 threads and every micro-kernel (AVX-512,
 * AVX2 + FMA, and the scalar fmaf path of CPUs without FMA), each term
 * one fused multiply-add, the bf16/accumulate flags, and gemm.h's
 * triangular and continued sums. Under make sanitize (PGOLF_TEST_SAMPLED,
 * tests/test_util.h) the two grids that take minutes there run one of
 * their three thread counts or modes per case, in turn: every
 * micro-kernel, shape, flag set and triangle still runs. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "kernels/gemm.h"
#include "kernels/matmul.h"
#include "kernels/matmul_split.h"
#include "tests/kernel_check.h"
#include "tests/test_util.h"

typedef struct {
  int n, in, out;
  const double *x, *w, *g; /* g: upstream gradient of y */
  int wrt_w;               /* perturb w (1) or x (0) */
} mm_ctx;

static void ref_matmul(double *y, const double *x, const double *w, int n, int in, int out) {
  for (int r = 0; r < n; r++)
    for (int o = 0; o < out; o++) {
      double s = 0.0;
      for (int i = 0; i < in; i++) s += x[r * in + i] * w[o * in + i];
      y[r * out + o] = s;
    }
}

/* L = sum(g * (x W^T)), as a function of x or W. */
static double mm_loss(const double *v, void *vctx) {
  mm_ctx *c = vctx;
  double *y = malloc((size_t)c->n * c->out * sizeof *y);
  ref_matmul(y, c->wrt_w ? c->x : v, c->wrt_w ? v : c->w, c->n, c->in, c->out);
  double L = 0.0;
  for (int i = 0; i < c->n * c->out; i++) L += c->g[i] * y[i];
  free(y);
  return L;
}

static void test_forward_and_gradients(void **state) {
  (void)state;
  const int n = 7, in = 13, out = 11;
  kc_rng rng = {42};
  float x[7 * 13], w[11 * 13], g[7 * 11], y[7 * 11], dx[7 * 13], dw[11 * 13];
  kc_fill(&rng, x, sizeof x / 4, 1.0);
  kc_fill(&rng, w, sizeof w / 4, 0.5);
  kc_fill(&rng, g, sizeof g / 4, 1.0);
  double *xd = kc_to_double(x, n * in), *wd = kc_to_double(w, out * in),
         *gd = kc_to_double(g, n * out);
  double yref[7 * 11];
  ref_matmul(yref, xd, wd, n, in, out);
  matmul_forward(y, x, w, n, in, out, 0);
  /* float32 sums of 13 products of size <= 1: |error| <= 13 * 2^-24 * sum|terms|. */
  KC_ASSERT_CLOSE(y, yref, (size_t)n * out, 1e-6, 1e-6, "forward");

  matmul_backward_input(dx, g, w, n, in, out, 0);
  matmul_backward_weight(dw, g, x, n, in, out, 0);
  mm_ctx c = {n, in, out, xd, wd, gd, 0};
  double fdx[7 * 13], fdw[11 * 13];
  kc_fd_grad(mm_loss, &c, xd, (size_t)n * in, 1e-3, fdx);
  c.wrt_w = 1;
  kc_fd_grad(mm_loss, &c, wd, (size_t)out * in, 1e-3, fdw);
  /* The loss is bilinear, so central differences are exact up to float64
   * rounding; the tolerance is the float32 sums' (<= 11 or 7 terms). */
  KC_ASSERT_CLOSE(dx, fdx, (size_t)n * in, 1e-5, 1e-5, "dx");
  KC_ASSERT_CLOSE(dw, fdw, (size_t)out * in, 1e-5, 1e-5, "dw");

  /* The check catches a wrong gradient: transpose one weight element. */
  dw[3] += 1e-3f;
  assert_true(kc_worst(dw, fdw, (size_t)out * in, 1e-5, 1e-5, NULL) > 1.0);
  free(xd);
  free(wd);
  free(gd);
}

/* Sizes that exercise every edge of the blocking (tails in all three
 * dimensions, and sizes bigger than a block). */
static const int shapes[][3] = {{1, 1, 1},     {5, 3, 7},     {37, 19, 45},  {64, 64, 64},
                                {130, 70, 33}, {29, 257, 18}, {300, 96, 160}};

/* A start for the accumulating products, and a pattern for the others
 * that no product gives, so an element the blocked kernel leaves
 * unwritten fails the comparison. */
static void fill_start(float *v, size_t n, int fl, float scale) {
  for (size_t i = 0; i < n; i++) v[i] = (fl & KERNEL_ACCUMULATE) ? (float)i * scale : -1e30f;
}

/* y = x W^T, dx = g W and dW = g^T x from their starts, with the plain
 * loops (plain) or the blocked kernels. */
static void three_products(int plain, float *y, float *dx, float *dw, const float *x,
                           const float *w, const float *g, int n, int in, int out, int fl) {
  fill_start(y, (size_t)n * out, fl, 0.25f);
  fill_start(dx, (size_t)n * in, fl, -0.125f);
  fill_start(dw, (size_t)out * in, fl, 0.5f);
  if (plain) {
    matmul_forward_simple(y, x, w, n, in, out, fl);
    matmul_backward_input_simple(dx, g, w, n, in, out, fl);
    matmul_backward_weight_simple(dw, g, x, n, in, out, fl);
  } else {
    matmul_forward(y, x, w, n, in, out, fl);
    matmul_backward_input(dx, g, w, n, in, out, fl);
    matmul_backward_weight(dw, g, x, n, in, out, fl);
  }
}

static void test_blocked_equals_simple_bitwise(void **state) {
  (void)state;
  for (int kernel = GEMM_WIDEST; kernel <= GEMM_AVX512; kernel++) {
    matmul_select_kernel(kernel);
    printf("matmul micro-kernel %d: %s\n", kernel, gemm_kernel_name());
  }
  kc_rng rng = {7};
  const int flag_sets[] = {0,
                           KERNEL_BF16,
                           KERNEL_ACCUMULATE,
                           KERNEL_ACCUMULATE | KERNEL_BF16,
                           KERNEL_ACCUMULATE | KERNEL_BF16 | KERNEL_OUT_FP32,
                           KERNEL_ACCUMULATE | KERNEL_OUT_FP32};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    const int n = shapes[s][0], in = shapes[s][1], out = shapes[s][2];
    const size_t ny = (size_t)n * out, nx = (size_t)n * in, nw = (size_t)out * in;
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *g = malloc(ny * 4);
    float *a = malloc(ny * 4), *b = malloc(ny * 4), *ax = malloc(nx * 4), *bx = malloc(nx * 4);
    float *aw = malloc(nw * 4), *bw = malloc(nw * 4);
    kc_fill(&rng, x, nx, 1.0);
    kc_fill(&rng, w, nw, 1.0);
    kc_fill(&rng, g, ny, 1.0);
    for (size_t f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++) {
      const int fl = flag_sets[f];
      /* The plain loops on one thread (they do not depend on the selected
       * micro-kernel): the bits every blocked run must give. */
      omp_set_num_threads(1);
      three_products(1, a, ax, aw, x, w, g, n, in, out, fl);
      if ((fl & KERNEL_BF16) && !(fl & KERNEL_OUT_FP32))
        for (size_t i = 0; i < ny; i++) assert_true(bf16_is_exact(a[i]));
      for (int kernel = GEMM_WIDEST; kernel <= GEMM_AVX512; kernel++) {
        matmul_select_kernel(kernel);
        for (int th = 1; th <= 3; th++) {
          if (test_sampled() && th != 1 + (int)((kernel + s + f) % 3)) continue;
          omp_set_num_threads(th);
          three_products(0, b, bx, bw, x, w, g, n, in, out, fl);
          assert_memory_equal(a, b, ny * 4);
          assert_memory_equal(ax, bx, nx * 4);
          assert_memory_equal(aw, bw, nw * 4);
        }
      }
    }
    free(a);
    free(b);
    free(ax);
    free(bx);
    free(aw);
    free(bw);
    free(x);
    free(w);
    free(g);
  }
  matmul_select_kernel(0);
  omp_set_num_threads(2);
}

static void test_bf16_rounds_the_float32_sum(void **state) {
  (void)state;
  /* bf16 output = bf16(float32 sum), not a sum of rounded terms. */
  float x[3] = {1.0f, 1.0f, 1.0f}, w[3] = {1.0f, 0x1p-9f, 0x1p-9f}, y;
  matmul_forward(&y, x, w, 1, 3, 1, KERNEL_BF16);
  assert_true(y == 1.0f); /* float32 sum 1 + 2^-8, a bf16 tie, goes to even */
  float y32;
  matmul_forward(&y32, x, w, 1, 3, 1, 0);
  assert_true(y32 == 1.0f + 0x1p-8f);
  assert_true(bf16_round(y32) == y);
  /* accumulate into a float32 gradient: the sum is not rounded */
  float acc = 0x1p-12f;
  matmul_forward(&acc, x, w, 1, 3, 1, KERNEL_BF16 | KERNEL_ACCUMULATE | KERNEL_OUT_FP32);
  assert_true(acc == bf16_round(y32) + 0x1p-12f);
}

/* Each term is one fused multiply-add on every path: 1 * -1 then
 * (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 added to -1 leaves 2^-11 + 2^-24
 * exactly; a separate multiply would round the 2^-24 away. */
static void test_terms_are_fused(void **state) {
  (void)state;
  float x[2] = {1.0f, 1.0f + 0x1p-12f}, w[2] = {-1.0f, 1.0f + 0x1p-12f};
  for (int kernel = GEMM_WIDEST; kernel <= GEMM_AVX512; kernel++) {
    matmul_select_kernel(kernel);
    float y = 0.0f, dw = 0.0f, dx = 0.0f, ys = 0.0f;
    matmul_forward(&y, x, w, 1, 2, 1, 0);
    matmul_forward_simple(&ys, x, w, 1, 2, 1, 0);
    matmul_backward_input(&dx, x, w, 1, 1, 2, 0);  /* dx = sum_o dy[o] w[o] */
    matmul_backward_weight(&dw, x, w, 2, 1, 1, 0); /* dw = sum_n dy[n] x[n] */
    assert_true(y == 0x1p-11f + 0x1p-24f);
    assert_true(ys == y && dx == y && dw == y);
    /* The trainer's log warns on the fmaf path, and only there. */
    assert_int_equal(matmul_kernel_slow(),
                     !strcmp(matmul_kernel_name(), "fmaf (no FMA unit: slow)"));
    if (kernel == GEMM_FMAF) assert_true(matmul_kernel_slow());
  }
  matmul_select_kernel(0);
}

/* The plain loop of gemm.h over the kept terms. */
static float plain_sum(const gemm *g, int m, int n, float start) {
  float acc = start;
  for (int k = 0; k < g->K; k++) {
    if (g->tri == GEMM_K_LE_M && k > m + g->diag) continue;
    if (g->tri == GEMM_K_GE_M && k < m + g->diag) continue;
    acc = fmaf(g->A[m * g->sam + k * g->sak], g->B[n * g->sbn + k * g->sbk], acc);
  }
  return acc;
}

/* gemm.h's restricted and continued sums equal the plain loop bit for
 * bit: every triangle mode and diagonal (through the panel edges, both
 * signs), both orientations of A, serial and threaded, each micro-kernel;
 * a sum split at k into two calls (the second with cont) equals one; and
 * a B packed once for more terms than a product uses gives its bits. */
static void test_gemm_triangles_and_cont(void **state) {
  (void)state;
  const int M = 23, N = 37, K = 29;
  kc_rng rng = {11};
  float *A = malloc((size_t)M * K * 4), *B = malloc((size_t)N * K * 4);
  float *C = malloc((size_t)M * N * 4), *C2 = malloc((size_t)M * N * 4);
  kc_fill(&rng, A, (size_t)M * K, 1.0);
  kc_fill(&rng, B, (size_t)N * K, 1.0);
  const int diags[] = {-30, -7, -1, 0, 1, 5, 6, 13, 40};
  for (int kernel = GEMM_WIDEST; kernel <= GEMM_AVX512; kernel++) {
    gemm_select_kernel(kernel);
    for (int tri = GEMM_FULL; tri <= GEMM_N_LE_M; tri++)
      for (size_t di = 0; di < sizeof diags / sizeof diags[0]; di++)
        for (int orient = 0; orient < 2; orient++)
          for (int th = 0; th <= 3; th++) { /* 0: gemm_serial */
            gemm g = {A,
                      B,
                      orient ? 1 : (size_t)K,
                      orient ? (size_t)M : 1,
                      1,
                      (size_t)N,
                      M,
                      N,
                      K,
                      C,
                      (size_t)N,
                      0,
                      tri,
                      diags[di],
                      0,
                      NULL,
                      0};
            for (int i = 0; i < M * N; i++) C[i] = C2[i] = -7.0f;
            if (th == 0) {
              gemm_serial(&g);
            } else {
              omp_set_num_threads(th);
              gemm_run(&g);
            }
            for (int m = 0; m < M; m++)
              for (int n = 0; n < N; n++) {
                float want = plain_sum(&g, m, n, 0.0f), got = C[m * N + n];
                if (tri == GEMM_N_LE_M && n > m + g.diag) continue; /* maybe skipped */
                assert_memory_equal(&want, &got, 4);
              }
            /* Split the k range at 11: [0, 11) then [11, K) continued. */
            gemm h = g;
            h.C = C2;
            h.K = 11;
            if (th == 0)
              gemm_serial(&h);
            else
              gemm_run(&h);
            h.A = A + 11 * g.sak;
            h.B = B + 11 * g.sbk;
            h.K = K - 11;
            h.diag = g.diag - 11;
            h.cont = 1;
            if (th == 0)
              gemm_serial(&h);
            else
              gemm_run(&h);
            if (tri != GEMM_N_LE_M) assert_memory_equal(C, C2, (size_t)M * N * 4);
            /* B packed once for all K terms, used for the first 20. */
            float *Bp = malloc(gemm_packed_b_floats(N, K) * 4);
            gemm_pack_b(Bp, &g);
            gemm e = g;
            e.K = 20;
            e.Bp = Bp;
            e.kp = K;
            if (th == 0)
              gemm_serial(&e);
            else
              gemm_run(&e);
            for (int m = 0; m < M; m++)
              for (int n = 0; n < N; n++) {
                float want = plain_sum(&e, m, n, 0.0f), got = C[m * N + n];
                if (tri == GEMM_N_LE_M && n > m + g.diag) continue;
                assert_memory_equal(&want, &got, 4);
              }
            free(Bp);
          }
  }
  gemm_select_kernel(0);
  omp_set_num_threads(2);
  free(A);
  free(B);
  free(C);
  free(C2);
}

/* A product longer than one pass over k (matmul.c computes K terms in
 * passes of 1,024, carrying the sums between them) is still the plain
 * loop: terms across the pass boundaries, a triangle whose diagonal falls
 * inside the second pass, A read in place or packed (both orientations),
 * B packed by the call or once beforehand for more terms, every finishing
 * flag (a bf16 rounding or an accumulation must see the whole sum, never
 * a pass's part), serial and threaded, each micro-kernel. */
static void test_gemm_passes(void **state) {
  (void)state;
  const int M = 13, N = 19, K = 2 * 1024 + 37, KP = K + 5;
  kc_rng rng = {29};
  float *A = malloc((size_t)M * K * 4), *B = malloc((size_t)N * KP * 4);
  float *C = malloc((size_t)M * N * 4), *C0 = malloc((size_t)M * N * 4);
  float *Bp = malloc(gemm_packed_b_floats(N, KP) * 4 + 4096);
  kc_fill(&rng, A, (size_t)M * K, 1.0);
  kc_fill(&rng, B, (size_t)N * KP, 1.0);
  kc_fill(&rng, C0, (size_t)M * N, 4.0);
  const int flag_sets[] = {0, KERNEL_BF16, KERNEL_ACCUMULATE, KERNEL_ACCUMULATE | KERNEL_BF16,
                           KERNEL_ACCUMULATE | KERNEL_BF16 | KERNEL_OUT_FP32};
  const int cases[][2] = {{GEMM_FULL, 0}, {GEMM_K_LE_M, 1019}, {GEMM_K_GE_M, 1020},
                          {GEMM_K_LE_M, 2047}, {GEMM_N_LE_M, 3}};
  for (int kernel = GEMM_WIDEST; kernel <= GEMM_AVX512; kernel++) {
    gemm_select_kernel(kernel);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
      for (size_t fi = 0; fi < sizeof flag_sets / sizeof flag_sets[0]; fi++)
        for (int orient = 0; orient < 2; orient++)
          for (int mode = 0; mode < 3; mode++) { /* serial, 2 threads, B packed before */
            if (test_sampled() && mode != (int)((kernel + ci + fi + (size_t)orient) % 3)) continue;
            gemm g = {A, B, orient ? 1 : (size_t)K, orient ? (size_t)M : 1, 1, (size_t)N,
                      M, N, K, C, (size_t)N, flag_sets[fi], cases[ci][0], cases[ci][1], 0,
                      NULL, 0};
            memcpy(C, C0, (size_t)M * N * 4);
            if (mode == 2) {
              gemm p = g;
              p.K = KP;
              gemm_pack_b(Bp, &p);
              g.Bp = Bp;
              g.kp = KP;
            }
            if (mode == 0) {
              gemm_serial(&g);
            } else {
              omp_set_num_threads(2);
              gemm_run(&g);
            }
            for (int m = 0; m < M; m++)
              for (int n = 0; n < N; n++) {
                if (g.tri == GEMM_N_LE_M && n > m + g.diag) continue; /* maybe skipped */
                float want = C0[m * N + n];
                kernel_store(&want, plain_sum(&g, m, n, 0.0f), g.flags);
                assert_memory_equal(&want, &C[m * N + n], 4);
              }
          }
  }
  gemm_select_kernel(0);
  omp_set_num_threads(2);
  free(A);
  free(B);
  free(C);
  free(C0);
  free(Bp);
}

/* The packed-A path (A's terms strided, as dy^T, and 4 or more B panels:
 * 131 columns) is the plain loop too: two passes over k, a triangle, a
 * finishing flag set, serial and threaded, each micro-kernel. The same
 * product with A row-major (read in place) gives the same bits. */
static void test_gemm_packed_a(void **state) {
  (void)state;
  const int M = 8, N = 131, K = 1100;
  kc_rng rng = {31};
  float *A = malloc((size_t)M * K * 4), *AT = malloc((size_t)M * K * 4);
  float *B = malloc((size_t)N * K * 4), *C = malloc((size_t)M * N * 4);
  float *C2 = malloc((size_t)M * N * 4);
  kc_fill(&rng, A, (size_t)M * K, 1.0);
  kc_fill(&rng, B, (size_t)N * K, 1.0);
  for (int m = 0; m < M; m++)
    for (int k = 0; k < K; k++) AT[(size_t)k * M + m] = A[(size_t)m * K + k];
  const int flag_sets[] = {0, KERNEL_ACCUMULATE | KERNEL_BF16};
  for (int kernel = GEMM_WIDEST; kernel <= GEMM_AVX512; kernel++) {
    gemm_select_kernel(kernel);
    for (int tri = GEMM_FULL; tri <= GEMM_K_LE_M; tri++)
      for (int fi = 0; fi < 2; fi++)
        for (int th = 0; th <= 2; th++) { /* 0: gemm_serial */
          gemm g = {AT, B, 1, (size_t)M, 1, (size_t)N, M, N, K, C, (size_t)N, flag_sets[fi],
                    tri, 1030, 0, NULL, 0};
          gemm h = g;
          h.A = A;
          h.sam = (size_t)K;
          h.sak = 1;
          h.C = C2;
          for (int i = 0; i < M * N; i++) C[i] = C2[i] = 0.25f * (float)(i % 7);
          if (th == 0) {
            gemm_serial(&g);
            gemm_serial(&h);
          } else {
            omp_set_num_threads(th);
            gemm_run(&g);
            gemm_run(&h);
          }
          for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
              float want = 0.25f * (float)((m * N + n) % 7);
              kernel_store(&want, plain_sum(&g, m, n, 0.0f), g.flags);
              assert_memory_equal(&want, &C[m * N + n], 4);
            }
          assert_memory_equal(C, C2, (size_t)M * N * 4);
        }
  }
  gemm_select_kernel(0);
  omp_set_num_threads(2);
  free(A);
  free(AT);
  free(B);
  free(C);
  free(C2);
}

/* The alignment kernels/matmul.cu tells cuBLASLt: the largest power of
 * two dividing the address, capped at 256 (a cudaMalloc base). Offsets as
 * the flat parameter buffer gives them: the baseline's weights 32 bytes
 * (float32) and 16 bytes (bf16) past a boundary. */
static void test_cuda_operand_alignment(void **state) {
  (void)state;
  unsigned char *base = aligned_alloc(1024, 2048);
  assert_non_null(base);
  const struct {
    size_t off;
    unsigned want;
  } cases[] = {{0, 256}, {512, 256}, {256, 256}, {32, 32}, {16, 16}, {48, 16}, {8, 8},
               {4, 4},   {2, 2},     {1, 1},     {130, 2}, {384, 128}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    unsigned got = matmul_cuda_alignment(base + cases[i].off);
    if (got != cases[i].want) fail_msg("offset %zu: %u, want %u", cases[i].off, got, cases[i].want);
  }
  free(base);
}

/* The split weight gradient (kernels/matmul_split.h): each element is the
 * chunks' fmaf sums (rows ascending from 0 within a chunk) added in chunk
 * order, then stored by the flags; written out here element by element,
 * independently of the blocked kernels. One chunk is the plain product's
 * bits; several stay within float32 rounding of the float64 product and
 * differ from the unsplit sum somewhere (so the split is really taken). */
static void test_split_weight_gradient(void **state) {
  (void)state;
  enum { N = 203, IN = 19, OUT = 13, ROWS = 64 };
  const int flag_sets[] = {0, KERNEL_ACCUMULATE | KERNEL_OUT_FP32, KERNEL_BF16,
                           KERNEL_BF16 | KERNEL_ACCUMULATE | KERNEL_OUT_FP32};
  kc_rng rng = {31};
  float dy[N * OUT], x[N * IN], base[OUT * IN];
  kc_fill(&rng, dy, N * OUT, 1.0);
  kc_fill(&rng, x, N * IN, 1.0);
  kc_fill(&rng, base, OUT * IN, 1.0);
  static float partials[(N + ROWS - 1) / ROWS * OUT * IN];
  assert_int_equal(matmul_split_chunks(N, ROWS), 4);
  assert_int_equal(matmul_split_chunks(ROWS, ROWS), 1);
  assert_int_equal((int)matmul_split_floats(N, ROWS, IN, OUT), 4 * OUT * IN);
  int differs = 0;
  for (int f = 0; f < 4; f++) {
    int flags = flag_sets[f];
    float d[N * OUT], xx[N * IN];
    memcpy(d, dy, sizeof d), memcpy(xx, x, sizeof xx);
    if (flags & KERNEL_BF16) bf16_round_array(d, N * OUT), bf16_round_array(xx, N * IN);
    float got[OUT * IN], want[OUT * IN], one[OUT * IN], plain[OUT * IN];
    memcpy(got, base, sizeof got), memcpy(want, base, sizeof want);
    memcpy(one, base, sizeof one), memcpy(plain, base, sizeof plain);
    matmul_backward_weight_split(got, d, xx, N, IN, OUT, flags, ROWS, partials);
    for (int o = 0; o < OUT; o++)
      for (int i = 0; i < IN; i++) {
        float s = 0.0f;
        for (int c = 0; c * ROWS < N; c++) {
          float p = 0.0f;
          for (int n = c * ROWS; n < N && n < (c + 1) * ROWS; n++)
            p = fmaf(d[n * OUT + o], xx[n * IN + i], p);
          s = c == 0 ? p : s + p;
        }
        kernel_store(&want[o * IN + i], s, flags);
      }
    assert_memory_equal(got, want, sizeof got);
    /* one chunk: the plain product */
    matmul_backward_weight_split(one, d, xx, ROWS, IN, OUT, flags, ROWS, partials);
    matmul_backward_weight(plain, d, xx, ROWS, IN, OUT, flags);
    assert_memory_equal(one, plain, sizeof one);
    /* several: within rounding of the float64 product, not the unsplit bits */
    memcpy(plain, base, sizeof plain);
    matmul_backward_weight(plain, d, xx, N, IN, OUT, flags);
    differs |= memcmp(plain, got, sizeof got) != 0;
    if (flags)
      continue;
    for (int o = 0; o < OUT; o++)
      for (int i = 0; i < IN; i++) {
        double t = 0.0, a = 0.0;
        for (int n = 0; n < N; n++) {
          t += (double)d[n * OUT + o] * xx[n * IN + i];
          a += fabs((double)d[n * OUT + o] * xx[n * IN + i]);
        }
        assert_true(fabs(got[o * IN + i] - t) <= 2.4e-7 * N * a);
      }
  }
  assert_true(differs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cuda_operand_alignment),
      cmocka_unit_test(test_terms_are_fused),
      cmocka_unit_test(test_gemm_triangles_and_cont),
      cmocka_unit_test(test_gemm_passes),
      cmocka_unit_test(test_gemm_packed_a),
      cmocka_unit_test(test_forward_and_gradients),
      cmocka_unit_test(test_blocked_equals_simple_bitwise),
      cmocka_unit_test(test_bf16_rounds_the_float32_sum),
      cmocka_unit_test(test_split_weight_gradient),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
