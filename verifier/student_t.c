/* Student's t through the incomplete beta:
 *   P(T > t) = I_x(df/2, 1/2) / 2,  x = df / (df + t^2),  for t > 0,
 * with both x and 1 - x = t^2 / (df + t^2) formed without cancellation. */
#include "verifier/student_t.h"

#include <float.h>
#include <math.h>

#include "verifier/incomplete_beta.h"

#define ISF_MAX_ITER 400
/* Above this df the beta continued fraction degrades near its switch
 * point (x ~ 1 - 1/df, where it needs ~sqrt(df) nearly cancelling terms:
 * relative error 1e-12 at df = 1e6, 1e-8 at 1e10), so the tail is
 * integrated from the density instead, which stays at ~1e-13 for any df. */
#define DF_QUADRATURE 1e4
/* Double-exponential quadrature step and range (in the transformed variable). */
#define DE_STEP (1.0 / 32)
#define DE_RANGE 5.0

/* The beta point x = df/(df+t^2), y = t^2/(df+t^2) for t > 0, built from
 * r = df/t^2 computed as (df/t)/t so that neither t^2 nor df/t^2 overflows
 * first, with ln x taken from ln df - 2 ln t when r underflows (the Cauchy
 * tail at t = 1e200 is still 3e-201). */
static beta_point t_point(double t, double df) {
  double r = (df / t) / t;
  if (isinf(r)) return (beta_point){1, 0, 0, -INFINITY};
  double log_r = r >= DBL_MIN ? log(r) : log(df) - 2 * log(t);
  double log_x = r > 1 ? -log1p(1 / r) : log_r - log1p(r);
  return (beta_point){r / (1 + r), 1 / (1 + r), log_x, -log1p(r)};
}

/* ln of the density, finite df; t^2/df formed without overflow. */
static double log_pdf(double t, double df) {
  double l = 0;
  if (t != 0) {
    double r = (df / fabs(t)) / fabs(t); /* df / t^2 */
    l = r >= 1e-10 ? log1p(1 / r) : 2 * log(fabs(t)) - log(df) + r;
  }
  return -0.5 * log(df) - log_beta(df / 2, 0.5) - 0.5 * (df + 1) * l;
}

/* P(T > t) = pdf(t) * integral over s >= 0 of pdf(t+s)/pdf(t), where
 *   pdf(t+s)/pdf(t) = (1 + s(2t+s)/(df+t^2))^(-(df+1)/2)
 * has no cancellation. The integral is done by the exp-sinh rule
 * s = c exp(pi/2 sinh u), which decays double exponentially at both ends;
 * c is the integrand's width (its log-slope and curvature at s = 0). */
static double upper_tail_quadrature(double t, double df) {
  double scale = df + t * t, half = 0.5 * (df + 1);
  double width = 1 / (t * (df + 1) / scale + sqrt((df + 1) / scale));
  double sum = 0;
  for (double u = -DE_RANGE; u <= DE_RANGE; u += DE_STEP) {
    double e = M_PI_2 * sinh(u), s = width * exp(e);
    double term = exp(-half * log1p(s * (2 * t + s) / scale)) * s * M_PI_2 * cosh(u);
    sum += term;
    if (u > 0 && term < 1e-20 * sum) break;
  }
  return exp(log_pdf(t, df)) * sum * DE_STEP;
}

/* P(T > t) for t > 0 and finite df. */
static double upper_tail(double t, double df) {
  if (df > DF_QUADRATURE) return upper_tail_quadrature(t, df);
  return 0.5 * incbeta_lower(df / 2, 0.5, t_point(t, df));
}

static int bad(double t, double df) { return isnan(t) || isnan(df) || !(df > 0); }

double student_t_sf(double t, double df) {
  if (bad(t, df)) return NAN;
  if (isinf(df)) return 0.5 * erfc(t / M_SQRT2);
  if (t == 0) return 0.5;
  if (isinf(t)) return t > 0 ? 0 : 1;
  if (t > 0) return upper_tail(t, df);
  return 1 - upper_tail(-t, df);
}

double student_t_cdf(double t, double df) {
  if (bad(t, df)) return NAN;
  return student_t_sf(-t, df); /* the distribution is symmetric */
}

double student_t_pdf(double t, double df) {
  if (bad(t, df)) return NAN;
  if (isinf(df)) return exp(-0.5 * t * t) / sqrt(2 * M_PI);
  if (isinf(t)) return 0;
  return exp(log_pdf(t, df));
}

/* Smallest power-of-16 multiple of 1 with sf(hi) <= p, or INFINITY. */
static double upper_bracket(double p, double df, double *lo) {
  double hi = 1;
  *lo = 0;
  while (student_t_sf(hi, df) > p) {
    *lo = hi;
    if (hi > DBL_MAX / 16) return INFINITY;
    hi *= 16;
  }
  return hi;
}

/* Midpoint for bisection: geometric when the bracket spans orders of
 * magnitude (heavy tails at small df reach t ~ 1e20 and beyond). */
static double bracket_mid(double lo, double hi) {
  if (lo > 0 && hi > 4 * lo) return sqrt(lo) * sqrt(hi);
  return lo + (hi - lo) / 2;
}

/* Root of ln sf(t) = ln p on t > 0, for 0 < p < 1/2. */
static double solve_upper(double p, double df) {
  double lo, hi = upper_bracket(p, df, &lo);
  if (isinf(hi)) return INFINITY;
  double t = bracket_mid(lo, hi), lp = log(p);
  for (int i = 0; i < ISF_MAX_ITER; i++) {
    double s = student_t_sf(t, df);
    double g = log(s) - lp; /* decreasing in t */
    if (g == 0) return t;
    if (g > 0) lo = t; else hi = t;
    /* d/dt ln sf = -pdf/sf, so the Newton step on g is g * sf / pdf. */
    double next = t + g * s / student_t_pdf(t, df);
    if (!(next > lo && next < hi)) next = bracket_mid(lo, hi);
    if (fabs(next - t) <= 2 * DBL_EPSILON * t || hi - lo <= 2 * DBL_EPSILON * hi) return next;
    t = next;
  }
  return t;
}

double student_t_isf(double p, double df) {
  if (isnan(p) || bad(0, df) || p < 0 || p > 1) return NAN;
  if (p == 0) return INFINITY;
  if (p == 1) return -INFINITY;
  if (p == 0.5) return 0;
  if (p > 0.5) return -solve_upper(1 - p, df); /* 1 - p is exact here */
  return solve_upper(p, df);
}
