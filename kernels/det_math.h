/* Deterministic elementary functions for the training and evaluation path.
 *
 * Why not libm: glibc picks a CPU-specific variant of expf, logf, tanhf,
 * sin, cos, pow at load time (FMA or not) and its algorithms change between
 * versions, so the last bit of a result can differ from one x86-64 machine
 * to another, and the loss chain with it. These functions are fixed
 * sequences of IEEE-754 double operations (add, subtract, multiply,
 * divide, compare, exact bit manipulation; no fused multiply-add, no table
 * lookups, no libm), so every machine and every build (-O0 to -O3, SSE2 or
 * AVX2 code) gives the same bits.
 *
 * Accuracy (measured by tests/test_kernels_det_math.c against glibc's
 * double-precision functions): the float functions are computed in double
 * with a relative error below 1e-14 and rounded once, so each float result
 * is within 0.5 + 1e-6 ulp of the exact value: the correctly rounded float
 * except in the rare case where the exact value lies within 1e-14 of a
 * rounding boundary. The double helpers det_exp and det_log are within a
 * few double ulps (the test's bound: relative error <= 5e-16).
 *
 * Special values follow C99 Annex F: exp(-inf) = +0, exp(+inf) = +inf,
 * overflow gives +inf, underflow a correctly signed zero or denormal;
 * log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf; tanh(+-0) = +-0,
 * tanh(+-inf) = +-1; NaN in, NaN out. det_sincosf takes |x| <= 2^20
 * (arguments of RoPE tables are positions times frequencies <= 1); beyond
 * that, and for infinities, it returns NaN.
 *
 * The array versions are vectorised (AVX2 when present) and give the same
 * bits as the scalar ones. y may be x. The scalar functions are
 * det_math_hd.h's shared host/device code, so the CUDA kernels get the
 * same bits for every non-NaN result. */
#ifndef PGOLF_DET_MATH_H
#define PGOLF_DET_MATH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

float det_expf(float x);
float det_logf(float x);
float det_tanhf(float x);
void det_sincosf(float x, float *s, float *c);

double det_exp(double x);
double det_log(double x);

/* y[i] = det_expf(x[i] - sub), the subtraction in float32 (softmax and
 * log-sum-exp shifts). */
void det_expf_shift_array(float *y, const float *x, float sub, size_t n);
/* y[i] = det_expf32_hd(x[i] - sub) (kernels/det_expf32.h: the mixed
 * precision attention's float32 exponential), its bits, eight at a time
 * (y may be x). */
void det_expf32_shift_array(float *y, const float *x, float sub, size_t n);
/* y[i] = det_tanhf(x[i]). */
void det_tanhf_array(float *y, const float *x, size_t n);

/* The functions a GPU sweep can evaluate (det_math_eval_cuda).
 * DET_FN_EXPF_FAST is det_expf_fast_hd (kernels/det_expf_fast.h), whose
 * bits are det_expf's; DET_FN_EXPF32 is det_expf32_hd (kernels/
 * det_expf32.h, the mixed-precision attention's exponential), float32
 * arithmetic whose bits must be gcc's too. */
enum {
  DET_FN_EXPF = 0,
  DET_FN_LOGF = 1,
  DET_FN_TANHF = 2,
  DET_FN_SINCOSF = 3,
  DET_FN_EXPF_FAST = 4,
  DET_FN_EXPF32 = 5
};

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

/* det_math_hd.h's float functions on the GPU, one per element of x
 * (device pointers): a[i] = f(x[i]); for DET_FN_SINCOSF a[i] = sin, b[i] =
 * cos (b unused otherwise). So the tests can hold the device's bits to the
 * CPU's over dense sweeps, not only through the kernels that use them. */
int det_math_eval_cuda(float *a, float *b, const float *x, size_t n, int fn, cudaStream_t stream,
                       pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
