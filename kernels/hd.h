/* PGOLF_HD marks the per-element arithmetic that a CPU kernel (kernels/
 * <op>.c, compiled by gcc) and its CUDA twin (kernels/<op>.cu, compiled by
 * nvcc) share: one inline function, so both sides compute the same
 * expression in the same order. With contraction off on both sides (gcc
 * -ffp-contract=off, nvcc --fmad=false) and IEEE division and square root
 * (nvcc -prec-div=true -prec-sqrt=true -ftz=false), the same inputs give the
 * same bits on the CPU and on the GPU. */
#ifndef PGOLF_HD_H
#define PGOLF_HD_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define PGOLF_HD static __host__ __device__ __forceinline__
#else
#define PGOLF_HD static inline
#endif

/* The bits of a float32 and back, without aliasing: memcpy on the host,
 * the reinterpreting intrinsics on the device. */
PGOLF_HD uint32_t hd_float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
#endif
}

PGOLF_HD float hd_bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
#endif
}

/* The same for float64 (det_math's exponent and mantissa arithmetic). */
PGOLF_HD uint64_t hd_double_bits(double x) {
#if defined(__CUDA_ARCH__)
  return (uint64_t)__double_as_longlong(x);
#else
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
#endif
}

PGOLF_HD double hd_bits_double(uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double((long long)u);
#else
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
#endif
}

#endif
