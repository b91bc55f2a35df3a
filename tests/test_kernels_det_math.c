/* det_math: accuracy of the deterministic exp, log, tanh, sin/cos against
 * glibc's double-precision functions over dense sweeps of float32 inputs
 * (the error is measured in float ulps of the exact value), special values
 * exactly, array versions bit-identical to the scalar ones, RoPE tables
 * equal to the libm-built ones, and a negative: the ulp meter catches a
 * function that is one ulp off. */
#include "tests/test_util.h"

#include <float.h>
#include <math.h>

#include "kernels/det_math.h"
#include "kernels/rope.h"

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint32_t to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* |got - ref| in float ulps at ref (ref: a double close to the exact
 * value; glibc's double functions are within one double ulp). Results
 * that must be infinite or NaN are exact or infinitely wrong. */
static double ulp_error(float got, double ref) {
  if (isnan(ref)) return isnan(got) ? 0.0 : INFINITY;
  if (isnan(got)) return INFINITY;
  if (isinf(ref)) return got == ref ? 0.0 : INFINITY;
  /* A finite ref rounds to a float infinity from FLT_MAX + half an ulp on;
   * below that an infinity counts as 2^128 (the next binade). */
  if (isinf(got) && signbit(got) == signbit(ref) && fabs(ref) >= 0x1p128 - 0x1p103) return 0.0;
  double g = isinf(got) ? copysign(0x1p128, (double)got) : (double)got;
  int e;
  frexp(fabs(ref), &e);
  double ulp = ldexp(1.0, e - 24);
  if (ulp < 0x1p-149) ulp = 0x1p-149;
  return fabs(g - ref) / ulp;
}

typedef float (*f32_fn)(float);
typedef double (*f64_fn)(double);

/* Worst ulp error of f against ref over every float whose bits are
 * lo, lo + step, ... <= hi, both signs. */
static double sweep(f32_fn f, f64_fn ref, uint32_t lo, uint32_t hi, uint32_t step, float *worst_x) {
  double worst = 0.0;
  for (uint64_t u = lo; u <= hi; u += step)
    for (int neg = 0; neg < 2; neg++) {
      float x = from_bits((uint32_t)u | (neg ? 0x80000000u : 0));
      double e = ulp_error(f(x), ref((double)x));
      if (!(e <= worst)) {
        worst = e;
        *worst_x = x;
      }
    }
  return worst;
}

/* The documented bound: 0.5 ulp (the rounding) + 1e-6 (the double error). */
static const double BOUND = 0.5 + 1e-6;

static void check_sweeps(f32_fn f, f64_fn ref, const char *name) {
  float wx;
  /* Every finite float at a coarse prime stride, then all floats near 1 and
   * near 0 where the functions are most delicate. */
  float x1 = 0.0f, x2 = 0.0f, x3 = 0.0f;
  double w1 = sweep(f, ref, 0, 0x7f800000u, 4099, &x1);
  double w2 = sweep(f, ref, 0x3f000000u, 0x3f800000u + 0x400000u, 3, &x2);
  double w3 = sweep(f, ref, 0x3c000000u, 0x3d000000u, 7, &x3); /* 2^-7 .. 2^-5 */
  double w = w1 > w2 ? w1 : w2;
  w = w > w3 ? w : w3;
  wx = w == w1 ? x1 : w == w2 ? x2 : x3;
  printf("%s: max %.9f ulp (at %a)\n", name, w, (double)wx);
  assert_true(w <= BOUND);
}

static float wrap_expf(float x) { return det_expf(x); }
static float wrap_logf(float x) { return det_logf(x); }
static float wrap_tanhf(float x) { return det_tanhf(x); }
static float wrap_sinf(float x) {
  float s, c;
  det_sincosf(x, &s, &c);
  return s;
}
static float wrap_cosf(float x) {
  float s, c;
  det_sincosf(x, &s, &c);
  return c;
}
static float off_by_one_expf(float x) { return nextafterf(det_expf(x), INFINITY); }

static void test_exp_accuracy(void **state) {
  (void)state;
  check_sweeps(wrap_expf, exp, "expf");
  float wx;
  /* The whole range where expf is neither 0 nor inf, densely. */
  assert_true(sweep(wrap_expf, exp, 0x3f800000u, 0x42d00000u, 61, &wx) <= BOUND);
}

static void test_log_accuracy(void **state) {
  (void)state;
  check_sweeps(wrap_logf, log, "logf");
  float wx;
  /* Denormals and the whole normal range of positive floats. */
  assert_true(sweep(wrap_logf, log, 1, 0x00800000u, 1021, &wx) <= BOUND);
  assert_true(sweep(wrap_logf, log, 0x00800000u, 0x7f7fffffu, 211, &wx) <= BOUND);
}

static void test_tanh_accuracy(void **state) {
  (void)state;
  check_sweeps(wrap_tanhf, tanh, "tanhf");
  float wx;
  /* Around the switch between the series and the exponential form (1/16)
   * and the clamp (20), every float. */
  assert_true(sweep(wrap_tanhf, tanh, 0x3d700000u, 0x3d880000u, 1, &wx) <= BOUND);
  assert_true(sweep(wrap_tanhf, tanh, 0x419f0000u, 0x41a10000u, 1, &wx) <= BOUND);
}

static void test_sincos_accuracy(void **state) {
  (void)state;
  float wx;
  /* |x| <= 2^20, the documented domain */
  double ws = sweep(wrap_sinf, sin, 0, 0x49800000u, 1009, &wx);
  double wc = sweep(wrap_cosf, cos, 0, 0x49800000u, 1009, &wx);
  printf("sinf: max %.9f ulp, cosf: max %.9f ulp\n", ws, wc);
  assert_true(ws <= BOUND && wc <= BOUND);
  float s, c;
  det_sincosf(0x1p21f, &s, &c);
  assert_true(isnan(s) && isnan(c));
  det_sincosf(INFINITY, &s, &c);
  assert_true(isnan(s) && isnan(c));
  det_sincosf(-0.0f, &s, &c);
  assert_true(to_bits(s) == 0x80000000u && c == 1.0f);
}

/* The meter is not blind: a function one ulp off measures about 1 ulp. */
static void test_meter_catches_one_ulp(void **state) {
  (void)state;
  float wx;
  double w = sweep(off_by_one_expf, exp, 0x3f800000u, 0x40000000u, 4099, &wx);
  assert_true(w > 0.9 && w < 1.6);
}

static void test_double_helpers(void **state) {
  (void)state;
  double wexp = 0.0, wlog = 0.0;
  for (uint64_t b = 0; b < 0x7ff0000000000000ull; b += 0x0000123456789abull * 17) {
    double x;
    memcpy(&x, &b, sizeof x);
    double L = log(x), l = det_log(x);
    if (L != 0.0 && fabs(l - L) / fabs(L) > wlog) wlog = fabs(l - L) / fabs(L);
    if (x < 700.0) {
      double E = exp(-x), e = det_exp(-x);
      if (E > 0x1p-1022 && fabs(e - E) / E > wexp) wexp = fabs(e - E) / E;
      E = exp(x);
      e = det_exp(x);
      if (fabs(e - E) / E > wexp) wexp = fabs(e - E) / E;
    }
  }
  printf("det_exp: max relative %.3g, det_log: %.3g\n", wexp, wlog);
  assert_true(wexp <= 5e-16 && wlog <= 5e-16); /* about 2 double ulps */
  assert_true(det_exp(0.0) == 1.0 && det_log(1.0) == 0.0);
  assert_true(det_exp(710.0) == INFINITY && det_exp(-746.0) == 0.0);
  assert_true(det_log(0x1p-1074) == log(0x1p-1074)); /* the least denormal */
}

static void test_special_values(void **state) {
  (void)state;
  assert_true(det_expf(0.0f) == 1.0f && det_expf(-0.0f) == 1.0f);
  assert_true(det_expf(INFINITY) == INFINITY);
  assert_true(to_bits(det_expf(-INFINITY)) == 0u);
  assert_true(isnan(det_expf(NAN)));
  /* The overflow threshold: the largest float with a finite exp, and the
   * next one; the least denormal result and the underflow to zero. */
  assert_true(det_expf(0x1.62e42ep6f) == 0x1.ffff08p127f);
  assert_true(det_expf(0x1.62e430p6f) == INFINITY);
  assert_true(det_expf(-0x1.9fe368p6f) == 0x1p-149f);
  assert_true(to_bits(det_expf(-0x1.9fe36ap6f)) == 0u);
  assert_true(det_expf(1e-30f) == 1.0f);
  assert_true(det_expf(0x1p-149f) == 1.0f);

  assert_true(det_logf(0.0f) == -INFINITY && det_logf(-0.0f) == -INFINITY);
  assert_true(isnan(det_logf(-1.0f)) && isnan(det_logf(-0x1p-149f)) && isnan(det_logf(-INFINITY)));
  assert_true(det_logf(INFINITY) == INFINITY && isnan(det_logf(NAN)));
  assert_true(to_bits(det_logf(1.0f)) == 0u); /* +0, not -0 */
  assert_true(det_logf(0x1p-149f) == (float)log(0x1p-149));
  assert_true(det_logf(FLT_MAX) == (float)log((double)FLT_MAX));

  assert_true(to_bits(det_tanhf(0.0f)) == 0u && to_bits(det_tanhf(-0.0f)) == 0x80000000u);
  assert_true(det_tanhf(INFINITY) == 1.0f && det_tanhf(-INFINITY) == -1.0f);
  assert_true(isnan(det_tanhf(NAN)));
  assert_true(det_tanhf(0x1p-149f) == 0x1p-149f && det_tanhf(-0x1p-140f) == -0x1p-140f);
  assert_true(det_tanhf(9.1f) == 1.0f && det_tanhf(FLT_MAX) == 1.0f);
  assert_true(det_tanhf(-8.0f) == (float)tanh(-8.0));
}

/* The array versions are the scalar functions bit for bit, at every
 * length (the tails are padded) and in place. */
static void test_arrays_match_scalar(void **state) {
  (void)state;
  enum { N = 37 };
  float x[N], y[N], z[N];
  uint32_t s = 12345u;
  for (int i = 0; i < N; i++) {
    s = s * 1664525u + 1013904223u;
    x[i] = (float)((double)s / 4294967296.0 * 60.0 - 30.0);
  }
  x[3] = -INFINITY;
  x[5] = NAN;
  x[7] = -0.0f;
  for (int n = 0; n <= N; n++) {
    for (int i = 0; i < N; i++) y[i] = z[i] = -7.0f; /* sentinels past n */
    det_expf_shift_array(y, x, 1.5f, (size_t)n);
    det_tanhf_array(z, x, (size_t)n);
    for (int i = 0; i < N; i++) {
      uint32_t want_e = i < n ? to_bits(det_expf(x[i] - 1.5f)) : to_bits(-7.0f);
      uint32_t want_t = i < n ? to_bits(det_tanhf(x[i])) : to_bits(-7.0f);
      assert_true(to_bits(y[i]) == want_e);
      assert_true(to_bits(z[i]) == want_t);
    }
  }
  memcpy(y, x, sizeof y);
  det_tanhf_array(y, y, N);
  for (int i = 0; i < N; i++) assert_true(to_bits(y[i]) == to_bits(det_tanhf(x[i])));
}

/* RoPE tables from det_math equal the ones libm gives (pow and cos/sin in
 * double, rounded; inv_freq bf16-rounded as the official buffer is) for
 * the presets' shapes: no value moved. The bf16 module's table quantises
 * positions, angles and values to bf16. */
static float bf16_ref(float x) { /* round to nearest even, finite inputs */
  uint32_t u;
  memcpy(&u, &x, 4);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  memcpy(&x, &u, 4);
  return x;
}

static void test_rope_tables_unchanged(void **state) {
  (void)state;
  enum { T = 1024 };
  static float c[T * 32], sn[T * 32], cm[T * 32], sm[T * 32];
  const int dims[] = {16, 64};
  for (int k = 0; k < 2; k++) {
    int hd = dims[k], half = hd / 2;
    rope_table(c, sn, T, hd, 10000.0f, 0);
    rope_table(cm, sm, T, hd, 10000.0f, KERNEL_BF16);
    for (int j = 0; j < half; j++) {
      float e = (float)(2 * j) / (float)hd;
      float inv = bf16_ref(1.0f / (float)pow(10000.0, (double)e));
      for (int t = 0; t < T; t++) {
        float f = (float)t * inv;
        assert_true(c[t * half + j] == (float)cos((double)f));
        assert_true(sn[t * half + j] == (float)sin((double)f));
        float fm = bf16_ref(bf16_ref((float)t) * inv);
        assert_true(cm[t * half + j] == bf16_ref((float)cos((double)fm)));
        assert_true(sm[t * half + j] == bf16_ref((float)sin((double)fm)));
      }
    }
  }
  /* Position 257 is not a bf16 value: the mixed table uses 256's angle,
   * the float32 one does not. */
  rope_table(c, sn, T, 16, 10000.0f, 0);
  rope_table(cm, sm, T, 16, 10000.0f, KERNEL_BF16);
  assert_true(cm[257 * 8] == cm[256 * 8]);
  assert_true(c[257 * 8] != c[256 * 8]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exp_accuracy),         cmocka_unit_test(test_log_accuracy),
      cmocka_unit_test(test_tanh_accuracy),        cmocka_unit_test(test_sincos_accuracy),
      cmocka_unit_test(test_meter_catches_one_ulp), cmocka_unit_test(test_double_helpers),
      cmocka_unit_test(test_special_values),       cmocka_unit_test(test_arrays_match_scalar),
      cmocka_unit_test(test_rope_tables_unchanged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
