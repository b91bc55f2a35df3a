/* Soft-capped cross-entropy on the GPU (contract in
 * softcap_cross_entropy.h). Forward: one block of TREE_LANES threads per
 * row takes the row max and the sum of exp(logit - max) through the fixed
 * tree of reduce_tree.h in shared memory, then one block sums the rows'
 * nll through the same tree in float64; the result equals
 * softcap_cross_entropy_forward_tree_ref bit for bit. Backward:
 * elementwise, equal to the CPU kernel. tanh, exp and log are
 * det_math_hd.h's double sequences (exp through det_expf_fast.h, whose
 * bits are det_expf's); no atomics, no device math library. */
#include <math.h>

#include "kernels/cuda_common.h"
#include "kernels/det_expf_fast.h"
#include "kernels/det_math_hd.h"
#include "kernels/index_walk.h"
#include "kernels/reduce_tree.h"
#include "kernels/softcap_cross_entropy.h"

/* ---- kernels ---- */

/* Row r = blockIdx.x; lane k = threadIdx.x handles logits i = k, k + 256,
 * ... (writing th, its floats or its packed copy or both), then the max
 * tree; again for the sum of exp, reading th back from its own stores.
 * Lane 0 writes lse and nll; the target's th is recomputed from z (the
 * same shared code) rather than read back from another thread's store.
 * z comes as floats or packed (kernel_load). */
__global__ void __launch_bounds__(TREE_LANES)
    softcap_ce_rows_kernel(float *th, uint16_t *th16, float *lse, float *nll, const float *z,
                           const uint16_t *z16, const uint16_t *y, int V, float cap, float inv_cap,
                           int flags) {
  __shared__ float part[TREE_LANES];
  const int k = threadIdx.x;
  const size_t r = blockIdx.x;
  const float *zr = z ? z + r * (size_t)V : NULL;
  const uint16_t *zh = z16 ? z16 + r * (size_t)V : NULL;
  float *tr = th ? th + r * (size_t)V : NULL;
  uint16_t *th_ = th16 ? th16 + r * (size_t)V : NULL;
  float m = -INFINITY;
  for (int i = k; i < V; i += TREE_LANES) {
    float t = softcap_th(softcap_u(kernel_load(zr, zh, i), cap, inv_cap, flags), flags);
    if (tr) tr[i] = t;
    if (th_) th_[i] = bf16_from_float(t);
    m = tree_max2(m, softcap_logit(t, cap, flags));
  }
  part[k] = m;
  __syncthreads();
  for (int off = TREE_LANES / 2; off > 0; off >>= 1) {
    if (k < off) part[k] = tree_max2(part[k], part[k + off]);
    __syncthreads();
  }
  m = part[0];
  __syncthreads(); /* part is reused for the sum */
  float s = 0.0f;
  for (int i = k; i < V; i += TREE_LANES)
    s = s + det_expf_fast_hd(softcap_logit(kernel_load(tr, th_, i), cap, flags) - m);
  part[k] = s;
  __syncthreads();
  for (int off = TREE_LANES / 2; off > 0; off >>= 1) {
    if (k < off) part[k] = part[k] + part[k + off];
    __syncthreads();
  }
  if (k == 0) {
    float l = m + det_logf_hd(part[0]);
    float ty = softcap_th(softcap_u(kernel_load(zr, zh, y[r]), cap, inv_cap, flags), flags);
    lse[r] = l;
    nll[r] = l - softcap_logit(ty, cap, flags);
  }
}

/* One block: lane k sums (double) nll[r] for r = k, k + 256, ..., the
 * float64 halving, then the mean rounded once. */
