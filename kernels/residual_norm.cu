/* The residual update and its norm on the GPU (contract in
 * residual_norm.h): one warp per row, eight rows a block. Each lane
 * computes its elements j = lane, lane + 32, ... of u and v by
 * scale_add.h's and residual_mix.h's shared code and stores them; the row's
 * sum of squares is then rmsnorm_warp.h's tree over the stored values,
 * which are the lane's own writes (the tree's lanes read j = lane mod 32
 * too), so no barrier is needed and the reads come from the cache, not
 * from memory; the output as rmsnorm_forward_kernel's. No atomics. */
#include "kernels/cuda_common.h"
#include "kernels/residual_mix.h"
#include "kernels/residual_norm.h"
#include "kernels/rmsnorm.h"
#include "kernels/rmsnorm_warp.h"
#include "kernels/scale_add.h"

/* ---- kernels ---- */

__global__ void __launch_bounds__(RN_THREADS)
    residual_norm_forward_kernel(residual_norm_io io, int rows, int d, int add_flags,
                                 int norm_flags) {
  const int w = threadIdx.x / 32, t = threadIdx.x % 32;
  const size_t r = (size_t)blockIdx.x * RN_ROWS + w;
  if (r >= (size_t)rows) return; /* the whole warp */
  const size_t off = r * (size_t)d;
  /* Both passes over the row take 256 elements at a time, all their
   * loads before any of their stores: to the compiler the outputs may be
   * the inputs, so element by element each load waited for the store
   * before it. Elementwise, so the bits are the same. */
  if (io.s || io.mix)
    for (int base = 0; base < d; base += TREE_LANES) {
      float x[RN_PER], sc[RN_PER], y[RN_PER], x0[RN_PER], m0[RN_PER], m1[RN_PER];
      #pragma unroll
      for (int i = 0; i < RN_PER; i++) {
        const int j = base + t + 32 * i;
        x[i] = sc[i] = y[i] = x0[i] = m0[i] = m1[i] = 0.0f;
        if (j >= d) continue;
        x[i] = io.x[off + j];
        if (io.s) sc[i] = io.s[j], y[i] = kernel_load(io.y, io.y16, off + j);
        if (io.mix) x0[i] = io.x0[off + j], m0[i] = io.mix[j], m1[i] = io.mix[d + j];
      }
      #pragma unroll
      for (int i = 0; i < RN_PER; i++) {
        const int j = base + t + 32 * i;
        if (j >= d) break;
        float u = x[i];
        if (io.s) {
          u = scale_add_out(u, sc[i], y[i], add_flags);
          io.u[off + j] = u;
        }
        if (io.mix) io.v[off + j] = residual_mix_out(u, x0[i], m0[i], m1[i], add_flags);
      }
    }
  const float *xr = (io.mix ? io.v : io.s ? io.u : io.x) + off;
  const float s = rmsnorm_rstd(warp_tree_dot(xr, NULL, xr, NULL, d), d);
  if (t == 0) io.rstd[r] = s;
  for (int base = 0; base < d; base += TREE_LANES) {
    float xv[RN_PER];
    #pragma unroll
    for (int i = 0; i < RN_PER; i++) {
      const int j = base + t + 32 * i;
      xv[i] = j < d ? xr[j] : 0.0f;
    }
    #pragma unroll
    for (int i = 0; i < RN_PER; i++) {
      const int j = base + t + 32 * i;
      if (j >= d) break;
      const float v = kernel_round_out(xv[i] * s, norm_flags);
      if (io.n) io.n[off + j] = v;
      if (io.n16) io.n16[off + j] = bf16_from_float(v);
    }
  }
}

/* ---- launchers ---- */

extern "C" int residual_norm_forward_cuda(const residual_norm_io *io, int rows, int d,
                                          int add_flags, int norm_flags, cudaStream_t stream,
                                          pg_error *err) {
  if (rows < 0 || d < 1) return pg_fail(err, "", -1, "residual_norm: bad shape %d x %d", rows, d);
  if (!io->x || !io->rstd) return pg_fail(err, "", -1, "residual_norm: no x or no rstd");
  if (io->s && !io->u) return pg_fail(err, "", -1, "residual_norm: an add needs u");
  if (io->s && cuda_input_check(err, "residual_norm", "y", io->y, io->y16)) return -1;
  if (io->mix && (!io->v || !io->x0))
    return pg_fail(err, "", -1, "residual_norm: a mix needs v and x0");
  if (cuda_packed_check(err, "residual_norm", io->n16, norm_flags) ||
      cuda_output_check(err, "residual_norm", io->n, io->n16))
    return -1;
  if (rows == 0) return 0;
  const unsigned blocks = (unsigned)((rows + RN_ROWS - 1) / RN_ROWS);
  residual_norm_forward_kernel<<<blocks, RN_THREADS, 0, stream>>>(*io, rows, d, add_flags,
                                                                  norm_flags);
  return cuda_check_launch(err, "residual_norm_forward_kernel");
}
