/* See torch_init.h for which PyTorch computation each function reproduces
 * and why. Every floating-point operation here is one IEEE-754 operation of
 * the kernel being reproduced, in the kernel's order; the build has
 * contraction off, so a multiply-add is fused exactly where fmaf says so
 * (where the compiled PyTorch kernel has a vfmadd) and nowhere else. */
#include "trainer/torch_init.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static uint32_t bits_of(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static float float_of(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* uniform_real_distribution<float>: the low 24 bits of a 32-bit draw. */
static float uniform01_f32(torch_rng *g) {
  return (float)(torch_rng_u32(g) & 0xffffffu) * 0x1p-24f;
}

void torch_uniform_f32(torch_rng *g, float *x, size_t n, double from, double to) {
  const float f = (float)from, t = (float)to;
  const float range = t - f;
  for (size_t i = 0; i < n; i++) {
    float v = fmaf(uniform01_f32(g), range, f);
    x[i] = v == t ? f : v;
  }
}

/* ---- the AVX2 Box-Muller, one lane at a time ---------------------------- */

/* Constants as the kernel holds them (float32). */
#define LOG_MIN_NORM 0x00800000u
#define LOG_INV_MANT 0x807fffffu
#define SIGN_MASK 0x80000000u
static const float log_p[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                               -1.2420140846E-1f, +1.4249322787E-1f, -1.6668057665E-1f,
                               +2.0000714765E-1f, -2.4999993993E-1f, +3.3333331174E-1f};
#define LOG_Q1 (-2.12194440e-4f)
#define LOG_Q2 0.693359375f
#define SQRTHF ((float)0.707106781186547524)
#define FOPI ((float)1.27323954473516)
#define MINUS_DP1 (-0.78515625f)
#define MINUS_DP2 (-2.4187564849853515625e-4f)
#define MINUS_DP3 ((float)-3.77489497744594108e-8)
#define SINCOF_P0 (-1.9515295891E-4f)
#define SINCOF_P1 8.3321608736E-3f
#define SINCOF_P2 (-1.6666654611E-1f)
#define COSCOF_P0 ((float)2.443315711809948E-005)
#define COSCOF_P1 ((float)-1.388731625493765E-003)
#define COSCOF_P2 ((float)4.166664568298827E-002)
#define TWO_PI_F ((float)6.283185307179586)

/* log256_ps for one lane. The input is in (0, 1] here (1 - u, u in [0, 1)),
 * but the x <= 0 -> NaN rule is kept for completeness. */
static float avx2_logf(float x) {
  const uint32_t invalid = x <= 0.0f ? 0xffffffffu : 0u;
  if (!(x >= float_of(LOG_MIN_NORM))) x = float_of(LOG_MIN_NORM); /* max_ps(x, min) */
  uint32_t b = bits_of(x);
  int32_t imm0 = (int32_t)(b >> 23) - 0x7f;
  x = float_of((b & LOG_INV_MANT) | bits_of(0.5f));
  float e = (float)imm0;
  e = e + 1.0f;
  const int below = x < SQRTHF;
  const float tmp = below ? x : 0.0f;
  x = x + -1.0f;
  e = e - (below ? 1.0f : 0.0f);
  x = x + tmp;
  const float z = x * x;
  float y = log_p[0];
  for (int k = 1; k < 9; k++) y = fmaf(y, x, log_p[k]);
  y = x * y;
  y = fmaf(y, z, e * LOG_Q1);
  y = fmaf(-z, 0.5f, y);
  x = x + y;
  x = fmaf(e, LOG_Q2, x);
  return float_of(bits_of(x) | invalid);
}

