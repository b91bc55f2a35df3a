/* det_math's float functions on the GPU, elementwise (contract in
 * det_math.h): det_math_hd.h's double sequences compiled by nvcc with the
 * pinned flags, for the tests that compare them with the CPU's bits. */
#include "kernels/cuda_common.h"
#include "kernels/det_expf32.h"
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
    else if (fn == DET_FN_EXPF32)
      a[i] = det_expf32_hd(v);
    else
      det_sincosf_hd(v, &a[i], &b[i]);
  }
}

/* ---- launchers ---- */

extern "C" int det_math_eval_cuda(float *a, float *b, const float *x, size_t n, int fn,
                                  cudaStream_t stream, pg_error *err) {
  if (fn < DET_FN_EXPF || fn > DET_FN_EXPF32)
    return pg_fail(err, "", -1, "det_math_eval: unknown function %d", fn);
  if (n == 0) return 0;
  det_math_eval_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, stream>>>(a, b, x, n, fn);
  return cuda_check_launch(err, "det_math_eval_kernel");
}