__global__ void __launch_bounds__(TREE_LANES)
    softcap_ce_mean_kernel(float *loss, const float *nll, int N) {
  __shared__ double part[TREE_LANES];
  const int k = threadIdx.x;
  double acc = 0.0;
  for (int r = k; r < N; r += TREE_LANES) acc = acc + (double)nll[r];
  part[k] = acc;
  __syncthreads();
  for (int off = TREE_LANES / 2; off > 0; off >>= 1) {
    if (k < off) part[k] = part[k] + part[k + off];
    __syncthreads();
  }
  if (k == 0) *loss = (float)(part[0] / N);
}

/* Element idx is (row, vocabulary entry) = (idx / V, idx % V), kept by
 * the walk (index_walk.h). */
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    softcap_ce_backward_kernel(float *dz, uint16_t *dz16, const float *th, const uint16_t *th16,
                               const float *lse, const uint16_t *y, size_t n, int V, float cap,
                               float inv_cap, float w, int flags) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (index_walk ri = index_walk_start(idx, stride, (size_t)V); idx < n;
       idx += stride, index_walk_next(&ri, 0)) {
    const size_t r = ri.q, i = ri.r;
    float t = kernel_load(th, th16, idx);
    float p = det_expf_fast_hd(softcap_logit(t, cap, flags) - lse[r]);
    float g = softcap_dz(p, i == y[r], w, t, cap, inv_cap, flags);
    float v = dz ? kernel_store(&dz[idx], g, flags) : kernel_round_out(g, flags);
    if (dz16) dz16[idx] = bf16_from_float(v);
  }
}

/* ---- launchers ---- */

static int check_shape(int N, int V, pg_error *err) {
  if (N < 1 || V < 1) return pg_fail(err, "", -1, "softcap_cross_entropy: bad shape %d x %d", N, V);
  return 0;
}

extern "C" int softcap_cross_entropy_forward_cuda(float *th, uint16_t *th16, float *lse, float *nll,
                                                  float *loss, const float *z, const uint16_t *z16,
                                                  const uint16_t *y, int N, int V, float cap,
                                                  int flags, cudaStream_t stream, pg_error *err) {
  if (check_shape(N, V, err) || cuda_input_check(err, "softcap_cross_entropy", "z", z, z16) ||
      cuda_packed_check(err, "softcap_cross_entropy", th16, flags & KERNEL_BF16) ||
      cuda_output_check(err, "softcap_cross_entropy", th, th16))
    return -1;
  const float inv_cap = 1.0f / cap; /* as the CPU kernel: one IEEE division */
  softcap_ce_rows_kernel<<<N, TREE_LANES, 0, stream>>>(th, th16, lse, nll, z, z16, y, V, cap,
                                                       inv_cap, flags);
  if (cuda_check_launch(err, "softcap_ce_rows_kernel")) return -1;
  softcap_ce_mean_kernel<<<1, TREE_LANES, 0, stream>>>(loss, nll, N);
  return cuda_check_launch(err, "softcap_ce_mean_kernel");
}

extern "C" int softcap_cross_entropy_backward_cuda(float *dz, uint16_t *dz16, const float *th,
                                                   const uint16_t *th16, const float *lse,
                                                   const uint16_t *y, int N, int V, float cap,
                                                   float g, int flags, cudaStream_t stream,
                                                   pg_error *err) {
  if (check_shape(N, V, err) || cuda_packed_check(err, "softcap_cross_entropy", dz16, flags) ||
      cuda_output_check(err, "softcap_cross_entropy", dz, dz16) ||
      cuda_input_check(err, "softcap_cross_entropy", "th", th, th16))
    return -1;
  if (!dz && (flags & KERNEL_ACCUMULATE))
    return pg_fail(err, "", -1, "softcap_cross_entropy: an accumulated dz needs its floats");
  const float w = g / (float)N, inv_cap = 1.0f / cap; /* as the CPU kernel */
  size_t n = (size_t)N * V;
  softcap_ce_backward_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(
      dz, dz16, th, th16, lse, y, n, V, cap, inv_cap, w, flags);
  return cuda_check_launch(err, "softcap_ce_backward_kernel");
}
