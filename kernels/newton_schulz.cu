/* Newton-Schulz on the GPU (contract in newton_schulz.h): newton_schulz5's
 * sequence, each elementwise step by the shared functions, the norm by
 * l2norm_cuda's tree, the products through cuBLASLt; for a batch of
 * matrices of one shape at once (stored back to back), each launch and
 * product covering the whole batch.
 *
 * The iterate stays in the products' own type from the normalisation to
 * the end: float32 arrays in fp32, packed bf16 under KERNEL_BF16, where
 * every value is a bf16 (each operation's result is rounded), so the
 * GEMMs read what the elementwise kernels wrote and write what they read,
 * without a pack or unpack pass between them. B X reads X as it lies
 * (matmul_backward_input's dy W), so X is never transposed in the loop;
 * the input's turn and the result's turn back are folded into the
 * normalisation and the final store. Six launches a step. */
#include <string.h>

#include "kernels/bf16.h"
#include "kernels/cuda_common.h"
#include "kernels/index_walk.h"
#include "kernels/l2norm.h"
#include "kernels/newton_schulz.h"
#include "kernels/optim_step.h"

/* An element of the iterate's storage: a float, or a bf16's bits (the
 * value stored is already a bf16 under KERNEL_BF16, so the store is
 * exact). */
__device__ __forceinline__ float ns_get(const float *p, size_t i) { return p[i]; }
__device__ __forceinline__ float ns_get(const uint16_t *p, size_t i) { return bf16_to_float(p[i]); }
__device__ __forceinline__ void ns_put(float *p, size_t i, float v) { p[i] = v; }
__device__ __forceinline__ void ns_put(uint16_t *p, size_t i, float v) {
  p[i] = bf16_from_float(v);
}

/* Element i of a batch of rows x cols matrices (back to back) as (matrix
 * b, row, column), by two chained walks (index_walk.h): col splits i by
 * cols (i % cols is the column), row splits i / cols by rows (the row,
 * and b as its quotient). */
struct ns_walk {
  index_walk col, row;
};

__device__ __forceinline__ ns_walk ns_walk_start(size_t i, size_t stride, int rows, int cols) {
  ns_walk w;
  w.col = index_walk_start(i, stride, (size_t)cols);
  w.row = index_walk_start(w.col.q, w.col.dq, (size_t)rows);
  return w;
}

__device__ __forceinline__ void ns_walk_next(ns_walk *w) {
  index_walk_next(&w->row, index_walk_next(&w->col, 0));
}

/* The walk's element's index in the batch of the transposes. */
__device__ __forceinline__ size_t ns_turned(const ns_walk *w, int rows, int cols) {
  return w->row.q * ((size_t)rows * cols) + w->col.r * (size_t)rows + w->row.r;
}

/* ---- kernels ---- */

/* Each x[b][rows, cols] / ns_divisor(norm[b]) into the iterate X, turned
 * to [cols, rows] when `turn`: the divisor from the norm on the device. */
template <typename T>
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    ns_normalise_kernel(T *X, const float *x, const float *norm, int rows, int cols, int batch,
                        int turn, int flags) {
  const size_t n = (size_t)rows * cols * batch, stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (ns_walk w = ns_walk_start(i, stride, rows, cols); i < n; i += stride, ns_walk_next(&w)) {
    const float d = ns_divisor(norm[w.row.q], flags);
    ns_put(X, turn ? ns_turned(&w, rows, cols) : i, ns_divide_elem(x[i], d, flags));
  }
}

/* y = round(s * x). */
template <typename T>
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    ns_scale_kernel(T *y, const T *x, float s, size_t n, int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    ns_put(y, i, scale_round_elem(ns_get(x, i), s, flags));
}

/* y = round(round(s * x) + z); y may be x or z. */
template <typename T>
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    ns_scale_add_kernel(T *y, const T *x, float s, const T *z, size_t n, int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    ns_put(y, i, ns_scale_add_elem(ns_get(x, i), s, ns_get(z, i), flags));
}

/* out = each X [r, c] as floats, turned back to [c, r] when `turn`. */
template <typename T>
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    ns_store_kernel(float *out, const T *X, int r, int c, int batch, int turn) {
  const size_t n = (size_t)r * c * batch, stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (ns_walk w = ns_walk_start(i, stride, r, c); i < n; i += stride, ns_walk_next(&w))
    out[turn ? ns_turned(&w, r, c) : i] = ns_get(X, i);
}

/* ---- launchers ---- */

/* The iterate's arrays in the storage type T, carved from the caller's
 * work (newton_schulz.h): X and BX [batch][r, c], A, cA and B
 * [batch][r, r] (rc and rr count the whole batch). */
template <typename T>
struct ns_arrays {
  T *X, *BX, *A, *cA, *B;
};

template <typename T>
static ns_arrays<T> ns_carve(void *base, size_t rc, size_t rr) {
  T *p = (T *)base;
  ns_arrays<T> a = {p, p + rc, p + 2 * rc, p + 2 * rc + rr, p + 2 * rc + 2 * rr};
  return a;
}

