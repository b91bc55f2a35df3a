/* det_math's scalar functions as shared host/device code (kernels/hd.h):
 * the one definition of each operation sequence for one value, compiled by
 * gcc into det_math.c's scalar entry points and by nvcc into the CUDA
 * kernels, so the GPU gives the CPU's bits.
 *
 * The contract, the methods and the accuracy are det_math.h's and
 * det_math.c's. Each function here is the sequence of det_math.c's vector
 * code for one lane, operation for operation in the same order: its
 * selects become conditionals (both give the selected value, exactly), its
 * lane masks become 0/1 integers, its bit casts hd_double_bits /
 * hd_bits_double. The array versions in det_math.c keep the vector code;
 * tests/test_kernels_det_math.c checks they equal these bit for bit, and
 * tests/e2e/det_math.sh pins the bits of both.
 *
 * Only IEEE operations that nvcc (--fmad=false, IEEE division) and gcc
 * (-ffp-contract=off) both round the same way: double add, subtract,
 * multiply, divide, compare, conversions, integer bit arithmetic. No libm
 * and no CUDA intrinsic. The coefficients are written as quotients of
 * integers, which every compiler folds to the correctly rounded double.
 * NaN inputs give NaN; which NaN (payload, sign) is the hardware's, and the
 * GPU's differs from the CPU's: only the bits of non-NaN results are
 * shared. */
#ifndef PGOLF_DET_MATH_HD_H
#define PGOLF_DET_MATH_HD_H

#include <stdint.h>

#include "kernels/hd.h"

#define DET_INV_LN2 0x1.71547652b82fep0
#define DET_LN2_HI 0x1.62e42fee00000p-1 /* 32 bits: k * LN2_HI exact, |k| < 2^21 */
#define DET_LN2_LO 0x1.a39ef35793c76p-33
#define DET_ROUND_SHIFT 0x1.8p52 /* x + 1.5*2^52: rounds x to an integer */
#define DET_SIGN_BIT 0x8000000000000000ull

/* floor(k / 2) for any int64 k: the vector code's arithmetic k >> 1,
 * written without relying on how >> treats a negative value. */
PGOLF_HD int64_t det_half_floor(int64_t k) { return (k - (k & 1)) / 2; }

/* e^x in double (NaN propagates). */
PGOLF_HD double det_exp_hd(double x) {
  x = x < -746.0 ? -746.0 : x; /* e^-746 < half the least denormal */
  x = x > 710.0 ? 710.0 : x;   /* e^710 > the largest double */
  double t = x * DET_INV_LN2 + DET_ROUND_SHIFT;
  double kd = t - DET_ROUND_SHIFT;
  /* The integer in t's low bits (the subtraction of the bit patterns). */
  int64_t k = (int64_t)(hd_double_bits(t) - hd_double_bits(DET_ROUND_SHIFT));
  double r = (x - kd * DET_LN2_HI) - kd * DET_LN2_LO;
  /* 1/n! for n = 0..13 by Estrin's scheme, as det_math.c. */
  double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
  double q0 = 1.0 + 1.0 * r, q1 = 1.0 / 2.0 + 1.0 / 6.0 * r;
  double q2 = 1.0 / 24.0 + 1.0 / 120.0 * r, q3 = 1.0 / 720.0 + 1.0 / 5040.0 * r;
  double q4 = 1.0 / 40320.0 + 1.0 / 362880.0 * r, q5 = 1.0 / 3628800.0 + 1.0 / 39916800.0 * r;
  double q6 = 1.0 / 479001600.0 + 1.0 / 6227020800.0 * r;
  double s0 = q0 + q1 * r2, s1 = q2 + q3 * r2, s2 = q4 + q5 * r2;
  double p = (s0 + s1 * r4) + (s2 + q6 * r4) * r8;
  /* 2^k in two halves, each within the normal exponent range; the shift
   * wraps as the vector code's does. */
  int64_t k1 = det_half_floor(k), k2 = k - k1;
  double e1 = hd_bits_double((uint64_t)(k1 + 1023) << 52);
  double e2 = hd_bits_double((uint64_t)(k2 + 1023) << 52);
  return p * e1 * e2;
}

