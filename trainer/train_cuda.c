/* The training steps on one GPU (`pgolf train --device cuda`): the same
 * loop (train.c), log, loss chain, checkpoints, artifact and manifest as
 * on the CPU; each micro-step's forward and backward run on the device
 * (trainer/gpt_cuda.h) and so does the optimizer step (trainer/
 * optimizer_cuda.h), on one stream, with the parameters, gradients and
 * optimizer state kept there between steps. The loader stays on the host:
 * each micro-step's batch is staged in pinned memory and copied on a
 * second stream while the previous micro-step computes (two buffers; an
 * event orders each copy before its forward and the forward's backward
 * before the copy that reuses its buffer), and the micro-steps' losses
 * are read back once per step, so nothing waits between micro-steps. The
 * batches are the loader's in its order, so the bits are those of the
 * unstaged loop. Validation during training and
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
  cudaStream_t compute, copy;
  uint16_t *pinned[2];     /* host, page-locked: x then y of a micro-step */
  uint16_t *ids[2];        /* device: the same */
  cudaEvent_t staged[2];   /* the copy into ids[i] is done */
  cudaEvent_t consumed[2]; /* the backward that read ids[i] is done */
  float *losses;           /* device: one per micro-step */
  float *losses_h;
};

#define CU(call)                                               \
  do {                                                         \
    cudaError_t rc_ = (call);                                  \
    if (rc_ != cudaSuccess) return cuda_fail(err, rc_, #call); \
  } while (0)

/* The streams, events and staging buffers for micro-batches of n tokens
 * and G micro-steps. */
static int staging_open(struct trainer_gpu *g, size_t n, int G, pg_error *err) {
  CU(cudaStreamCreateWithFlags(&g->compute, cudaStreamNonBlocking));
  CU(cudaStreamCreateWithFlags(&g->copy, cudaStreamNonBlocking));
  for (int i = 0; i < 2; i++) {
    CU(cudaMallocHost((void **)&g->pinned[i], 2 * n * sizeof(uint16_t)));
    CU(cudaMalloc((void **)&g->ids[i], 2 * n * sizeof(uint16_t)));
    CU(cudaEventCreateWithFlags(&g->staged[i], cudaEventDisableTiming));
    CU(cudaEventCreateWithFlags(&g->consumed[i], cudaEventDisableTiming));
    CU(cudaEventRecord(g->consumed[i], g->compute)); /* free to fill */
  }
  CU(cudaMalloc((void **)&g->losses, (size_t)G * sizeof(float)));
  g->losses_h = malloc((size_t)G * sizeof(float));
  return g->losses_h ? 0 : pg_fail(err, "", -1, "out of memory");
}

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
      staging_open(g, (size_t)t->B * t->T, t->cfg.grad_accum_steps, err) != 0 ||
      gpt_cuda_new(&g->gc, &t->l, t->B, t->T, t->prec, g->compute, err) != 0 ||
      optimizer_cuda_new(&g->oc, &t->l, &t->cfg.opt, gpt_cuda_matmul(g->gc), g->compute, err) != 0)
    return -1; /* teardown closes what was opened */
  return 0;
}

void trainer_gpu_close(trainer *t) {
  struct trainer_gpu *g = t->gpu;
  if (!g) return;
  if (g->compute) cudaStreamSynchronize(g->compute);
  if (g->copy) cudaStreamSynchronize(g->copy);
  optimizer_cuda_free(g->oc);
  gpt_cuda_free(g->gc);
  for (int i = 0; i < 2; i++) {
    if (g->pinned[i]) cudaFreeHost(g->pinned[i]);
    if (g->ids[i]) cudaFree(g->ids[i]);
    if (g->staged[i]) cudaEventDestroy(g->staged[i]);
    if (g->consumed[i]) cudaEventDestroy(g->consumed[i]);
  }
  if (g->losses) cudaFree(g->losses);
  free(g->losses_h);
  if (g->compute) cudaStreamDestroy(g->compute);
  if (g->copy) cudaStreamDestroy(g->copy);
  free(g);
  t->gpu = NULL;
}

