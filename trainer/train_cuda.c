/* The training steps on one GPU (`pgolf train --device cuda`): the same
 * loop (train.c), log, loss chain, checkpoints, artifact and manifest as
 * on the CPU; each micro-step's forward and backward run on the device
 * (trainer/gpt_cuda.h) and so does the optimizer step (trainer/
 * optimizer_cuda.h), on one stream, with the parameters, gradients and
 * optimizer state kept there between steps. The loader stays on the host
 * and its batch is copied in by the forward. Validation during training and
 * the final evaluation of the artifact run on the CPU from the parameters
 * brought back (trainer_gpu_get). One GPU at world size 1 for now. */
#include "trainer/train_internal.h"

#ifdef PGOLF_HAVE_CUDA
#include <stdlib.h>

#include "kernels/cuda_common.h"
#include "kernels/matmul.h"
#include "trainer/gpt_cuda.h"
#include "trainer/optimizer_cuda.h"

struct trainer_gpu {
  gpt_cuda *gc;
  optimizer_cuda *oc;
  cuda_device_info dev;
  cuda_versions ver;
};

int trainer_gpu_open(trainer *t, pg_error *err) {
  if (t->cfg.world_size != 1 || t->comm->size != 1)
    return pg_fail(err, "", -1,
                   "--device cuda trains on one GPU at world size 1 for now (world %d, %d "
                   "processes asked)",
                   t->cfg.world_size, t->comm->size);
  struct trainer_gpu *g = calloc(1, sizeof *g);
  if (!g) return pg_fail(err, "", -1, "out of memory");
  t->gpu = g;
  if (cuda_device_query(0, &g->dev, err) != 0 || cuda_versions_get(&g->ver, err) != 0 ||
      gpt_cuda_new(&g->gc, &t->l, t->B, t->T, t->prec, 0, err) != 0 ||
      optimizer_cuda_new(&g->oc, &t->l, &t->cfg.opt, gpt_cuda_matmul(g->gc), 0, err) != 0)
    return -1; /* teardown closes what was opened */
  return 0;
}

void trainer_gpu_close(trainer *t) {
  if (!t->gpu) return;
  optimizer_cuda_free(t->gpu->oc);
  gpt_cuda_free(t->gpu->gc);
  free(t->gpu);
  t->gpu = NULL;
}

int trainer_gpu_put(trainer *t, pg_error *err) {
  cudaError_t rc = cudaMemcpy(gpt_cuda_params(t->gpu->gc), t->params,
                              t->l.n_params * sizeof(float), cudaMemcpyHostToDevice);
  if (rc != cudaSuccess) return cuda_fail(err, rc, "parameters to the device");
  return optimizer_cuda_state_set(t->gpu->oc, &t->opt, err);
}

int trainer_gpu_get(trainer *t, pg_error *err) {
  cudaError_t rc = cudaMemcpy(t->params, gpt_cuda_params(t->gpu->gc),
                              t->l.n_params * sizeof(float), cudaMemcpyDeviceToHost);
  if (rc != cudaSuccess) return cuda_fail(err, rc, "parameters from the device");
  return optimizer_cuda_state_get(t->gpu->oc, &t->opt, err);
}

int trainer_gpu_zero_grads(trainer *t, pg_error *err) {
  cudaError_t rc = cudaMemsetAsync(gpt_cuda_grads(t->gpu->gc), 0, t->l.n_params * sizeof(float), 0);
  return rc == cudaSuccess ? 0 : cuda_fail(err, rc, "clearing the gradients");
}

int trainer_gpu_micro_step(trainer *t, float grad_scale, float *loss, pg_error *err) {
  if (gpt_cuda_forward(t->gpu->gc, t->x, t->y, loss, err) != 0) return -1;
  return gpt_cuda_backward(t->gpu->gc, grad_scale, err);
}

int trainer_gpu_optimizer_step(trainer *t, double lr_mult, pg_error *err) {
  float norm;
  return optimizer_cuda_step(t->gpu->oc, gpt_cuda_params(t->gpu->gc), gpt_cuda_grads(t->gpu->gc),
                             t->step, lr_mult, t->prec, &norm, err);
}

json_t *trainer_gpu_json(trainer *t) {
  const struct trainer_gpu *g = t->gpu;
  char cc[16];
  snprintf(cc, sizeof cc, "%d.%d", g->dev.cc_major, g->dev.cc_minor);
  return json_pack("{s:s, s:s, s:i, s:s, s:I, s:s, s:i, s:i, s:o}", "kind", "cuda", "name",
                   g->dev.name, "sm_count", g->dev.sm_count, "compute_capability", cc,
                   "memory_bytes", (json_int_t)g->dev.memory_bytes, "pci_bus_id",
                   g->dev.pci_bus_id, "driver_version", g->ver.driver, "runtime_version",
                   g->ver.runtime, "cublaslt", gpt_cuda_plans_json(g->gc));
}

void trainer_gpu_log(trainer *t) {
  const struct trainer_gpu *g = t->gpu;
  train_log_printf(&t->log, "device:cuda name:%s sm_count:%d compute_capability:%d.%d driver:%d runtime:%d",
                   g->dev.name, g->dev.sm_count, g->dev.cc_major, g->dev.cc_minor, g->ver.driver,
                   g->ver.runtime);
}

#else

/* Without the CUDA path only the first call is reachable (t->gpu stays
 * NULL); the rest keep the interface whole. */
int trainer_gpu_open(trainer *t, pg_error *err) {
  (void)t;
  return pg_fail(err, "", -1, "--device cuda: this pgolf was built without CUDA (no nvcc)");
}
void trainer_gpu_close(trainer *t) { (void)t; }
static int absent(pg_error *err) { return pg_fail(err, "", -1, "no CUDA path in this build"); }
int trainer_gpu_put(trainer *t, pg_error *err) { return (void)t, absent(err); }
int trainer_gpu_get(trainer *t, pg_error *err) { return (void)t, absent(err); }
int trainer_gpu_zero_grads(trainer *t, pg_error *err) { return (void)t, absent(err); }
int trainer_gpu_micro_step(trainer *t, float grad_scale, float *loss, pg_error *err) {
  return (void)t, (void)grad_scale, (void)loss, absent(err);
}
int trainer_gpu_optimizer_step(trainer *t, double lr_mult, pg_error *err) {
  return (void)t, (void)lr_mult, absent(err);
}
json_t *trainer_gpu_json(trainer *t) { return (void)t, json_null(); }
void trainer_gpu_log(trainer *t) { (void)t; }

#endif
