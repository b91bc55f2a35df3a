/* Regularized incomplete beta I_x(a, b) by its continued fraction
 * (DLMF 8.17.22), evaluated with the modified Lentz method on whichever side
 * of the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) it converges quickly. The
 * prefactor x^a y^b / B(a, b) is formed in log space so that a result far
 * below DBL_MIN^(1/a) still comes out with full relative precision. */
#include "verifier/incomplete_beta.h"

#include <float.h>
#include <math.h>

#define LOG_SQRT_2PI 0.91893853320467274178032973640562
#define CF_MAX_ITER 20000000
/* Below this every Lentz denominator is nudged, so a zero never divides. */
#define LENTZ_TINY 1e-300

/* lgamma(z) - [(z - 1/2) ln z - z + ln sqrt(2 pi)] for z >= 10: the
 * asymptotic Stirling series B_2k / (2k (2k-1) z^(2k-1)), 7 terms, whose
 * truncation error at z = 10 is below 1e-17. */
static double stirling_tail(double z) {
  double r = 1.0 / z, r2 = r * r;
  return r * (1.0 / 12 +
              r2 * (-1.0 / 360 +
                    r2 * (1.0 / 1260 +
                          r2 * (-1.0 / 1680 +
                                r2 * (1.0 / 1188 + r2 * (-691.0 / 360360 + r2 * (1.0 / 156)))))));
}

double log_beta(double a, double b) {
  double big = a > b ? a : b, small = a > b ? b : a;
  if (big < 10) return lgamma(a) + lgamma(b) - lgamma(a + b);
  /* lgamma(big) - lgamma(big + small) from Stirling on both, with the
   * large (z - 1/2) ln z terms cancelled analytically (log1p) instead of
   * numerically: plain lgamma differences lose ~big * 1e-16 absolutely. */
  double s = big + small;
  double diff = -(big - 0.5) * log1p(small / big) - small * log(s) + small +
                stirling_tail(big) - stirling_tail(s);
  return lgamma(small) + diff;
}

/* ln x, taking it from the complement y = 1 - x when x is near 1, where
 * log(x) would turn x's rounding into a large relative error. */
static double log_from_pair(double x, double y) { return x < 0.5 ? log(x) : log1p(-y); }

beta_point beta_point_of(double x) {
  double y = 1 - x;
  return (beta_point){x, y, log_from_pair(x, y), log_from_pair(y, x)};
}

static beta_point mirror(beta_point p) { return (beta_point){p.y, p.x, p.log_y, p.log_x}; }

/* The continued fraction 1 + d1/(1 + d2/(1 + ...)) by modified Lentz.
 * d(2m+1) = -(a+m)(a+b+m)x / ((a+2m)(a+2m+1)),
 * d(2m)   =  m(b-m)x / ((a+2m-1)(a+2m)). */
static double beta_cf(double a, double b, double x) {
  double f = 1, c = 1, d = 0;
  for (long j = 1; j <= CF_MAX_ITER; j++) {
    double m = (double)(j / 2), coef;
    if (j & 1)
      coef = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
    else
      coef = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    d = 1 + coef * d;
    if (fabs(d) < LENTZ_TINY) d = LENTZ_TINY;
    c = 1 + coef / c;
    if (fabs(c) < LENTZ_TINY) c = LENTZ_TINY;
    d = 1 / d;
    double delta = c * d;
    f *= delta;
    if (fabs(delta - 1) < 0.5 * DBL_EPSILON) return f;
  }
  return f; /* not reached for a, b below ~1e13; f is then still close */
}

/* I_x(a, b) straight from the continued fraction (caller picks the side). */
static double incbeta_direct(double a, double b, beta_point p) {
  if (p.log_x == -INFINITY) return 0;
  if (p.log_y == -INFINITY) return 1;
  double log_pre = a * p.log_x + b * p.log_y - log_beta(a, b);
  double f = beta_cf(a, b, p.x);
  return exp(log_pre - log(a * f));
}

static int bad_args(double a, double b, beta_point p) {
  return !(a > 0) || !(b > 0) || isinf(a) || isinf(b) || !(p.x >= 0) || !(p.y >= 0) ||
         !(p.x <= 1) || !(p.y <= 1) || isnan(p.log_x) || isnan(p.log_y);
}

double incbeta_lower(double a, double b, beta_point p) {
  if (bad_args(a, b, p)) return NAN;
  /* The fraction converges fast below the mean-like point (a+1)/(a+b+2);
   * above it, the mirrored fraction does, and 1 - small is exact enough
   * because there I_x(a, b) itself is not small. */
  if (p.x < (a + 1) / (a + b + 2)) return incbeta_direct(a, b, p);
  return 1 - incbeta_direct(b, a, mirror(p));
}

double incbeta_upper(double a, double b, beta_point p) { return incbeta_lower(b, a, mirror(p)); }
