/* The per-head query gain on the GPU (contract in q_gain.h): y and dq
 * elementwise by q_gain.h's shared code, equal to the CPU kernel bit for
 * bit; dg by the fixed tree in float64, equal to q_gain_backward_tree_ref.
 * No atomics.
 *
 * dg's tree has TREE_LANES lanes per head, each a sequential float64 sum;
 * the lanes are independent until they combine, so they are spread over
 * QG_GROUPS blocks per head (QG_LANES lanes, one warp's sums, each) to
 * bring heads x QG_GROUPS SMs to the sums instead of one per head; each lane's
 * partial goes to scratch, and one block per head then combines them
 * pairwise, halving, as one block would have. Which block computes a lane
 * changes no bits. */
#include "kernels/col_dot.h"
#include "kernels/cuda_common.h"
#include "kernels/index_walk.h"
#include "kernels/q_gain.h"
#include "kernels/reduce_tree.h"

/* ---- kernels ---- */

/* Element i's head, (i % w) / head_dim = (i / head_dim) % heads (w =
 * heads * head_dim), by two chained walks (index_walk.h): hd splits i by
 * head_dim, h splits hd's quotient by heads. */
struct qg_head_walk {
  index_walk hd, h;
};

__device__ static __forceinline__ qg_head_walk qg_head_start(size_t i, size_t stride, int head_dim,
                                                             int w) {
  qg_head_walk s;
  s.hd = index_walk_start(i, stride, (size_t)head_dim);
  s.h = index_walk_start(s.hd.q, s.hd.dq, (size_t)(w / head_dim));
  return s;
}

__device__ static __forceinline__ void qg_head_next(qg_head_walk *s) {
  index_walk_next(&s->h, index_walk_next(&s->hd, 0));
}

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    q_gain_forward_kernel(float *y, const float *q, const float *g, size_t n, int head_dim, int w,
                          int flags) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (qg_head_walk s = qg_head_start(i, stride, head_dim, w); i < n; i += stride, qg_head_next(&s))
    y[i] = q_gain_y(q[i], g[s.h.r], flags);
}

/* dq may alias dy: each element is read and then written by one thread. */
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    q_gain_dq_kernel(float *dq, const float *dy, const uint16_t *dy16, const float *g, size_t n,
                     int head_dim, int w, int flags) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (qg_head_walk s = qg_head_start(i, stride, head_dim, w); i < n; i += stride, qg_head_next(&s))
    kernel_store(&dq[i], q_gain_dq(kernel_load(dy, dy16, i), g[s.h.r], flags), flags);
}

#define QG_LANES 32                       /* lanes a block sums: one warp's */
#define QG_GROUPS (TREE_LANES / QG_LANES) /* blocks per head */
#define QG_WARPS 8                        /* warps that load a block's terms */
#define QG_CHUNK 128                      /* terms per lane staged at a time */
#define QG_PER_THREAD (QG_CHUNK / QG_WARPS)

/* A thread's next QG_PER_THREAD terms (m, m + step, ...; +0.0 from
 * terms on), m and its walk nj, (n, j) = (m / head_dim, m % head_dim),
 * advanced past them. */
__device__ static __forceinline__ void qg_terms(float v[QG_PER_THREAD], size_t *m, index_walk *nj,
                                                size_t terms, size_t step, const float *dyh,
                                                const uint16_t *dyp, const float *qh, int w,
                                                int flags) {
  #pragma unroll
  for (int r = 0; r < QG_PER_THREAD; r++, *m += step) {
    const size_t i = nj->q * (size_t)w + nj->r;
    v[r] = *m < terms ? col_dot_term(kernel_load(dyh, dyp, i), qh[i], flags) : 0.0f;
    index_walk_next(nj, 0);
  }
}

/* Block (h, grp): lanes k = grp * QG_LANES + t (t < 32) of head h, lane k
 * summing its terms m = k, k + 256, ... (m = n * head_dim + j, the CPU's
 * order) into part[h * TREE_LANES + k].
 *
 * Why the block has QG_WARPS warps for one warp of sums: a lane's sum is
 * a chain of 16,384 float64 additions for the baseline (65,536 rows x 64
 * per head over 256 lanes), and 8 heads are only 64 such warps. Loading
 * its own terms, each warp waited on memory for every batch it added
 * (2.35 ms a call on an H100, 11% of the profiled step). Here all QG_WARPS
 * warps load the lanes' next QG_CHUNK terms each (thread (u, t): lane
 * grp * 32 + t's terms u, u + QG_WARPS, ... of the chunk) into registers
 * while warp 0 adds the current chunk from shared memory, in each lane's
 * order: the sums are the same chains, the bits unchanged. A lane with
 * fewer terms than the block's first is padded with +0.0 terms, which
 * leave its sum's bits as they are (the sum starts at +0.0 and so is never
 * -0.0). (n, j) is carried from term to term (QG_WARPS * 256 apart) by
 * index_walk.h, not divided anew in 64 bits per term. */
__global__ void __launch_bounds__(QG_WARPS * 32)
    q_gain_dg_lanes_kernel(double *part, const float *dy, const uint16_t *dy16, const float *q,
                           int rows, int head_dim, int w, int flags) {
  __shared__ float stage[2][QG_CHUNK][QG_LANES];
  const int h = blockIdx.x, t = threadIdx.x % QG_LANES, u = threadIdx.x / QG_LANES;
  const size_t k0 = (size_t)blockIdx.y * QG_LANES, k = k0 + (size_t)t;
  const size_t terms = (size_t)rows * head_dim, step = (size_t)QG_WARPS * TREE_LANES;
  /* Chunks of the block's longest lane (its first), the same for every
   * thread: the barriers below are reached by all. */
  const size_t most = terms > k0 ? (terms - k0 + TREE_LANES - 1) / TREE_LANES : 0;
  const size_t chunks = (most + QG_CHUNK - 1) / QG_CHUNK;
  const float *dyh = dy ? dy + (size_t)h * head_dim : NULL, *qh = q + (size_t)h * head_dim;
  const uint16_t *dyp = dy16 ? dy16 + (size_t)h * head_dim : NULL;
  size_t m = k + (size_t)u * TREE_LANES;
  index_walk nj = index_walk_start(m, step, (size_t)head_dim);
  float v[QG_PER_THREAD];
  qg_terms(v, &m, &nj, terms, step, dyh, dyp, qh, w, flags);
  double acc = 0.0;
  for (size_t c = 0; c < chunks; c++) {
    #pragma unroll
    for (int r = 0; r < QG_PER_THREAD; r++) stage[c & 1][u + QG_WARPS * r][t] = v[r];
    __syncthreads();
    if (c + 1 < chunks) qg_terms(v, &m, &nj, terms, step, dyh, dyp, qh, w, flags);
    if (u == 0) {
      #pragma unroll 16
      for (int i = 0; i < QG_CHUNK; i++) acc = acc + (double)stage[c & 1][i][t];
    }
  }
  if (u == 0) part[(size_t)h * TREE_LANES + k] = acc;
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
  q_gain_dg_lanes_kernel<<<dim3((unsigned)heads, QG_GROUPS), QG_WARPS * 32, 0, stream>>>(
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
