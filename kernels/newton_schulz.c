#include "kernels/newton_schulz.h"

#include <string.h>

#include "kernels/gemm.h"
#include "kernels/l2norm.h"
#include "kernels/matmul.h"

size_t newton_schulz5_work_floats(int rows, int cols) {
  size_t r = (size_t)(rows < cols ? rows : cols), c = (size_t)(rows < cols ? cols : rows);
  return 2 * r * c + 3 * r * r; /* X, BX; A, cA, B */
}

/* dst[c, r] = src[r, c]^T */
static void transpose(float *dst, const float *src, int r, int c) {
#pragma omp parallel for schedule(static)
  for (int j = 0; j < c; j++)
    for (int i = 0; i < r; i++) dst[(size_t)j * r + i] = src[(size_t)i * c + j];
}

/* x = x / (||x|| + eps), each operation rounded as the flags say. */
static void normalise(float *x, size_t n, int flags) {
  float d = ns_divisor((flags & KERNEL_TREE) ? l2norm_tree_ref(x, n) : l2norm(x, n), flags);
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) x[i] = ns_divide_elem(x[i], d, flags);
}

/* y = round(round(s * x) + z), elementwise: the `s * X + Z` of the
 * iteration, where Z is a matmul result. */
static void scale_add(float *y, const float *x, float s, const float *z, size_t n, int flags) {
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) y[i] = ns_scale_add_elem(x[i], s, z[i], flags);
}

static void scale(float *y, const float *x, float s, size_t n, int flags) {
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) y[i] = kernel_round(s * x[i], flags);
}

/* One quintic step on X [r, c], r <= c. */
static void ns_step(float *X, int r, int c, float *BX, float *A, float *cA, float *B, int flags) {
  const float a = (float)NS_A, b = (float)NS_B, cc = (float)NS_C;
  size_t rc = (size_t)r * c, rr = (size_t)r * r;
  int mm = flags & KERNEL_BF16;
  /* A = X X^T: matmul_forward computes x W^T with W = X. */
  matmul_forward(A, X, X, r, c, r, mm);
  /* (c A) A: A is exactly symmetric (each A[i][j] and A[j][i] is the same
   * products summed in the same order), so A = A^T as matmul_forward's W. */
  scale(cA, A, cc, rr, flags);
  matmul_forward(B, cA, A, r, r, r, mm);
  scale_add(B, A, b, B, rr, flags);
  /* B X: B(n, k) = X[k][n] read in place (the packing reads X's rows
   * contiguously), the products and order of matmul_forward against X^T. */
  gemm bx = {B, X, (size_t)r, 1, 1, (size_t)c, r, c, r, BX, (size_t)c, mm, 0, 0, 0, NULL, 0};
  gemm_run(&bx);
  scale_add(X, X, a, BX, rc, flags);
}

void newton_schulz5(float *out, const float *g, int rows, int cols, int steps, int flags,
                    float *work) {
  int transposed = rows > cols;
  int r = transposed ? cols : rows, c = transposed ? rows : cols;
  size_t rc = (size_t)r * c, rr = (size_t)r * r;
  /* The work layout of the CUDA twin's fp32 iterate. */
  float *X = work, *BX = X + rc, *A = BX + rc, *cA = A + rr, *B = cA + rr;

  /* Normalise in the input's orientation (BX as scratch), then turn. */
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < rc; i++) BX[i] = kernel_round(g[i], flags);
  normalise(BX, rc, flags);
  if (transposed)
    transpose(X, BX, rows, cols);
  else
    memcpy(X, BX, rc * sizeof *X);

  for (int s = 0; s < steps; s++) ns_step(X, r, c, BX, A, cA, B, flags);

  if (transposed)
    transpose(out, X, r, c);
  else
    memcpy(out, X, rc * sizeof *out);
}
