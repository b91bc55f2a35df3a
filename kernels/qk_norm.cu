/* q and k's norm, RoPE and gain on the GPU (contract in qk_norm.h), one
 * warp per head row, eight a block, as rmsnorm.cu's rows: the row's sum
 * by rmsnorm_warp.h's tree, then each lane takes the rotation pairs (j,
 * j + head_dim / 2) for j = lane, lane + 32, ... straight from x, so the
 * normalised row is never stored. The backward rotates its pairs into
 * the warp's row of shared memory, which the norm's dot and dx then read
 * in the tree's order. Every element by the shared functions of
 * rmsnorm.h, rope.h and q_gain.h with the CPU's flags, so the results
 * equal qk_norm_forward and qk_norm_backward under KERNEL_TREE bit for
 * bit. No atomics. */
#include "kernels/cuda_common.h"
#include "kernels/q_gain.h"
#include "kernels/qk_norm.h"
#include "kernels/rmsnorm.h"
#include "kernels/rmsnorm_warp.h"
#include "kernels/rope.h"

/* ---- kernels ---- */

/* Rotation pairs a lane takes at most: (j, j + head_dim / 2) for j =
 * lane + 32 k. */
enum { QN_PAIRS = QK_NORM_HD_MAX / 64 };

/* Head row i of rows: its token's table row is (i / heads) % T. */
__global__ void __launch_bounds__(RN_THREADS)
    qk_norm_forward_kernel(float *rope, float *fin, uint16_t *fin16, float *rstd, const float *x,
                           const uint16_t *x16, const float *gain, const float *cos_t,
                           const float *sin_t, size_t rows, int T, int heads, int hd, int flags) {
  const int w = threadIdx.x / 32, t = threadIdx.x % 32, half = hd / 2;
  const size_t i = (size_t)blockIdx.x * RN_ROWS + w;
  if (i >= rows) return; /* the whole warp */
  /* row i is token i / heads's head i % heads (one division: the
   * remainder by a multiply) */
  const size_t tok = i / (size_t)heads, hq = i - tok * (size_t)heads;
  const size_t off = i * (size_t)hd, tab = tok % (size_t)T * (size_t)half;
  const float *xr = x ? x + off : NULL;
  const uint16_t *xh = x16 ? x16 + off : NULL;
  /* The rotation's operands are loaded before the tree, with its own
   * loads: after it, behind the store of rstd (which to the compiler may
   * be a table), they were one more round trip to memory for the row. */
  float x1[QN_PAIRS], x2[QN_PAIRS], c[QN_PAIRS], sn[QN_PAIRS];
  #pragma unroll
  for (int k = 0; k < QN_PAIRS; k++) {
    const int j = t + 32 * k;
    x1[k] = x2[k] = c[k] = sn[k] = 0.0f;
    if (j >= half) continue;
    x1[k] = kernel_load(xr, xh, j), x2[k] = kernel_load(xr, xh, j + half);
    c[k] = cos_t[tab + j], sn[k] = sin_t[tab + j];
  }
  const float g = gain ? gain[hq] : 0.0f;
  const float s = rmsnorm_rstd(warp_tree_dot(xr, xh, xr, xh, hd), hd);
  if (t == 0) rstd[i] = s;
  #pragma unroll
  for (int k = 0; k < QN_PAIRS; k++) {
    const int j = t + 32 * k;
    if (j >= half) continue;
    /* rmsnorm's y (flags 0), rotated as rope_forward rotates it */
    const float n1 = kernel_round_out(x1[k] * s, 0), n2 = kernel_round_out(x2[k] * s, 0);
    float f1, f2;
    if (!gain) {
      rope_rotate(&f1, &f2, n1, n2, c[k], sn[k], flags);
    } else {
      float y1, y2;
      rope_rotate(&y1, &y2, n1, n2, c[k], sn[k], 0);
      if (rope) rope[off + j] = y1, rope[off + j + half] = y2;
      f1 = q_gain_y(y1, g, flags), f2 = q_gain_y(y2, g, flags);
    }
    if (fin) fin[off + j] = f1, fin[off + j + half] = f2;
    if (fin16) fin16[off + j] = bf16_from_float(f1), fin16[off + j + half] = bf16_from_float(f2);
  }
}

/* dx may be dy, and dx16 dy16: the warp reads its row of dy whole (into
 * dn) before it writes any of dx. */