/* sincos256_ps for one lane. */
static void avx2_sincosf(float theta, float *s, float *c) {
  uint32_t sign_sin = bits_of(theta) & SIGN_MASK;
  const float ax = float_of(bits_of(theta) & ~SIGN_MASK);
  const float scaled = ax * FOPI;
  /* cvttps2dq: truncation; out of range gives INT32_MIN (never here:
   * |theta| <= 2*pi). */
  int32_t j = (scaled < 2147483648.0f) ? (int32_t)scaled : INT32_MIN;
  j = (int32_t)(((uint32_t)j + 1u) & ~1u);
  const float yj = (float)j;
  sign_sin ^= ((uint32_t)j & 4u) << 29;
  const int poly_is_cos = ((uint32_t)j & 2u) == 0; /* for the sine */
  const uint32_t sign_cos = (~((uint32_t)j - 2u) & 4u) << 29;

  float x = fmaf(yj, MINUS_DP1, ax);
  x = fmaf(MINUS_DP2, yj, x);
  x = fmaf(yj, MINUS_DP3, x);

  const float z = x * x;
  const float half_z = z * 0.5f;
  float yc = fmaf(COSCOF_P0, z, COSCOF_P1);
  yc = fmaf(yc, z, COSCOF_P2);
  yc = z * yc;
  yc = fmaf(z, yc, -half_z);
  yc = yc + 1.0f;

  float ys = fmaf(SINCOF_P0, z, SINCOF_P1);
  ys = fmaf(ys, z, SINCOF_P2);
  ys = z * ys;
  ys = fmaf(x, ys, x);

  /* Select with masks and add the +0.0 the masking leaves, as the kernel. */
  const float ysin2 = poly_is_cos ? ys : 0.0f;
  const float ysin1 = poly_is_cos ? 0.0f : yc;
  const float yc_rest = yc - ysin1;
  const float ys_rest = ys - ysin2;
  *s = float_of(bits_of(ysin2 + ysin1) ^ sign_sin);
  *c = float_of(bits_of(ys_rest + yc_rest) ^ sign_cos);
}

void torch_normal_fill16(float *data, float mean, float std) {
  for (int j = 0; j < 8; j++) {
    const float u1 = 1.0f - data[j];
    const float theta = TWO_PI_F * data[j + 8];
    const float radius = sqrtf(avx2_logf(u1) * -2.0f);
    float s, c;
    avx2_sincosf(theta, &s, &c);
    data[j] = fmaf(radius * c, std, mean);
    data[j + 8] = fmaf(radius * s, std, mean);
  }
}

/* ---- fewer than 16 elements: at::normal_distribution<double> ------------ */

static double uniform01_f64(torch_rng *g) {
  return (double)(torch_rng_u64(g) & ((UINT64_C(1) << 53) - 1)) * 0x1p-53;
}

static float normal_small_one(torch_rng *g, double mean, double std) {
  if (g->has_next_double_normal) {
    g->has_next_double_normal = 0;
    return (float)fma(g->next_double_normal, std, mean);
  }
  const double u1 = uniform01_f64(g);
  const double u2 = uniform01_f64(g);
  const double r = sqrt(log1p(-u2) * -2.0);
  const double theta = 6.283185307179586 * u1;
  g->next_double_normal = r * sin(theta);
  g->has_next_double_normal = 1;
  return (float)fma(r * cos(theta), std, mean);
}

void torch_normal_f32(torch_rng *g, float *x, size_t n, double mean, double std) {
  if (n < 16) {
    for (size_t i = 0; i < n; i++) x[i] = normal_small_one(g, mean, std);
    return;
  }
  const float m = (float)mean, s = (float)std;
  for (size_t i = 0; i < n; i++) x[i] = uniform01_f32(g);
  for (size_t i = 0; i + 16 <= n; i += 16) torch_normal_fill16(x + i, m, s);
  if (n % 16) {
    float *tail = x + n - 16;
    for (int i = 0; i < 16; i++) tail[i] = uniform01_f32(g);
    torch_normal_fill16(tail, m, s);
  }
}

double torch_kaiming_uniform_linear(torch_rng *g, float *w, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return 0.0;
  /* torch.nn.init: gain = math.sqrt(2.0 / (1 + a**2)), a = math.sqrt(5);
   * std = gain / math.sqrt(fan_in); bound = math.sqrt(3.0) * std. Python's
   * a**2 is pow(a, 2.0), which is exactly a * a (the correctly rounded
   * square). */
  const double a = sqrt(5.0);
  const double gain = sqrt(2.0 / (1.0 + a * a));
  const double std = gain / sqrt((double)cols);
  const double bound = sqrt(3.0) * std;
  torch_uniform_f32(g, w, (size_t)rows * (size_t)cols, -bound, bound);
  return bound;
}
