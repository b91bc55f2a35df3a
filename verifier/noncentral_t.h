/* The noncentral t distribution's survival function, for power figures. */
#ifndef PGOLF_NONCENTRAL_T_H
#define PGOLF_NONCENTRAL_T_H

/* P(T' > t) for T' = (Z + delta) / sqrt(V/df), Z standard normal, V
 * chi-square with df > 0 (fractional allowed) degrees of freedom. Absolute
 * error ~1e-12 for df <= 1e4; above that the shifted central t
 * P(T_df > t - delta) is returned, which differs by O(1/df). */
double noncentral_t_sf(double t, double df, double delta);

#endif
