/* The regularized incomplete beta function I_x(a, b), with both tails
 * computed directly so that a small result keeps its relative accuracy. */
#ifndef PGOLF_INCOMPLETE_BETA_H
#define PGOLF_INCOMPLETE_BETA_H

/* log B(a, b) for a, b > 0. Accurate (absolute error ~1e-15) even when one
 * argument is huge, where lgamma(a) + lgamma(b) - lgamma(a+b) would lose
 * everything to cancellation. */
double log_beta(double a, double b);

/* A point x of (0, 1) given four ways, so a caller that knows the
 * complement y = 1 - x or the logarithms more precisely than they could be
 * recomputed from x keeps that precision (Student t: y = t^2/(df+t^2),
 * ln x = ln(df) - 2 ln t - ln(1 + df/t^2) when x underflows). */
typedef struct beta_point {
  double x, y;         /* x + y == 1 up to rounding; either may be 0 */
  double log_x, log_y; /* may be -inf where x or y is 0 */
} beta_point;

/* The point x with logarithms from x and 1 - x. */
beta_point beta_point_of(double x);

/* I_x(a, b) and its complement 1 - I_x(a, b) = I_{1-x}(b, a), each computed
 * directly when small. Requires a, b > 0 finite; NaN on bad arguments. */
double incbeta_lower(double a, double b, beta_point p);
double incbeta_upper(double a, double b, beta_point p);

#endif