__global__ void __launch_bounds__(RN_THREADS)
    qk_norm_backward_kernel(float *dx, uint16_t *dx16, const float *dy, const uint16_t *dy16,
                            const float *x, const uint16_t *x16, const float *rstd,
                            const float *gain, const float *cos_t, const float *sin_t, size_t rows,
                            int T, int heads, int hd, int flags) {
  __shared__ float dn[RN_ROWS][QK_NORM_HD_MAX]; /* the norm's output gradient, by row */
  const int w = threadIdx.x / 32, t = threadIdx.x % 32, half = hd / 2;
  const size_t i = (size_t)blockIdx.x * RN_ROWS + w;
  if (i >= rows) return;
  /* row i is token i / heads's head i % heads (one division: the
   * remainder by a multiply) */
  const size_t tok = i / (size_t)heads, hq = i - tok * (size_t)heads;
  const size_t off = i * (size_t)hd, tab = tok % (size_t)T * (size_t)half;
  const float *xr = x ? x + off : NULL, *gr = dy ? dy + off : NULL;
  const uint16_t *xh = x16 ? x16 + off : NULL, *gh = dy16 ? dy16 + off : NULL;
  for (int j = t; j < half; j += 32) {
    float g1 = kernel_load(gr, gh, j), g2 = kernel_load(gr, gh, j + half);
    if (gain) { /* q_gain's dq, stored with flags 0: the product */
      const float g = gain[hq];
      g1 = q_gain_dq(g1, g, 0), g2 = q_gain_dq(g2, g, 0);
    }
    rope_rotate_back(&dn[w][j], &dn[w][j + half], g1, g2, cos_t[tab + j], sin_t[tab + j], 0);
  }
  __syncwarp();
  const float s = rstd[i];
  const float c = rmsnorm_grad_coef(s, warp_tree_dot(dn[w], NULL, xr, xh, hd), hd);
  /* The lane's loads before its stores (dx may be dy to the compiler) */
  float xv[2 * QN_PAIRS], old[2 * QN_PAIRS];
  const int acc = dx && (flags & KERNEL_ACCUMULATE);
  #pragma unroll
  for (int k = 0; k < 2 * QN_PAIRS; k++) {
    const int j = t + 32 * k;
    xv[k] = old[k] = 0.0f;
    if (j >= hd) continue;
    xv[k] = kernel_load(xr, xh, j);
    if (acc) old[k] = dx[off + j];
  }
  #pragma unroll
  for (int k = 0; k < 2 * QN_PAIRS; k++) {
    const int j = t + 32 * k;
    if (j >= hd) break;
    const float r = rmsnorm_dx(s, dn[w][j], xv[k], c);
    const float v = dx ? kernel_stored(old[k], r, flags) : kernel_round_out(r, flags);
    if (dx) dx[off + j] = v;
    if (dx16) dx16[off + j] = bf16_from_float(v);
  }
}

/* ---- launchers ---- */

static int check_shape(int rows, int T, int heads, int hd, pg_error *err) {
  if (rows < 0 || T < 1 || heads < 1 || hd < 2 || hd % 2 || hd > QK_NORM_HD_MAX)
    return pg_fail(err, "", -1,
                   "qk_norm: bad shape rows %d, T %d, heads %d, head_dim %d (even, at most %d)",
                   rows, T, heads, hd, QK_NORM_HD_MAX);
  return 0;
}

static unsigned blocks(size_t head_rows) { return (unsigned)((head_rows + RN_ROWS - 1) / RN_ROWS); }

extern "C" int qk_norm_forward_cuda(float *rope, float *fin, uint16_t *fin16, float *rstd,
                                    const float *x, const uint16_t *x16, const float *gain,
                                    const float *cos_t, const float *sin_t, int rows, int T,
                                    int heads, int head_dim, int flags, cudaStream_t stream,
                                    pg_error *err) {
  if (check_shape(rows, T, heads, head_dim, err) || cuda_input_check(err, "qk_norm", "x", x, x16) ||
      cuda_packed_check(err, "qk_norm", fin16, flags & ~KERNEL_ACCUMULATE) ||
      cuda_output_check(err, "qk_norm", fin, fin16))
    return -1;
  const size_t n = (size_t)rows * heads;
  if (n == 0) return 0;
  qk_norm_forward_kernel<<<blocks(n), RN_THREADS, 0, stream>>>(
      rope, fin, fin16, rstd, x, x16, gain, cos_t, sin_t, n, T, heads, head_dim, flags);
  return cuda_check_launch(err, "qk_norm_forward_kernel");
}

extern "C" int qk_norm_backward_cuda(float *dx, uint16_t *dx16, const float *dy,
                                     const uint16_t *dy16, const float *x, const uint16_t *x16,
                                     const float *rstd, const float *gain, const float *cos_t,
                                     const float *sin_t, int rows, int T, int heads, int head_dim,
                                     int flags, cudaStream_t stream, pg_error *err) {
  if (check_shape(rows, T, heads, head_dim, err) || cuda_input_check(err, "qk_norm", "x", x, x16) ||
      cuda_input_check(err, "qk_norm", "dy", dy, dy16) ||
      cuda_packed_check(err, "qk_norm", dx16, flags) || cuda_output_check(err, "qk_norm", dx, dx16))
    return -1;
  if (!dx && (flags & KERNEL_ACCUMULATE))
    return pg_fail(err, "", -1, "qk_norm: accumulating needs dx");
  const size_t n = (size_t)rows * heads;
  if (n == 0) return 0;
  qk_norm_backward_kernel<<<blocks(n), RN_THREADS, 0, stream>>>(
      dx, dx16, dy, dy16, x, x16, rstd, gain, cos_t, sin_t, n, T, heads, head_dim, flags);
  return cuda_check_launch(err, "qk_norm_backward_kernel");
}
