/* The per-element arithmetic of the optimizers (trainer/adam.h and
 * trainer/muon.h give the formulas and their sources), shared by the CPU
 * loops and the CUDA twins (kernels/optim_step.cu), so both give the same
 * bits: fmaf is one IEEE operation, and the device flags keep division and
 * square root IEEE (kernels/hd.h). */
#ifndef PGOLF_OPTIM_STEP_H
#define PGOLF_OPTIM_STEP_H

#include <math.h>
#include <stddef.h>

#include "kernels/flags.h"

typedef struct adam_coeffs {
  float c1;            /* (float)(1 - beta1) */
  float lerp_coeff;    /* c1, or c1 - 1 when |c1| >= 0.5 */
  int lerp_small;      /* |c1| < 0.5 */
  float beta2, c2;     /* (float)beta2, (float)(1 - beta2) */
  float bc2_sqrt, eps; /* (float)sqrt(1 - beta2^step), (float)eps */
  float neg_step_size; /* (float)(-(lr / (1 - beta1^step))) */
} adam_coeffs;

/* One Adam element: m, v and p updated in place (rounded under KERNEL_BF16,
 * p's update from the unrounded m and v). */
PGOLF_HD void adam_elem(float *p, float g, float *m, float *v, const adam_coeffs *c, int flags) {
  float mi = *m;
  float base = c->lerp_small ? mi : g;
  float mn = fmaf(c->lerp_coeff, g - mi, base);
  float vn = fmaf(c->c2 * g, g, *v * c->beta2);
  float denom = sqrtf(vn) / c->bc2_sqrt + c->eps;
  *m = kernel_round(mn, flags);
  *v = kernel_round(vn, flags);
  *p = kernel_round(*p + (c->neg_step_size * mn) / denom, flags);
}

/* Muon's momentum: buf = buf * mom + g; returns the Nesterov update
 * fma(buf, mom, g). */
PGOLF_HD float muon_momentum_elem(float *buf, float g, float mom) {
  float b = *buf * mom + g;
  *buf = b;
  return fmaf(b, mom, g);
}

/* torch.optim.SGD's step with momentum mu (dampening 0, no Nesterov, no
 * weight decay): buf = buf * mu + g (torch's first step clones g, the
 * same value from a zero buf), then w -= lr * buf; pgolf eval's
 * test-time training (trainer/eval_adapt.c). */
PGOLF_HD void sgd_momentum_elem(float *w, float *buf, float g, float lr, float mu) {
  float b = *buf * mu + g;
  *buf = b;
  *w = *w - lr * b;
}

/* y = round(s * x): Newton-Schulz's scalings, Muon's shape factor and the
 * gradient clip's coefficient. */
PGOLF_HD float scale_round_elem(float x, float s, int flags) { return kernel_round(s * x, flags); }

#ifdef __cplusplus
extern "C" {
#endif

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

/* The CUDA twins: device arrays, elementwise, launched on stream. */
int adam_update_cuda(float *p, const float *g, float *m, float *v, size_t n, adam_coeffs c,
                     int flags, cudaStream_t stream, pg_error *err);
/* buf and u (u[i] = the Nesterov update) for n elements of g. */
int muon_momentum_cuda(float *buf, float *u, const float *g, size_t n, float mom,
                       cudaStream_t stream, pg_error *err);
/* p = fma(u, neg_lr, p). */
int muon_apply_cuda(float *p, const float *u, size_t n, float neg_lr, cudaStream_t stream,
                    pg_error *err);
/* sgd_momentum_elem over n elements. */
int sgd_momentum_cuda(float *w, float *buf, const float *g, size_t n, float lr, float mu,
                      cudaStream_t stream, pg_error *err);
/* y = round(s * x); y may be x. */
int scale_round_cuda(float *y, const float *x, size_t n, float s, int flags, cudaStream_t stream,
                     pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
