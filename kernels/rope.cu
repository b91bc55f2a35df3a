/* Rotary position embedding on the GPU (contract in rope.h): the tables
 * and the rotations elementwise by rope.h's shared code (det_math_hd.h's
 * exp, log and sincos in double, no device math library), so every value
 * equals the CPU kernels' bit for bit. */
#include "kernels/cuda_common.h"
#include "kernels/index_walk.h"
#include "kernels/rope.h"

/* ---- kernels ---- */

/* Entry i = t * half + j of both tables, (t, j) kept by a walk
 * (index_walk.h). inv_freq is recomputed per entry: the same function of
 * j, so the same bits as the CPU's once-per-j value. */
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    rope_table_kernel(float *cos_t, float *sin_t, size_t n, int half, int head_dim, float base,
                      int flags) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (index_walk tj = index_walk_start(i, stride, (size_t)half); i < n;
       i += stride, index_walk_next(&tj, 0))
    rope_table_entry(&cos_t[i], &sin_t[i], (int)tj.q, rope_inv_freq((int)tj.r, head_dim, base),
                     flags);
}

/* Pair i = (r * heads + h) * half + j: its two elements sit half apart in
 * head h of row r; the tables' row is r % T. backward selects the
 * direction. Three chained walks (index_walk.h) keep j and rh = i / half
 * (pj), r (ph's quotient) and r % T (pt's remainder). */
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    rope_kernel(float *out, const float *in, const float *cos_t, const float *sin_t, size_t n,
                int T, int heads, int half, int flags, int backward) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  index_walk pj = index_walk_start(i, stride, (size_t)half);
  index_walk ph = index_walk_start(pj.q, pj.dq, (size_t)heads);
  index_walk pt = index_walk_start(ph.q, ph.dq, (size_t)T);
  for (; i < n; i += stride, index_walk_next(&pt, index_walk_next(&ph, index_walk_next(&pj, 0)))) {
    const size_t j = pj.r, rh = pj.q;
    size_t e1 = rh * 2 * (size_t)half + j, e2 = e1 + (size_t)half; /* row r, head h, pair j */
    size_t tj = pt.r * (size_t)half + j;
    float a = in[e1], b = in[e2], c = cos_t[tj], s = sin_t[tj];
    if (backward)
      rope_rotate_back(&out[e1], &out[e2], a, b, c, s, flags);
    else
      rope_rotate(&out[e1], &out[e2], a, b, c, s, flags);
  }
}

/* ---- launchers ---- */

static int check_shape(int rows, int T, int heads, int head_dim, pg_error *err) {
  if (rows < 0 || T < 1 || heads < 1 || head_dim < 2 || head_dim % 2)
    return pg_fail(err, "", -1, "rope: bad shape rows %d, T %d, heads %d, head_dim %d", rows, T,
                   heads, head_dim);
  return 0;
}

static int launch(float *out, const float *in, const float *cos_t, const float *sin_t, int rows,
                  int T, int heads, int head_dim, int flags, int backward, cudaStream_t stream,
                  pg_error *err) {
  if (check_shape(rows, T, heads, head_dim, err)) return -1;
  int half = head_dim / 2;
  size_t n = (size_t)rows * heads * half;
  if (n == 0) return 0;
  rope_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(out, in, cos_t, sin_t, n, T, heads,
                                                                 half, flags, backward);
  return cuda_check_launch(err, backward ? "rope_kernel (backward)" : "rope_kernel (forward)");
}

extern "C" int rope_table_cuda(float *cos_t, float *sin_t, int T, int head_dim, float base,
                               int flags, cudaStream_t stream, pg_error *err) {
  if (check_shape(0, T, 1, head_dim, err)) return -1;
  int half = head_dim / 2;
  size_t n = (size_t)T * half;
  rope_table_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(cos_t, sin_t, n, half,
                                                                       head_dim, base, flags);
  return cuda_check_launch(err, "rope_table_kernel");
}

extern "C" int rope_forward_cuda(float *y, const float *x, const float *cos_t, const float *sin_t,
                                 int rows, int T, int heads, int head_dim, int flags,
                                 cudaStream_t stream, pg_error *err) {
  return launch(y, x, cos_t, sin_t, rows, T, heads, head_dim, flags, 0, stream, err);
}

extern "C" int rope_backward_cuda(float *dx, const float *dy, const float *cos_t,
                                  const float *sin_t, int rows, int T, int heads, int head_dim,
                                  int flags, cudaStream_t stream, pg_error *err) {
  return launch(dx, dy, cos_t, sin_t, rows, T, heads, head_dim, flags, 1, stream, err);
}
