/* The optimizer step on the GPU: optimizer_step's sequence (the bf16
 * gradient rounding, the optional clip, Muon on the block matrices, Adam on
 * the rest, trainer/optimizer.h) with each elementwise step by the shared
 * arithmetic of kernels/optim_step.h, Newton-Schulz by
 * newton_schulz5_cuda and the norms by the GPU's trees. With the CPU's
 * products it equals optimizer_step on an optimizer with tree set, bit
 * for bit (checked on ci/cuda-emu.sh's stand-in by tests/
 * test_cuda_optimizer.c); on a GPU the Newton-Schulz products are
 * cuBLASLt's. The state (Adam's moments, Muon's momentum, the step count)
 * lives on the device; its layout is the CPU optimizer's, so checkpoints
 * copy it through a host optimizer. */
#ifndef PGOLF_OPTIMIZER_CUDA_H
#define PGOLF_OPTIMIZER_CUDA_H

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"
#include "kernels/matmul.h"
#include "trainer/optimizer.h"

typedef struct optimizer_cuda optimizer_cuda;

/* Zeroed device state for layout l (hp checked as optimizer_init does);
 * the Newton-Schulz products go through mm's plans on stream. */
int optimizer_cuda_new(optimizer_cuda **out, const gpt_layout *l, const optim_hparams *hp,
                       matmul_cuda_ctx *mm, cudaStream_t stream, pg_error *err);
void optimizer_cuda_free(optimizer_cuda *o);

/* One step on the device's flat params and grads (grads are rounded and
 * clipped in place, as on the CPU). *norm: the gradient norm before
 * clipping, 0 when clipping is off. Waits for the stream only to read the
 * norms when clipping. */
int optimizer_cuda_step(optimizer_cuda *o, float *params, float *grads, int64_t step,
                        double lr_mult, gpt_precision prec, float *norm, pg_error *err);

/* The state to and from a host optimizer of the same layout (checkpoints,
 * tests). Both wait for the stream. */
int optimizer_cuda_state_get(optimizer_cuda *o, optimizer *host, pg_error *err);
int optimizer_cuda_state_set(optimizer_cuda *o, optimizer *host, pg_error *err);
#endif

#endif
