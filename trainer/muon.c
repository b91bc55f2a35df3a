#include "trainer/muon.h"

#include <math.h>

#include "kernels/newton_schulz.h"
#include "kernels/optim_step.h"

size_t muon_work_floats(int rows, int cols) {
  return (size_t)rows * cols + newton_schulz5_work_floats(rows, cols);
}

void muon_momentum(float *buf, const float *g, size_t n, double momentum) {
  const float mom = (float)momentum;
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) buf[i] = buf[i] * mom + g[i];
}

void muon_direction(float *u, const float *g, float *buf, int rows, int cols, double momentum, int backend_steps,
                    int flags, float *ns_work) {
  size_t n = (size_t)rows * cols;
  const float mom = (float)momentum;
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) u[i] = muon_momentum_elem(&buf[i], g[i], mom);
  newton_schulz5(u, u, rows, cols, backend_steps, flags, ns_work);
  /* Python: max(1, rows / cols) ** 0.5, a double; 1 ** 0.5 is exactly 1.
   * sqrt, not pow: IEEE requires sqrt correctly rounded, so it gives the
   * same bits on every machine, where libm's pow variants may not. */
  double ratio = (double)rows / (double)cols;
  if (ratio > 1.0) {
    const float s = (float)sqrt(ratio);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) u[i] = scale_round_elem(u[i], s, flags);
  }
}

void muon_apply(float *p, const float *u, size_t n, double lr) {
  const float neg_lr = (float)(-lr);
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) p[i] = fmaf(u[i], neg_lr, p[i]);
}

void muon_update(float *p, const float *g, float *buf, int rows, int cols, double momentum,
                 double lr, int backend_steps, int flags, float *work) {
  size_t n = (size_t)rows * cols;
  muon_direction(work, g, buf, rows, cols, momentum, backend_steps, flags, work + n);
  muon_apply(p, work, n, lr);
}
