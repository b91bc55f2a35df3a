/* The per-head query gain on the GPU (contract in q_gain.h): y and dq
 * elementwise by q_gain.h's shared code, equal to the CPU kernel bit for
 * bit; dg by the fixed tree in float64, one block of TREE_LANES threads
 * per head, equal to q_gain_backward_tree_ref. No atomics. */
#include "kernels/col_dot.h"
#include "kernels/cuda_common.h"
#include "kernels/q_gain.h"
#include "kernels/reduce_tree.h"

/* ---- kernels ---- */

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    q_gain_forward_kernel(float *y, const float *q, const float *g, size_t n, int head_dim, int w,
                          int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = q_gain_y(q[i], g[(i % (size_t)w) / (size_t)head_dim], flags);
}

/* dq may alias dy: each element is read and then written by one thread. */
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    q_gain_dq_kernel(float *dq, const float *dy, const float *g, size_t n, int head_dim, int w,
                     int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    kernel_store(&dq[i], q_gain_dq(dy[i], g[(i % (size_t)w) / (size_t)head_dim], flags), flags);
}

/* Block h: lane k = threadIdx.x sums head h's terms m = k, k + 256, ...
 * (m = n * head_dim + j, the CPU's order), then the pairwise halving in
 * shared memory. */
__global__ void __launch_bounds__(TREE_LANES)
    q_gain_dg_kernel(float *dg, const float *dy, const float *q, int rows, int head_dim, int w,
                     int flags) {
  __shared__ double part[TREE_LANES];
  const int k = threadIdx.x, h = blockIdx.x;
  const size_t terms = (size_t)rows * head_dim;
  double acc = 0.0;
  for (size_t m = (size_t)k; m < terms; m += TREE_LANES) {
    size_t i = (m / head_dim) * (size_t)w + (size_t)h * head_dim + m % head_dim;
    acc = acc + (double)col_dot_term(dy[i], q[i], flags);
  }
  part[k] = acc;
  __syncthreads();
  for (int off = TREE_LANES / 2; off > 0; off >>= 1) {
    if (k < off) part[k] = part[k] + part[k + off];
    __syncthreads();
  }
  if (k == 0) col_dot_finish(&dg[h], part[0], flags);
}

/* ---- launchers ---- */

static int check_shape(int rows, int heads, int head_dim, pg_error *err) {
  if (rows < 0 || heads < 1 || head_dim < 1)
    return pg_fail(err, "", -1, "q_gain: bad shape %d x %d x %d", rows, heads, head_dim);
  return 0;
}

extern "C" int q_gain_forward_cuda(float *y, const float *q, const float *g, int rows, int heads,
                                   int head_dim, int flags, cudaStream_t stream, pg_error *err) {
  if (check_shape(rows, heads, head_dim, err)) return -1;
  int w = heads * head_dim;
  size_t n = (size_t)rows * w;
  if (n == 0) return 0;
  q_gain_forward_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(y, q, g, n, head_dim, w,
                                                                           flags);
  return cuda_check_launch(err, "q_gain_forward_kernel");
}

extern "C" int q_gain_backward_cuda(float *dq, float *dg, const float *dy, const float *q,
                                    const float *g, int rows, int heads, int head_dim, int flags,
                                    cudaStream_t stream, pg_error *err) {
  if (check_shape(rows, heads, head_dim, err)) return -1;
  int w = heads * head_dim;
  /* dg first: the stream orders it before dq, which may overwrite dy. */
  q_gain_dg_kernel<<<heads, TREE_LANES, 0, stream>>>(dg, dy, q, rows, head_dim, w, flags);
  if (cuda_check_launch(err, "q_gain_dg_kernel")) return -1;
  size_t n = (size_t)rows * w;
  if (n == 0) return 0;
  q_gain_dq_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(dq, dy, g, n, head_dim, w,
                                                                      flags);
  return cuda_check_launch(err, "q_gain_dq_kernel");
}
