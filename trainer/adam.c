#include "trainer/adam.h"

#include <math.h>

void adam_coeffs_init(adam_coeffs *c, double lr, double beta1, double beta2, double eps,
                      float step) {
  double s = (double)step;
  double bc1 = 1.0 - pow(beta1, s), bc2 = 1.0 - pow(beta2, s);
  double step_size = lr / bc1;
  c->c1 = (float)(1.0 - beta1);
  c->lerp_small = fabsf(c->c1) < 0.5f;
  c->lerp_coeff = c->lerp_small ? c->c1 : c->c1 - 1.0f;
  c->beta2 = (float)beta2;
  c->c2 = (float)(1.0 - beta2);
  c->bc2_sqrt = (float)sqrt(bc2);
  c->eps = (float)eps;
  c->neg_step_size = (float)(-step_size);
}

void adam_update(float *p, const float *g, float *m, float *v, size_t n, const adam_coeffs *c,
                 int flags) {
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) adam_elem(&p[i], g[i], &m[i], &v[i], c, flags);
}
