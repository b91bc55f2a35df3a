/* Deterministic exp, log, tanh, sin/cos (see det_math.h for the contract).
 *
 * Every function is one fixed sequence of IEEE double operations. The
 * array versions run it on vectors of four doubles (GCC vector
 * extensions), branches replaced by bitwise selects, which are exact. The
 * scalar entry points run the same sequence on one double, written once in
 * det_math_hd.h so that the CUDA kernels compile the same code; the two
 * spellings are kept equal operation for operation, and the tests hold
 * them to the same bits (arrays against scalars, and a pinned hash of
 * both).
 *
 * Methods (the constants are exact facts about the functions: Taylor
 * coefficients as correctly rounded quotients of integers, ln 2 and pi/2
 * split so that their product with a small integer is exact):
 *   exp  x = k ln2 + r, |r| <= ln2/2; exp(r) by its degree-13 Taylor
 *        polynomial (truncation < 5e-18 relative) in Estrin's order; times 2^k built from
 *        exponent bits in two halves, so the whole double range scales
 *        with one final rounding.
 *   log  x = 2^e m with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s),
 *        s = (m-1)/(m+1), |s| <= 0.172, odd series to s^19 (truncation
 *        < 1e-18); plus e ln2 in two parts.
 *   tanh |u| < 1/16: odd Taylor series to u^11 (truncation < 2e-17);
 *        else (e^{2|u|} - 1) / (e^{2|u|} + 1) with |u| clamped to 20
 *        (tanh(20) rounds to 1 in float and in double), sign restored.
 *   sin, cos  x = k pi/2 + r (Cody-Waite, exact for |k| < 2^20), Taylor
 *        series on |r| <= pi/4 to r^15 and r^16, quadrant by k mod 4. */
#include "kernels/det_math.h"

#include <stdint.h>
#include <string.h>

#include "kernels/det_expf32.h"
#include "kernels/det_math_hd.h"

typedef double v4df __attribute__((vector_size(32)));
typedef long v4di __attribute__((vector_size(32)));
typedef float v4sf __attribute__((vector_size(16)));

#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#define SPLAT(a) ((v4df){(a), (a), (a), (a)})
#define SPLATI(a) ((v4di){(a), (a), (a), (a)})

/* a where m is all ones, else b (m lanes are 0 or -1). The helpers below
 * take and return vectors through pointers: 32-byte vectors by value
 * would make GCC warn about the AVX calling convention (-Wpsabi). */
#define select(m, a, b) ((v4df)(((v4di)(a) & (m)) | ((v4di)(b) & ~(m))))

static const double INV_LN2 = DET_INV_LN2;
static const double LN2_HI = DET_LN2_HI; /* 32 bits: k * LN2_HI exact, |k| < 2^21 */
static const double LN2_LO = DET_LN2_LO;
static const double ROUND_SHIFT = DET_ROUND_SHIFT; /* x + 1.5*2^52: rounds x to an integer */

/* c[n] = 1/n!, n = 0..13. */
static const double EXP_TAYLOR[14] = {
    1.0,         1.0,          1.0 / 2.0,      1.0 / 6.0,       1.0 / 24.0,
    1.0 / 120.0, 1.0 / 720.0,  1.0 / 5040.0,   1.0 / 40320.0,   1.0 / 362880.0,
    1.0 / 3628800.0, 1.0 / 39916800.0, 1.0 / 479001600.0, 1.0 / 6227020800.0};

#define C(n) SPLAT(EXP_TAYLOR[n])