/* log x in double. */
PGOLF_HD double det_log_hd(double x) {
  /* Denormals (and, harmlessly, zero and negatives, overridden below):
   * scale by 2^54 first so the exponent field is meaningful. */
  int tiny = x < 0x1p-1022;
  double xs = tiny ? x * 0x1p54 : x;
  uint64_t bits = hd_double_bits(xs);
  int64_t e = (int64_t)((bits >> 52) & 0x7ffu) - 1023 - (tiny ? 54 : 0);
  double m = hd_bits_double((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  int big = m > 0x1.6a09e667f3bcdp0; /* sqrt(2) */
  m = big ? m * 0.5 : m;
  e = e + big;
  double s = (m - 1.0) / (m + 1.0), s2 = s * s;
  /* 1/(2n+1) for n = 9 down to 1, Horner in s^2. */
  double q = 1.0 / 19.0;
  q = q * s2 + 1.0 / 17.0;
  q = q * s2 + 1.0 / 15.0;
  q = q * s2 + 1.0 / 13.0;
  q = q * s2 + 1.0 / 11.0;
  q = q * s2 + 1.0 / 9.0;
  q = q * s2 + 1.0 / 7.0;
  q = q * s2 + 1.0 / 5.0;
  q = q * s2 + 1.0 / 3.0;
  double ed = (double)e;
  double logm = (s + s) + (s + s) * (s2 * q);
  double r = ed * DET_LN2_HI + (ed * DET_LN2_LO + logm);
  /* Special values, last: +0/-0 -> -inf, x < 0 -> NaN, +inf -> +inf; NaN
   * comes back as it is. */
  r = x == 0.0 ? hd_bits_double(0xfff0000000000000ull) : r;
  r = x < 0.0 ? hd_bits_double(0x7ff8000000000000ull) : r;
  r = x == hd_bits_double(0x7ff0000000000000ull) ? x : r;
  return x != x ? x : r;
}

/* tanh u in double. */
PGOLF_HD double det_tanh_hd(double u) {
  double a = hd_bits_double(hd_double_bits(u) & ~DET_SIGN_BIT);
  /* Taylor coefficients of tanh, u^11 down to u^3, Horner in u^2. */
  double u2 = u * u, q = -1382.0 / 155925.0;
  q = q * u2 + 62.0 / 2835.0;
  q = q * u2 + -17.0 / 315.0;
  q = q * u2 + 2.0 / 15.0;
  q = q * u2 + -1.0 / 3.0;
  double small = u + u * (u2 * q);
  double ac = a > 20.0 ? 20.0 : a;
  double e2 = det_exp_hd(ac + ac);
  double em1 = e2 - 1.0;
  double big = em1 / (em1 + 2.0);
  big = hd_bits_double(hd_double_bits(big) | (hd_double_bits(u) & DET_SIGN_BIT));
  small = a < 0x1p-30 ? u : small; /* exact to 2^-60; keeps -0 */
  return a < 0x1p-4 ? small : big;
}

/* The float functions: computed in double, rounded once. */
PGOLF_HD float det_expf_hd(float x) { return (float)det_exp_hd((double)x); }
/* A NaN input is quieted by x + x, as det_math.c's float-to-double
 * conversions quiet it: through det_log_hd, gcc would fold (float)(double)x
 * to x and hand a signalling NaN back unchanged. */
PGOLF_HD float det_logf_hd(float x) { return x != x ? x + x : (float)det_log_hd((double)x); }
PGOLF_HD float det_tanhf_hd(float x) { return (float)det_tanh_hd((double)x); }

/* sin and cos of x, |x| <= 2^20 (NaN beyond, and for NaN and infinities):
 * x = k pi/2 + r (Cody-Waite), Taylor series on |r| <= pi/4 to r^15 and
 * r^16, the quadrant by k mod 4. */
PGOLF_HD void det_sincosf_hd(float x, float *s, float *c) {
  double d = x;
  if (!(d >= -0x1p20 && d <= 0x1p20)) {
    *s = *c = hd_bits_float(0x7fc00000u);
    return;
  }
  double t = d * 0x1.45f306dc9c883p-1 + DET_ROUND_SHIFT, kd = t - DET_ROUND_SHIFT;
  int quadrant = (int)((hd_double_bits(t) - hd_double_bits(DET_ROUND_SHIFT)) & 3u);
  /* pi/2 in 33 bits plus a tail: d - kd * hi is exact (Sterbenz), leaving
   * the tail's rounding. */
  double r = (d - kd * 0x1.921fb54400000p0) - kd * 0x1.0b4611a626331p-34, r2 = r * r;
  double ps = -1.0 / 1307674368000.0;
  ps = ps * r2 + 1.0 / 6227020800.0;
  ps = ps * r2 + -1.0 / 39916800.0;
  ps = ps * r2 + 1.0 / 362880.0;
  ps = ps * r2 + -1.0 / 5040.0;
  ps = ps * r2 + 1.0 / 120.0;
  ps = ps * r2 + -1.0 / 6.0;
  double pc = 1.0 / 20922789888000.0;
  pc = pc * r2 + -1.0 / 87178291200.0;
  pc = pc * r2 + 1.0 / 479001600.0;
  pc = pc * r2 + -1.0 / 3628800.0;
  pc = pc * r2 + 1.0 / 40320.0;
  pc = pc * r2 + -1.0 / 720.0;
  pc = pc * r2 + 1.0 / 24.0;
  pc = pc * r2 + -1.0 / 2.0;
  double sr = r + r * (r2 * ps), cr = 1.0 + r2 * pc;
  if (quadrant == 0 && d == 0.0) sr = d; /* sin(-0) = -0 */
  /* sin, cos by quadrant: (sr, cr), (cr, -sr), (-sr, -cr), (-cr, sr). */
  double sv = quadrant == 0 ? sr : quadrant == 1 ? cr : quadrant == 2 ? -sr : -cr;
  double cv = quadrant == 0 ? cr : quadrant == 1 ? -sr : quadrant == 2 ? -cr : sr;
  *s = (float)sv;
  *c = (float)cv;
}

#endif
