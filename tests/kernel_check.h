/* Helpers shared by the kernel and model gradient tests: a seeded random
 * source, float64 central finite differences of a scalar function, and
 * closeness checks that report the worst element. */
#ifndef PGOLF_TEST_KERNEL_CHECK_H
#define PGOLF_TEST_KERNEL_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* xorshift64*: a fixed, platform-independent stream. */
typedef struct { uint64_t s; } kc_rng;

static inline double kc_uniform(kc_rng *r) { /* [-1, 1) */
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  uint64_t v = r->s * 2685821657736338717ull;
  return (double)(v >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static inline void kc_fill(kc_rng *r, float *x, size_t n, double scale) {
  for (size_t i = 0; i < n; i++) x[i] = (float)(kc_uniform(r) * scale);
}

static inline double *kc_to_double(const float *x, size_t n) {
  double *d = malloc(n * sizeof *d);
  for (size_t i = 0; i < n; i++) d[i] = x[i];
  return d;
}

/* Largest |got - want| / (atol + rtol * |want|); <= 1 means within tolerance. */
static inline double kc_worst(const float *got, const double *want, size_t n, double rtol,
                              double atol, size_t *where) {
  double worst = 0.0;
  for (size_t i = 0; i < n; i++) {
    double e = fabs((double)got[i] - want[i]) / (atol + rtol * fabs(want[i]));
    if (!(e <= worst)) { /* NaN counts as worst */
      worst = isnan(e) ? INFINITY : e;
      if (where) *where = i;
    }
  }
  return worst;
}

/* Fail (through cmocka) if any element is outside tolerance. */
#define KC_ASSERT_CLOSE(got, want, n, rtol, atol, what)                                  \
  do {                                                                                  \
    size_t kc_at_ = 0;                                                                  \
    double kc_w_ = kc_worst((got), (want), (n), (rtol), (atol), &kc_at_);               \
    if (!(kc_w_ <= 1.0)) {                                                              \
      fprintf(stderr, "%s: element %zu got %.9g want %.9g (ratio %.3g)\n", (what), kc_at_, \
              (double)(got)[kc_at_], (want)[kc_at_], kc_w_);                            \
      fail();                                                                           \
    }                                                                                   \
  } while (0)

/* Central differences of f at x (n doubles, perturbed in place and
 * restored) with step h: grad[i] = (f(x + h e_i) - f(x - h e_i)) / 2h. */
typedef double (*kc_fn)(const double *x, void *ctx);

static inline void kc_fd_grad(kc_fn f, void *ctx, double *x, size_t n, double h, double *grad) {
  for (size_t i = 0; i < n; i++) {
    double keep = x[i];
    x[i] = keep + h;
    double up = f(x, ctx);
    x[i] = keep - h;
    double down = f(x, ctx);
    x[i] = keep;
    grad[i] = (up - down) / (2.0 * h);
  }
}

#endif
