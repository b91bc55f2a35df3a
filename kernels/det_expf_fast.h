/* det_expf_fast_hd(x): det_expf_hd(x)'s bits at about a third of its
 * cost.
 *
 * Why: the GPU kernels that need det_expf's bits (the float32 attention
 * on the CUDA cores, two exponentials per causal pair) would otherwise
 * evaluate each as det_expf_hd's degree-13 polynomial in double (about
 * 34 double operations; no fused multiply-add, which the pinned flags
 * keep from being contracted). The mixed-precision attention takes
 * det_expf32.h's float32 exponential instead (docs/GPU-RUNS.md, item
 * 21).
 *
 * How: e^x = 2^m 2^(j/32) e^r with k = 32 m + j = round(x 32 / ln 2) and
 * |r| <= ln 2 / 64, so a degree-5 polynomial and a table of 32 doubles
 * give e^x within about 2^-48 (relative), against det_exp_hd's own
 * rounding errors of a few units of 2^-52. Rounding that double to float
 * gives det_expf_hd's float unless both lie close to the midpoint between
 * two floats: when the 29 bits the rounding drops are within 2^10 units
 * of their midpoint (2^-18 of the inputs) this falls back to det_expf_hd.
 * Inputs outside [-87, 88] (float results that are subnormal or
 * overflow, infinities, NaN) fall back too. The reduction and the
 * polynomial are written as fma() calls, each one IEEE fused multiply-add
 * (a single rounding, correctly rounded by glibc and by the GPU's DFMA
 * alike), and the rounding to float is integer arithmetic: 10 double
 * operations and one conversion on the fast path, against 23 and two
 * (a conversion runs at a quarter of the double rate on an H100).
 *
 * The contract is equality, not closeness, and it is checked over every
 * float: tests/test_det_expf_fast.c compares the two on all 2^32 bit
 * patterns. The arithmetic is IEEE double (and the integer operations)
 * in a fixed order, each operation rounded once, so with contraction off
 * on both sides (hd.h) the GPU computes the same bits. */
#ifndef PGOLF_DET_EXPF_FAST_H
#define PGOLF_DET_EXPF_FAST_H

#include <math.h>
#include <stdint.h>

#include "kernels/det_math_hd.h"
#include "kernels/hd.h"

/* 2^(j/32) for j = 0..31, each rounded to the nearest double (computed
 * with Python's decimal at 60 digits). The device reads its own copy. */
#define DET_EXP2_32_VALUES                                                                      \
  {0x1.0000000000000p+0, 0x1.059b0d3158574p+0, 0x1.0b5586cf9890fp+0, 0x1.11301d0125b51p+0,   \
   0x1.172b83c7d517bp+0, 0x1.1d4873168b9aap+0, 0x1.2387a6e756238p+0, 0x1.29e9df51fdee1p+0,   \
   0x1.306fe0a31b715p+0, 0x1.371a7373aa9cbp+0, 0x1.3dea64c123422p+0, 0x1.44e086061892dp+0,   \
   0x1.4bfdad5362a27p+0, 0x1.5342b569d4f82p+0, 0x1.5ab07dd485429p+0, 0x1.6247eb03a5585p+0,   \
   0x1.6a09e667f3bcdp+0, 0x1.71f75e8ec5f74p+0, 0x1.7a11473eb0187p+0, 0x1.82589994cce13p+0,   \
   0x1.8ace5422aa0dbp+0, 0x1.93737b0cdc5e5p+0, 0x1.9c49182a3f090p+0, 0x1.a5503b23e255dp+0,   \
   0x1.ae89f995ad3adp+0, 0x1.b7f76f2fb5e47p+0, 0x1.c199bdd85529cp+0, 0x1.cb720dcef9069p+0,   \
   0x1.d5818dcfba487p+0, 0x1.dfc97337b9b5fp+0, 0x1.ea4afa2a490dap+0, 0x1.f50765b6e4540p+0}
#if defined(__CUDACC__)
__device__ static const double det_exp2_32_dev[32] = DET_EXP2_32_VALUES;
#endif
static const double det_exp2_32[32] = DET_EXP2_32_VALUES;

PGOLF_HD double det_exp2_32_at(int j) {
#if defined(__CUDA_ARCH__)
  return __ldg(&det_exp2_32_dev[j]);
#else
  return det_exp2_32[j];
#endif
}

#define DET_EXPF_FAST_LO (-87.0f)
#define DET_EXPF_FAST_HI 88.0f
/* Units (of the double's last place) around the float midpoint that fall
 * back: the two evaluations differ by a few tens at most. */