/* *v = e^*v for every double (NaN propagates). */
ALWAYS_INLINE void exp_core(v4df *v) {
  v4df x = *v;
  x = select(x < SPLAT(-746.0), SPLAT(-746.0), x); /* e^-746 < half the least denormal */
  x = select(x > SPLAT(710.0), SPLAT(710.0), x);   /* e^710 > the largest double */
  v4df t = x * SPLAT(INV_LN2) + SPLAT(ROUND_SHIFT);
  v4df kd = t - SPLAT(ROUND_SHIFT);
  v4di k = (v4di)t - (v4di)SPLAT(ROUND_SHIFT); /* the integer in t's low bits */
  v4df r = (x - kd * SPLAT(LN2_HI)) - kd * SPLAT(LN2_LO);
  /* sum c[n] r^n by Estrin's scheme (pairs, then pairs of pairs): a short
   * dependency chain, so neighbouring vectors overlap in the pipeline. */
  v4df r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
  v4df q0 = C(0) + C(1) * r, q1 = C(2) + C(3) * r, q2 = C(4) + C(5) * r, q3 = C(6) + C(7) * r;
  v4df q4 = C(8) + C(9) * r, q5 = C(10) + C(11) * r, q6 = C(12) + C(13) * r;
  v4df s0 = q0 + q1 * r2, s1 = q2 + q3 * r2, s2 = q4 + q5 * r2;
  v4df p = (s0 + s1 * r4) + (s2 + q6 * r4) * r8;
  v4di k1 = k >> 1, k2 = k - k1; /* each within the normal exponent range */
  v4df e1 = (v4df)((k1 + SPLATI(1023)) << 52), e2 = (v4df)((k2 + SPLATI(1023)) << 52);
  *v = p * e1 * e2;
}

/* Taylor coefficients of tanh: u^11 down to u^3. */
static const double TANH_TAYLOR[5] = {-1382.0 / 155925.0, 62.0 / 2835.0, -17.0 / 315.0, 2.0 / 15.0,
                                      -1.0 / 3.0};

ALWAYS_INLINE void tanh_core(v4df *v) {
  v4df u = *v;
  const v4di sign = SPLATI((long)0x8000000000000000ull);
  v4df a = (v4df)((v4di)u & ~sign);
  v4df u2 = u * u, q = SPLAT(TANH_TAYLOR[0]);
  for (int i = 1; i < 5; i++) q = q * u2 + SPLAT(TANH_TAYLOR[i]);
  v4df small = u + u * (u2 * q);
  v4df ac = select(a > SPLAT(20.0), SPLAT(20.0), a);
  v4df e2 = ac + ac;
  exp_core(&e2);
  v4df em1 = e2 - SPLAT(1.0);
  v4df big = em1 / (em1 + SPLAT(2.0));
  big = (v4df)((v4di)big | ((v4di)u & sign));
  small = select(a < SPLAT(0x1p-30), u, small); /* exact to 2^-60; keeps -0 */
  *v = select(a < SPLAT(0x1p-4), small, big);
}

/* ---- Scalar entry points: det_math_hd.h, the same sequence for one
 * value (shared with the CUDA kernels). ---- */

float det_expf(float x) { return det_expf_hd(x); }
float det_logf(float x) { return det_logf_hd(x); }
float det_tanhf(float x) { return det_tanhf_hd(x); }
double det_exp(double x) { return det_exp_hd(x); }
double det_log(double x) { return det_log_hd(x); }
void det_sincosf(float x, float *s, float *c) { det_sincosf_hd(x, s, c); }

/* ---- Arrays ---- */

ALWAYS_INLINE v4sf load4(const float *x, size_t n) {
  float b[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  memcpy(b, x, (n < 4 ? n : 4) * sizeof *b);
  v4sf v;
  memcpy(&v, b, sizeof v);
  return v;
}

ALWAYS_INLINE void store4(float *y, v4sf v, size_t n) {
  memcpy(y, &v, (n < 4 ? n : 4) * sizeof *y);
}

/* The clones are static and called through plain wrappers: clang does not
 * export the plain name of an extern target_clones function. */
VECTOR_CLONES static void expf_shift_array(float *y, const float *x, float sub, size_t n) {
  const v4sf s = {sub, sub, sub, sub};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) { /* two independent vectors in flight */
    v4sf f0, f1;
    memcpy(&f0, x + i, sizeof f0);
    memcpy(&f1, x + i + 4, sizeof f1);
    v4df r0 = __builtin_convertvector(f0 - s, v4df), r1 = __builtin_convertvector(f1 - s, v4df);
    exp_core(&r0);
    exp_core(&r1);
    f0 = __builtin_convertvector(r0, v4sf);
    f1 = __builtin_convertvector(r1, v4sf);
    memcpy(y + i, &f0, sizeof f0);
    memcpy(y + i + 4, &f1, sizeof f1);
  }
  for (; i < n; i += 4) {
    v4sf f = load4(x + i, n - i) - s;
    v4df r = __builtin_convertvector(f, v4df);
    exp_core(&r);
    store4(y + i, __builtin_convertvector(r, v4sf), n - i);
  }
}

