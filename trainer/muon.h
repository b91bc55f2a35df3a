/* Muon on one 2-D parameter, as the official Muon.step on one rank:
 *   buf = buf * momentum + g            (buf.mul_(momentum).add_(g))
 *   u   = fma(momentum, buf, g)         (Nesterov: g.add(buf, alpha=momentum),
 *                                        which torch's AVX kernel fuses)
 *   u   = newton_schulz5(u, backend_steps)
 *   u  *= max(1, rows / cols) ^ 0.5     (float32 of the Python double)
 *   p   = fma(-lr, u, p)                (p.add_(u, alpha=-lr), fused likewise)
 * momentum and -lr are the float32 values of the Python doubles (the
 * momentum warm-up of trainer/schedule.h, base_lr * lr_mul).
 *
 * flags 0: everything in float32 (pgolf's fp32 reference: the official
 * code with Newton-Schulz and its update buffer in float32).
 * flags KERNEL_BF16: the official mixed precision: the momentum buffer and
 * parameter stay float32 (the block matrices are float32 parameters), the
 * Newton-Schulz runs in bf16 (kernels/newton_schulz.h), the scale factor
 * product is rounded to bf16 (u is a bf16 tensor) and the bf16 update
 * (the official bf16 updates_flat) is applied to the float32 parameter.
 * KERNEL_TREE may be added: Newton-Schulz's norm by the GPU's tree
 * (kernels/newton_schulz.h). The elementwise arithmetic is shared with the
 * CUDA optimizer (kernels/optim_step.h). */
#ifndef PGOLF_MUON_H
#define PGOLF_MUON_H

#include <stddef.h>

#include "kernels/flags.h"

/* Scratch floats muon_update needs for a rows x cols matrix. */
size_t muon_work_floats(int rows, int cols);

void muon_update(float *p, const float *g, float *buf, int rows, int cols, double momentum,
                 double lr, int backend_steps, int flags, float *work);

/* muon_update in its two halves, for the official distributed Muon, where
 * each rank computes the update of the matrices it owns and the updates
 * are exchanged before every rank applies them all:
 *   muon_direction: buf and u (momentum, Nesterov, Newton-Schulz, scale;
 *                   ns_work: newton_schulz5_work_floats floats);
 *   muon_momentum:  buf alone, for a matrix another rank owns (every
 *                   process keeps every buffer, so any checkpoint has them);
 *   muon_apply:     p = fma(u, -lr, p). */
void muon_direction(float *u, const float *g, float *buf, int rows, int cols, double momentum, int backend_steps,
                    int flags, float *ns_work);
void muon_momentum(float *buf, const float *g, size_t n, double momentum);
void muon_apply(float *p, const float *u, size_t n, double lr);

#endif