/* On the compute stream, so they follow the steps queued there. */
int trainer_gpu_put(trainer *t, pg_error *err) {
  struct trainer_gpu *g = t->gpu;
  CU(cudaMemcpyAsync(gpt_cuda_params(g->gc), t->params, t->l.n_params * sizeof(float),
                     cudaMemcpyHostToDevice, g->compute));
  CU(cudaStreamSynchronize(g->compute));
  return optimizer_cuda_state_set(g->oc, &t->opt, err);
}

int trainer_gpu_get(trainer *t, pg_error *err) {
  struct trainer_gpu *g = t->gpu;
  CU(cudaMemcpyAsync(t->params, gpt_cuda_params(g->gc), t->l.n_params * sizeof(float),
                     cudaMemcpyDeviceToHost, g->compute));
  CU(cudaStreamSynchronize(g->compute));
  return optimizer_cuda_state_get(g->oc, &t->opt, err);
}

/* Micro-step k's batch from the loader into pinned[k % 2], then on the
 * copy stream into ids[k % 2] once the backward that last read it is done. */
static int stage(trainer *t, int l, int k, pg_error *err) {
  struct trainer_gpu *g = t->gpu;
  const train_config *c = &t->cfg;
  const size_t n = (size_t)t->B * t->T;
  int i = k % 2;
  CU(cudaEventSynchronize(g->staged[i])); /* the pinned buffer's last copy has left */
  if (loader_next_batch(&t->loader, (uint64_t)c->train_batch_tokens, t->T, c->grad_accum_steps,
                        t->first_rank + l, c->world_size, g->pinned[i], g->pinned[i] + n,
                        err) != 0)
    return -1;
  CU(cudaStreamWaitEvent(g->copy, g->consumed[i], 0));
  CU(cudaMemcpyAsync(g->ids[i], g->pinned[i], 2 * n * sizeof(uint16_t), cudaMemcpyHostToDevice,
                     g->copy));
  CU(cudaEventRecord(g->staged[i], g->copy));
  return 0;
}

int trainer_gpu_rank_step(trainer *t, int l, float *loss, pg_error *err) {
  struct trainer_gpu *g = t->gpu;
  const int G = t->cfg.grad_accum_steps;
  const float grad_scale = (float)(1.0 / G);
  CU(cudaMemsetAsync(gpt_cuda_grads(g->gc), 0, t->l.n_params * sizeof(float), g->compute));
  if (loader_set_state(&t->loader, &t->rank_ls[l], err) != 0 || stage(t, l, 0, err) != 0) return -1;
  for (int k = 0; k < G; k++) {
    if (k + 1 < G && stage(t, l, k + 1, err) != 0) return -1;
    int i = k % 2;
    CU(cudaStreamWaitEvent(g->compute, g->staged[i], 0));
    if (gpt_cuda_forward_ids(g->gc, g->ids[i], g->losses + k, err) != 0 ||
        gpt_cuda_backward(g->gc, grad_scale, err) != 0)
      return -1;
    CU(cudaEventRecord(g->consumed[i], g->compute));
  }
  loader_get_state(&t->loader, &t->rank_ls[l]);
  CU(cudaMemcpyAsync(g->losses_h, g->losses, (size_t)G * sizeof(float), cudaMemcpyDeviceToHost,
                     g->compute));
  CU(cudaStreamSynchronize(g->compute));
  float sum = 0.0f; /* train.c's rank_step: the micro-step losses in order */
  for (int k = 0; k < G; k++) sum += g->losses_h[k];
  *loss = sum / (float)G;
  return 0;
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
int trainer_gpu_rank_step(trainer *t, int l, float *loss, pg_error *err) {
  return (void)t, (void)l, (void)loss, absent(err);
}
int trainer_gpu_optimizer_step(trainer *t, double lr_mult, pg_error *err) {
  return (void)t, (void)lr_mult, absent(err);
}
json_t *trainer_gpu_json(trainer *t) { return (void)t, json_null(); }
void trainer_gpu_log(trainer *t) { (void)t; }

#endif