template <typename T>
static int ns_scale(T *y, const T *x, float s, size_t n, int flags, cudaStream_t st,
                    pg_error *err) {
  ns_scale_kernel<T><<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, st>>>(y, x, s, n, flags);
  return cuda_check_launch(err, "ns_scale_kernel");
}

template <typename T>
static int ns_scale_add(T *y, const T *x, float s, const T *z, size_t n, int flags, cudaStream_t st,
                        pg_error *err) {
  ns_scale_add_kernel<T><<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, st>>>(y, x, s, z, n, flags);
  return cuda_check_launch(err, "ns_scale_add_kernel");
}

/* One quintic step on each X [r, c], r <= c (newton_schulz.c's ns_step,
 * the same products in the same roles, batch of them a call):
 *   A = X X^T            matmul_forward with W = X
 *   B = (c A) A          A is exactly symmetric, so W = A
 *   B = round(b A) + B
 *   BX = B X             matmul_backward_input's dy W with dy = B, W = X
 *   X = round(a X) + BX */
template <typename T>
static int ns_step(matmul_cuda_ctx *mm, const ns_arrays<T> &a, int r, int c, int batch, int flags,
                   cudaStream_t st, pg_error *err) {
  size_t rc = (size_t)r * c * batch, rr = (size_t)r * r * batch;
  int mf = flags & KERNEL_BF16;
  if (matmul_forward_batch_cuda(mm, a.A, a.X, a.X, r, c, r, batch, mf, st, err) ||
      ns_scale(a.cA, a.A, (float)NS_C, rr, flags, st, err) ||
      matmul_forward_batch_cuda(mm, a.B, a.cA, a.A, r, r, r, batch, mf, st, err) ||
      ns_scale_add(a.B, a.A, (float)NS_B, a.B, rr, flags, st, err) ||
      matmul_backward_input_batch_cuda(mm, a.BX, a.B, a.X, r, c, r, batch, mf, st, err))
    return -1;
  return ns_scale_add(a.X, a.X, (float)NS_A, a.BX, rc, flags, st, err);
}

/* Everything after the norm: normalise x (the input, rounded where the
 * flags say) into the iterate, iterate, store. */
template <typename T>
static int ns_run(matmul_cuda_ctx *mm, float *out, const float *x, int batch, int rows, int cols,
                  int steps, int flags, void *iter, const float *norm, cudaStream_t st,
                  pg_error *err) {
  int turn = rows > cols;
  int r = turn ? cols : rows, c = turn ? rows : cols;
  size_t rc = (size_t)r * c * batch;
  ns_arrays<T> a = ns_carve<T>(iter, rc, (size_t)r * r * batch);
  unsigned blocks = cuda_ew_blocks(rc);
  ns_normalise_kernel<T>
      <<<blocks, CUDA_EW_THREADS, 0, st>>>(a.X, x, norm, rows, cols, batch, turn, flags);
  if (cuda_check_launch(err, "ns_normalise_kernel")) return -1;
  for (int s = 0; s < steps; s++)
    if (ns_step<T>(mm, a, r, c, batch, flags, st, err)) return -1;
  ns_store_kernel<T><<<blocks, CUDA_EW_THREADS, 0, st>>>(out, a.X, r, c, batch, turn);
  return cuda_check_launch(err, "ns_store_kernel");
}

extern "C" int newton_schulz5_batch_cuda(matmul_cuda_ctx *mm, float *out, const float *g, int batch,
                                         int rows, int cols, int steps, int flags, float *work,
                                         float *norm, double *sumsq, cudaStream_t stream,
                                         pg_error *err) {
  if (rows < 1 || cols < 1 || steps < 0 || batch < 1)
    return pg_fail(err, "", -1, "newton_schulz: bad shape %d x %d, %d steps, batch %d", rows, cols,
                   steps, batch);
  flags &= KERNEL_BF16;
  size_t rc = (size_t)rows * cols, n = rc * batch;
  if (!(flags & KERNEL_BF16)) {
    /* g is read as it is (rounding is the identity); the iterate's arrays
     * fill the work. */
    if (l2norm_batch_cuda(norm, sumsq, g, rc, batch, stream, err)) return -1;
    return ns_run<float>(mm, out, g, batch, rows, cols, steps, flags, work, norm, stream, err);
  }
  /* G rounded to bf16 in floats for the norms (the work's first n
   * floats), the packed iterate after it: batch (2 rc + 3 r^2) bf16
   * words, at most the work's remaining batch (rc + 3 r^2) floats. */
  if (scale_round_cuda(work, g, n, 1.0f, flags, stream, err) ||
      l2norm_batch_cuda(norm, sumsq, work, rc, batch, stream, err))
    return -1;
  return ns_run<uint16_t>(mm, out, work, batch, rows, cols, steps, flags, work + n, norm, stream,
                          err);
}

extern "C" int newton_schulz5_cuda(matmul_cuda_ctx *mm, float *out, const float *g, int rows,
                                   int cols, int steps, int flags, float *work, float *norm,
                                   double *sumsq, cudaStream_t stream, pg_error *err) {
  return newton_schulz5_batch_cuda(mm, out, g, 1, rows, cols, steps, flags, work, norm, sumsq,
                                   stream, err);
}
