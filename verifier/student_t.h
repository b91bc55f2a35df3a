/* Student's t distribution for any real df > 0 (fractional included, and
 * df = INFINITY for the normal limit). The tail that is small is always
 * computed directly, never as 1 - (something near 1), so sf(t) keeps its
 * relative accuracy (~1e-13) down to the smallest normal double. */
#ifndef PGOLF_STUDENT_T_H
#define PGOLF_STUDENT_T_H

/* P(T <= t) and P(T > t). NaN for NaN arguments or df <= 0. */
double student_t_cdf(double t, double df);
double student_t_sf(double t, double df);

/* The density, used by the quantile's Newton steps and by tests. */
double student_t_pdf(double t, double df);

/* Inverse survival function: the t with sf(t, df) = p, for p in [0, 1]
 * (p = 0 gives +inf, p = 1 gives -inf). Safeguarded Newton on log sf,
 * falling back to bisection whenever a step leaves the bracket. */
double student_t_isf(double p, double df);

#endif