#define DET_EXPF_FAST_MARGIN 1024u

/* e^x = det_exp_fast_part(x, &m) 2^m for x within [-87, 88]: the part is
 * 2^(j/32) e^r, within [0.98, 2.03), and m the power of two left out (the
 * float rounding applies it to the exponent field, below). Each multiply
 * and add of the reduction and the polynomial is one fma: one rounding,
 * IEEE's fused multiply-add on both sides (glibc's fma, the GPU's DFMA),
 * so the sequence stays the same in bits while it takes about half the
 * float64 operations of separate multiplies and adds (with |r| <= ln 2 /
 * 64, degree 5 leaves a truncation of about 10 units of the double's last
 * place, far inside DET_EXPF_FAST_MARGIN). */
PGOLF_HD double det_exp_fast_part(double x, int *m) {
  const double t = fma(x, 32.0 * DET_INV_LN2, DET_ROUND_SHIFT);
  const double kd = t - DET_ROUND_SHIFT;
  /* k = round(32 x / ln 2), |k| < 2^12: the low word of t's bits (the
   * shift's low word is zero). */
  const int32_t k = (int32_t)(uint32_t)hd_double_bits(t);
  /* ln 2 / 32 in two parts: x - k hi is exact (k hi has 44 bits, and the
   * difference is a multiple of 2^-37 below 2^-6). */
  double r = fma(-kd, DET_LN2_HI / 32.0, x);
  r = fma(-kd, DET_LN2_LO / 32.0, r);
  double p = 1.0 / 120.0;
  p = fma(p, r, 1.0 / 24.0);
  p = fma(p, r, 1.0 / 6.0);
  p = fma(p, r, 0.5);
  p = fma(p, r, 1.0);
  p = fma(p, r, 1.0);
  /* k = 32 m + j, 0 <= j < 32 (k & 31 is k mod 32 for negative k too). */
  const int32_t j = k & 31;
  *m = (k - j) / 32;
  return det_exp2_32_at(j) * p;
}

/* The double e^x of the fast path (x within [-87, 88]). */
PGOLF_HD double det_exp_fast_core(double x) {
  int m;
  const double y = det_exp_fast_part(x, &m);
  return y * hd_bits_double((uint64_t)(m + 1023) << 52);
}

/* det_expf_fast_hd's first half, for a caller that evaluates many
 * exponentials together: the fast path with no branch, which sets *slow
 * where its value is not det_expf's (there the caller computes
 * det_expf_hd(x) instead; an x out of range is computed as 0 and marked
 * slow). The split let the tensor-core attention run a tile's fast paths
 * with no branch between them (docs/GPU-RUNS.md, item 8) before it took
 * det_expf32; test_det_expf_fast still holds the fast half alone to
 * det_expf's bits wherever it does not ask for the fallback.
 *
 * The rounding to float is integer arithmetic on the part's bits, which
 * also applies 2^m: the float's exponent field is the double's less
 * 1023 - 127, plus m (the result is a normal float over the whole range),
 * and a rounding up that carries out of the mantissa moves to the next
 * binade, as it should. Where it is not a tie (a tie falls back) that is
 * round to nearest, the float conversion's bits, without the conversion
 * (a quarter of the float64 rate on the GPU). */
PGOLF_HD float det_expf_fast_try_hd(float x, unsigned *slow) {
  const int in_range = x >= DET_EXPF_FAST_LO && x <= DET_EXPF_FAST_HI; /* false for NaN */
  int m;
  const uint64_t u = hd_double_bits(det_exp_fast_part(in_range ? (double)x : 0.0, &m));
  /* The 29 bits a rounding to float drops, against their midpoint. */
  const uint32_t low = (uint32_t)(u & 0x1fffffffu);
  const uint32_t dist = low > 0x10000000u ? low - 0x10000000u : 0x10000000u - low;
  *slow = !in_range || dist <= DET_EXPF_FAST_MARGIN;
  /* (u >> 29) keeps the exponent field's low 9 bits above the 23 of the
   * mantissa: the part's field is 1022..1024, so modulo 2^32 the
   * difference is the float's field exactly. */
  return hd_bits_float((uint32_t)(u >> 29) - ((uint32_t)(1023 - 127) << 23) + ((uint32_t)m << 23) +
                       (low > 0x10000000u));
}

PGOLF_HD float det_expf_fast_hd(float x) {
  unsigned slow;
  const float y = det_expf_fast_try_hd(x, &slow);
  /* One call site for the fallback (the GPU inlines it once). */
  return slow ? det_expf_hd(x) : y;
}

#endif
