/* The per-head query gain on the GPU (contract in q_gain.h): y and dq
 * elementwise by q_gain.h's shared code, equal to the CPU kernel bit for
 * bit; dg by the fixed tree in float64, equal to q_gain_backward_tree_ref.
 * No atomics.
 *
 * dg's tree has TREE_LANES lanes per head, each a sequential float64 sum;
 * the lanes are independent until they combine, so they are spread over
 * QG_GROUPS blocks per head (QG_LANES lanes, one warp, each) to bring
 * heads x QG_GROUPS SMs to the sums instead of one per head; each lane's
 * partial goes to scratch, and one block per head then combines them
 * pairwise, halving, as one block would have. Which block computes a lane
 * changes no bits. */
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
    q_gain_dq_kernel(float *dq, const float *dy, const uint16_t *dy16, const float *g, size_t n,
                     int head_dim, int w, int flags) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float gi = g[(i % (size_t)w) / (size_t)head_dim];
    kernel_store(&dq[i], q_gain_dq(kernel_load(dy, dy16, i), gi, flags), flags);
  }
}

#define QG_LANES 32                        /* lanes (threads) per block of the sums */
#define QG_GROUPS (TREE_LANES / QG_LANES) /* blocks per head */
#define QG_BATCH 8                         /* terms loaded before they are added */

/* Term m's (n, j) to term m + TREE_LANES's: n by dn, j by dj, one carry. */
__device__ static __forceinline__ void qg_next(size_t *n, int *j, size_t dn, int dj, int head_dim) {
  *n += dn;
  *j += dj;
  if (*j >= head_dim) {
    *j -= head_dim;
    ++*n;
  }
}

/* Block (h, grp), thread t: lane k = grp * QG_LANES + t of head h sums its
 * terms m = k, k + 256, ... (m = n * head_dim + j, the CPU's order) into
 * part[h * TREE_LANES + k]. (n, j) = (m / head_dim, m % head_dim) is
 * carried from term to term (m grows by TREE_LANES: n by dn, j by dj,
 * one carry), not divided anew in 64 bits per term. The tree gives the sum
 * 256 lanes a head, so 8 heads are 64 warps, one an SM: the loads'
 * latency, not the memory's bandwidth, sets the time, and each lane loads
 * QG_BATCH terms before it adds them (in their order: no bit changes). */
__global__ void __launch_bounds__(QG_LANES)
    q_gain_dg_lanes_kernel(double *part, const float *dy, const uint16_t *dy16, const float *q,
                           int rows, int head_dim, int w, int flags) {
  const int h = blockIdx.x, k = blockIdx.y * QG_LANES + threadIdx.x;
  const size_t terms = (size_t)rows * head_dim, dn = TREE_LANES / head_dim;
  const int dj = TREE_LANES % head_dim;
  const float *dyh = dy ? dy + (size_t)h * head_dim : NULL, *qh = q + (size_t)h * head_dim;
  const uint16_t *dyp = dy16 ? dy16 + (size_t)h * head_dim : NULL;
  size_t n = (size_t)(k / head_dim), m = (size_t)k;
  int j = k % head_dim;
  double acc = 0.0;
  for (; m + (size_t)(QG_BATCH - 1) * TREE_LANES < terms; m += (size_t)QG_BATCH * TREE_LANES) {
    float a[QG_BATCH], b[QG_BATCH];
    #pragma unroll
    for (int u = 0; u < QG_BATCH; u++) {
      const size_t i = n * (size_t)w + (size_t)j;
      a[u] = kernel_load(dyh, dyp, i);
      b[u] = qh[i];
      qg_next(&n, &j, dn, dj, head_dim);
    }
    #pragma unroll
    for (int u = 0; u < QG_BATCH; u++) acc = acc + (double)col_dot_term(a[u], b[u], flags);
  }
  for (; m < terms; m += TREE_LANES) {
    const size_t i = n * (size_t)w + (size_t)j;
    acc = acc + (double)col_dot_term(kernel_load(dyh, dyp, i), qh[i], flags);
    qg_next(&n, &j, dn, dj, head_dim);
  }
  part[(size_t)h * TREE_LANES + k] = acc;
}

/* Block h: head h's TREE_LANES partials combined pairwise, halving. */
__global__ void __launch_bounds__(TREE_LANES)
    q_gain_dg_combine_kernel(float *dg, const double *part_all, int flags) {
  __shared__ double part[TREE_LANES];
  const int k = threadIdx.x, h = blockIdx.x;
  part[k] = part_all[(size_t)h * TREE_LANES + k];
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

extern "C" int q_gain_backward_cuda(float *dq, float *dg, double *scratch, const float *dy,
                                    const uint16_t *dy16, const float *q, const float *g, int rows,
                                    int heads, int head_dim, int flags, cudaStream_t stream,
                                    pg_error *err) {
  if (check_shape(rows, heads, head_dim, err) || cuda_input_check(err, "q_gain", "dy", dy, dy16))
    return -1;
  int w = heads * head_dim;
  /* dg first: the stream orders it before dq, which may overwrite dy. */
  q_gain_dg_lanes_kernel<<<dim3((unsigned)heads, QG_GROUPS), QG_LANES, 0, stream>>>(
      scratch, dy, dy16, q, rows, head_dim, w, flags);
  if (cuda_check_launch(err, "q_gain_dg_lanes_kernel")) return -1;
  q_gain_dg_combine_kernel<<<heads, TREE_LANES, 0, stream>>>(dg, scratch, flags);
  if (cuda_check_launch(err, "q_gain_dg_combine_kernel")) return -1;
  size_t n = (size_t)rows * w;
  if (n == 0 || !dq) return 0; /* dq NULL: dg alone (kernels/qk_norm.h makes dq) */
  q_gain_dq_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(dq, dy, dy16, g, n, head_dim,
                                                                      w, flags);
  return cuda_check_launch(err, "q_gain_dq_kernel");
}