VECTOR_CLONES static void tanhf_array(float *y, const float *x, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    v4sf f0, f1;
    memcpy(&f0, x + i, sizeof f0);
    memcpy(&f1, x + i + 4, sizeof f1);
    v4df r0 = __builtin_convertvector(f0, v4df), r1 = __builtin_convertvector(f1, v4df);
    tanh_core(&r0);
    tanh_core(&r1);
    f0 = __builtin_convertvector(r0, v4sf);
    f1 = __builtin_convertvector(r1, v4sf);
    memcpy(y + i, &f0, sizeof f0);
    memcpy(y + i + 4, &f1, sizeof f1);
  }
  for (; i < n; i += 4) {
    v4df r = __builtin_convertvector(load4(x + i, n - i), v4df);
    tanh_core(&r);
    store4(y + i, __builtin_convertvector(r, v4sf), n - i);
  }
}

/* det_expf32_hd on 8 lanes: float32 vectors and integer masks, the
 * scalar function's operations in its order (its arithmetic is
 * det_expf32.h's DET_EXPF32_STEPS itself), so
 * each lane gets its bits (test_det_expf_fast compares the two on every
 * float). gcc does not vectorize the scalar function itself: it keeps its
 * float comparisons, which may trap on NaN, as branches. */
typedef float v8sf __attribute__((vector_size(32)));
typedef int v8si __attribute__((vector_size(32)));
#define SPLATF8(a) ((v8sf){0} + (a))
#define SELECTF8(m, a, b) ((v8sf)(((v8si)(a) & (m)) | ((v8si)(b) & ~(m))))

ALWAYS_INLINE void expf32_core(v8sf *px) {
  const v8sf x = *px, lo = SPLATF8(DET_EXPF32_LO), hi = SPLATF8(DET_EXPF32_HI);
  v8sf xc = SELECTF8(x > lo, x, lo); /* NaN: lo, as the scalar's */
  xc = SELECTF8(xc < hi, xc, hi);
  v8sf t, n, r, p;
  DET_EXPF32_STEPS(xc, t, n, r, p, SPLATF8(DET_EXPF32_C7));
  const v8si k = (v8si)t - (int)DET_EXPF32_SHIFT_BITS;
  const v8si k1 = k >> 1, k2 = k - k1; /* k1 + 127 and k2 + 127 are positive */
  const v8sf y = p * (v8sf)((k1 + 127) << 23) * (v8sf)((k2 + 127) << 23);
  *px = SELECTF8(x != x, x, y);
}

VECTOR_CLONES static void expf32_shift_array(float *y, const float *x, float sub, size_t n) {
  const v8sf s = SPLATF8(sub);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    v8sf f;
    memcpy(&f, x + i, sizeof f);
    f = f - s;
    expf32_core(&f);
    memcpy(y + i, &f, sizeof f);
  }
  for (; i < n; i++) y[i] = det_expf32_hd(x[i] - sub);
}

void det_expf_shift_array(float *y, const float *x, float sub, size_t n) {
  expf_shift_array(y, x, sub, n);
}

void det_expf32_shift_array(float *y, const float *x, float sub, size_t n) {
  expf32_shift_array(y, x, sub, n);
}

void det_tanhf_array(float *y, const float *x, size_t n) { tanhf_array(y, x, n); }
