/* det_expf32_hd(x): e^x in float32 arithmetic alone, within one unit in
 * the last place of det_expf's correctly rounded result (equal to it on
 * all but 0.8% of the floats), and the same bits on the CPU and the GPU.
 *
 * Why: the mixed-precision attention takes an exponential per causal
 * pair in its forward and again in dk/dv (3.9e10 a baseline step).
 * det_expf's bits need float64 arithmetic (det_expf_fast.h: ten double
 * operations, an integer rounding and a rare fallback, about 60 SASS
 * instructions an exponential), which was most of the tensor-core
 * attention's per-tile instructions once its products ran on the tensor
 * cores. The mixed precision's contract does not name its exponential
 * (the official script's flash attention uses the GPU's approximate
 * exp2), and its probabilities are rounded to bf16 before their
 * products, so a last-place difference in a float32 probability rarely
 * survives; float32 mode keeps det_expf.
 *
 * How: xc = x clamped to [-104, 89]; n = round(xc / ln 2) by the
 * 1.5 * 2^23 addition (round to nearest even, n's bits in the sum's low
 * mantissa); r = xc - n ln2_hi - n ln2_lo with ln2_hi's 16 significant
 * bits, so n ln2_hi is exact and so is the first subtraction; e^r by a
 * degree-7 polynomial in Horner form (|r| <= ln 2 / 2: the truncation is
 * about 0.1 of a unit); then 2^n as two exact powers of two (n split in
 * halves), so that only the last product rounds, also where the result
 * is subnormal. Below -104 the result is +0 (e^-104 is under half the
 * smallest subnormal), above ln(FLT_MAX) +inf, both by the arithmetic
 * itself, and NaN is returned as it came. Every operation is a separate
 * IEEE float multiply or add: no fused multiply-add (explicit or
 * contracted: gcc -ffp-contract=off, nvcc --fmad=false), no library call
 * and, on the GPU, no branch (the clamp and NaN's case are selects), so
 * gcc's code and nvcc's give the same bits. gcc keeps a float
 * comparison that may trap, on NaN, as a branch and so does not vectorize
 * a loop of these; on the CPU, arrays take det_expf32_shift_array
 * (kernels/det_math.c), the same operations on vectors with integer
 * masks (which on the GPU cost about 130 more SASS instructions an
 * attention tile). tests/test_det_expf_fast.c checks the bound against
 * det_expf and the vector twin's bits on every float,
 * tests/test_det_expf32.c the ends of the range, and the GPU's det_math
 * sweep nvcc's bits against gcc's. */
#ifndef PGOLF_DET_EXPF32_H
#define PGOLF_DET_EXPF32_H

#include "kernels/hd.h"

/* The constants, named once for this function and its vector twin
 * (det_expf32_shift_array, kernels/det_math.c). The polynomial's
 * coefficients for e^r = 1 + r + r^2 (c2 + c3 r + ...) are the classic
 * minimax set for float expf on [-ln 2 / 2, ln 2 / 2] (Cephes);
 * DET_EXPF32_C7 is exposed for the test's negative check. */
#define DET_EXPF32_LO (-104.0f)
#define DET_EXPF32_HI 89.0f
#define DET_EXPF32_LOG2E 1.44269502f
#define DET_EXPF32_SHIFT 12582912.0f            /* 1.5 * 2^23: n in the sum's low bits */
#define DET_EXPF32_SHIFT_BITS 0x4b400000u       /* its bit pattern */
#define DET_EXPF32_NLN2_HI (-0.693145751953125f) /* -ln2_hi: n ln2_hi exact, the sum too */
#define DET_EXPF32_NLN2_LO (-1.428606765330187e-06f)
#define DET_EXPF32_C7 1.9875691500e-4f
#define DET_EXPF32_C6 1.3981999507e-3f
#define DET_EXPF32_C5 8.3334519073e-3f
#define DET_EXPF32_C4 4.1665795894e-2f
#define DET_EXPF32_C3 1.6666665459e-1f
#define DET_EXPF32_C2 5.0000001201e-1f

/* The float arithmetic from the clamped xc to t (whose low bits hold n)
 * and p = e^r, written once for the scalar function below and its vector
 * twin: the variables may be floats or GCC vectors of floats (c7 then a
 * vector too), the operations and their order are the same. */
#define DET_EXPF32_STEPS(xc, t, n, r, p, c7)          \
  do {                                                \
    (t) = (xc) * DET_EXPF32_LOG2E + DET_EXPF32_SHIFT; \
    (n) = (t) - DET_EXPF32_SHIFT;                     \
    (r) = (n) * DET_EXPF32_NLN2_HI + (xc);            \
    (r) = (n) * DET_EXPF32_NLN2_LO + (r);             \
    (p) = (c7);                                       \
    (p) = (p) * (r) + DET_EXPF32_C6;                  \
    (p) = (p) * (r) + DET_EXPF32_C5;                  \
    (p) = (p) * (r) + DET_EXPF32_C4;                  \
    (p) = (p) * (r) + DET_EXPF32_C3;                  \
    (p) = (p) * (r) + DET_EXPF32_C2;                  \
    (p) = (p) * ((r) * (r)) + (r);                    \
    (p) = (p) + 1.0f;                                 \
  } while (0)

PGOLF_HD float det_expf32_poly_hd(float x, float c7) {
  /* NaN takes DET_EXPF32_LO here, and is put back below */
  float xc = x > DET_EXPF32_LO ? x : DET_EXPF32_LO;
  xc = xc < DET_EXPF32_HI ? xc : DET_EXPF32_HI;
  float t, n, r, p;
  DET_EXPF32_STEPS(xc, t, n, r, p, c7);
  const int k = (int)(hd_float_bits(t) - DET_EXPF32_SHIFT_BITS);
  /* 2^k as 2^k1 2^k2, each a normal float (|k1|, |k2| <= 75): p 2^k1 is
   * exact, and the last product rounds once. */
  const int k1 = k >> 1, k2 = k - k1;
  const float y =
      p * hd_bits_float((uint32_t)(k1 + 127) << 23) * hd_bits_float((uint32_t)(k2 + 127) << 23);
  /* The range's ends need no select of their own: at xc = -104 the
   * product is under half the smallest subnormal and rounds to +0; for
   * every float above the largest whose e^x is finite
   * (88.72283172607421875), n is 128, r > 0 so p >= 1, and p 2^64 2^64
   * overflows to +inf (test_det_expf32 checks both ends, the exhaustive
   * sweep every float). NaN, which the clamp takes as -104, is returned
   * as it came. */
  return x != x ? x : y;
}

PGOLF_HD float det_expf32_hd(float x) { return det_expf32_poly_hd(x, DET_EXPF32_C7); }

#endif
