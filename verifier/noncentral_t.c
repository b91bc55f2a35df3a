/* Noncentral t tail as a chi-square mixture of normal tails:
 *   P(T' > t) = integral over v > 0 of f_chi2(v; df) P(Z > t sqrt(v/df) - delta) dv,
 * integrated by the exp-sinh rule v = df exp(pi/2 sinh u), which handles the
 * v^(df/2 - 1) endpoint singularity at small df and the exponential tail. */
#include "verifier/noncentral_t.h"

#include <math.h>

#include "verifier/student_t.h"

#define EXACT_MAX_DF 1e4
#define DE_RANGE 5.0

double noncentral_t_sf(double t, double df, double delta) {
  if (isnan(t) || isnan(df) || isnan(delta) || !(df > 0)) return NAN;
  if (df > EXACT_MAX_DF) return student_t_sf(t - delta, df);
  /* The step resolves the chi-square's relative width sqrt(2/df) at its mean. */
  double h = fmin(1.0 / 32, sqrt(2 / df) / 8), sum = 0;
  double log_norm = -0.5 * df * M_LN2 - lgamma(0.5 * df);
  for (double u = -DE_RANGE; u <= DE_RANGE; u += h) {
    double v = df * exp(M_PI_2 * sinh(u));
    double log_f = (0.5 * df - 1) * log(v) - 0.5 * v + log_norm;
    double tail = 0.5 * erfc((t * sqrt(v / df) - delta) / M_SQRT2);
    double term = exp(log_f) * tail * v * M_PI_2 * cosh(u);
    if (isfinite(term)) sum += term; /* v = 0 or inf at the far ends */
  }
  return fmin(1, sum * h);
}
