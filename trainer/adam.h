/* Adam as torch.optim.Adam(fused=True) computes it on CPU (ATen's
 * FusedAdamKernel.cpp, vectorised path), which is what the official script
 * asks for (fused=True). Per step, in double, as that kernel:
 *   bias_correction1 = 1 - beta1^step,   bias_correction2 = 1 - beta2^step
 *   step_size = lr / bias_correction1,   bc2_sqrt = sqrt(bias_correction2)
 * then narrowed to float32; per element in float32:
 *   m = fma(c1, g - m, m)               c1 = (float)(1 - beta1) (< 0.5;
 *                                       otherwise fma(c1 - 1, g - m, g),
 *                                       the two branches of torch's lerp)
 *   v = fma(c2 * g, g, v * beta2)       c2 = (float)(1 - beta2)
 *   p = p + (-step_size * m) / (sqrt(v) / bc2_sqrt + eps)
 * fma is a single rounding (C fmaf), where torch's AVX kernel fuses: in m
 * explicitly (vec::fmadd), in v by the compiler's contraction of the
 * vector expression; this was checked bit for bit against torch 2.15 on
 * AVX-512 (golden/optim.json). torch's scalar loop for a tensor's last
 * (numel mod vector width) elements differs from its own vector path in v
 * by at most an ulp; pgolf uses the vector path's arithmetic everywhere.
 *
 * KERNEL_BF16 (the official bf16 token embedding): p, g, m and v are
 * bf16 tensors in torch (state is zeros_like(param)); the kernel loads them
 * as float, computes as above in float32, stores m, v and p rounded to
 * bf16, and uses the unrounded m and v of this step for p's update, as
 * torch's reduced-precision path does. */
#ifndef PGOLF_ADAM_H
#define PGOLF_ADAM_H

#include <stddef.h>

#include "kernels/flags.h"
#include "kernels/optim_step.h"

/* adam_coeffs and the per-element arithmetic: kernels/optim_step.h. */

/* The per-step constants; step is the count after this step's increment
 * (1 on the first step), as torch's float32 state["step"]. */
void adam_coeffs_init(adam_coeffs *c, double lr, double beta1, double beta2, double eps,
                      float step);

/* One update of n elements. flags: 0 or KERNEL_BF16. */
void adam_update(float *p, const float *g, float *m, float *v, size_t n, const adam_coeffs *c,
                 int flags);

#endif
