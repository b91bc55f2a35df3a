/* det_math's float functions on the GPU, elementwise (contract in
 * det_math.h): det_math_hd.h's double sequences compiled by nvcc with the
 * pinned flags, for the tests that compare them with the CPU's bits. */
#include "kernels/cuda_common.h"
#include "kernels/det_expf_fast.h"
#include "kernels/det_math.h"
#include "kernels/det_math_hd.h"

/* ---- kernels ---- */

__global__ void __launch_bounds__(CUDA_EW_THREADS)
    det_math_eval_kernel(float *a, float *b, const float *x, size_t n, int fn) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    float v = x[i];
    if (fn == DET_FN_EXPF)
      a[i] = det_expf_hd(v);
    else if (fn == DET_FN_LOGF)
      a[i] = det_logf_hd(v);
    else if (fn == DET_FN_TANHF)
      a[i] = det_tanhf_hd(v);
    else if (fn == DET_FN_EXPF_FAST)
      a[i] = det_expf_fast_hd(v);
    else
      det_sincosf_hd(v, &a[i], &b[i]);
  }
}

/* DET_FN_EXPF_GROUP: thread i takes inputs [16 i, 16 i + 16), those
 * below n live (loaded and stored; the others are +0.0 and dropped). */
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    det_math_group_kernel(float *a, const float *x, size_t n) {
  enum { G = 16 };
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n + G - 1) / G; i += stride) {
    float v[G];
    unsigned live = 0;
    #pragma unroll
    for (int k = 0; k < G; k++) {
      const size_t j = i * G + (size_t)k;
      v[k] = j < n ? x[j] : 0.0f;
      if (j < n) live |= 1u << k;
    }
    det_expf_fast_group<G, 0>(v, live);
    #pragma unroll
    for (int k = 0; k < G; k++)
      if (live >> k & 1u) a[i * G + (size_t)k] = v[k];
  }
}

/* ---- launchers ---- */

extern "C" int det_math_eval_cuda(float *a, float *b, const float *x, size_t n, int fn,
                                  cudaStream_t stream, pg_error *err) {
  if (fn < DET_FN_EXPF || fn > DET_FN_EXPF_GROUP)
    return pg_fail(err, "", -1, "det_math_eval: unknown function %d", fn);
  if (n == 0) return 0;
  if (fn == DET_FN_EXPF_GROUP) {
    det_math_group_kernel<<<cuda_ew_blocks((n + 15) / 16), CUDA_EW_THREADS, 0, stream>>>(a, x, n);
    return cuda_check_launch(err, "det_math_group_kernel");
  }
  det_math_eval_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(a, b, x, n, fn);
  return cuda_check_launch(err, "det_math_eval_kernel");
}
