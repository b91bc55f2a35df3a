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
 * unstaged loop. Validation during training and the final evaluation of
 * the artifact run on the GPU too (trainer_gpu_validate): forward passes
 * of the training's shape over the validation batches, each batch's
 * per-token losses brought back while the next one computes and summed on
 * the host in token order, as eval_val sums them. One GPU at world size 1
 * for now. */
#include "trainer/train_internal.h"

#ifdef PGOLF_HAVE_CUDA
#include <stdlib.h>
#include <string.h>

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
  float *nll_h[2];         /* host, page-locked: a validation batch's per-token losses */
  cudaEvent_t scored[2];   /* the copy into nll_h[i] is done */
  uint16_t *win;           /* host: a validation batch's window of tokens */
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
    CU(cudaMallocHost((void **)&g->nll_h[i], n * sizeof(float)));
    CU(cudaEventCreateWithFlags(&g->scored[i], cudaEventDisableTiming));
  }
  CU(cudaMalloc((void **)&g->losses, (size_t)G * sizeof(float)));
  g->losses_h = malloc((size_t)G * sizeof(float));
  g->win = malloc((n + 1) * sizeof(uint16_t));
  return g->losses_h && g->win ? 0 : pg_fail(err, "", -1, "out of memory");
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
    if (g->nll_h[i]) cudaFreeHost(g->nll_h[i]);
    if (g->scored[i]) cudaEventDestroy(g->scored[i]);
  }
  if (g->losses) cudaFree(g->losses);
  free(g->losses_h);
  free(g->win);
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

/* Validation batch j (sequences from j * B, b of them) into pinned[j % 2]
 * and on the copy stream into ids[j % 2], as stage() does a training
 * batch; its bytes added to r->bytes. A short last batch is padded with
 * token 0 to the full B sequences, so that every product keeps the
 * training's shape (and cuBLASLt its recorded plans); the padding's
 * losses are never read. */
static int stage_val(trainer *t, uint64_t j, int b, eval_result *r, pg_error *err) {
  struct trainer_gpu *g = t->gpu;
  const size_t n = (size_t)t->B * t->T, used = (size_t)b * t->T;
  int i = (int)(j % 2);
  uint16_t *x = g->pinned[i], *y = g->pinned[i] + n;
  CU(cudaEventSynchronize(g->staged[i]));
  if (eval_batch_ids(&t->val, &t->luts, j * (uint64_t)t->B, b, g->win, x, y, &r->bytes, err) != 0)
    return -1;
  memset(x + used, 0, (n - used) * sizeof *x);
  memset(y + used, 0, (n - used) * sizeof *y);
  CU(cudaStreamWaitEvent(g->copy, g->consumed[i], 0));
  CU(cudaMemcpyAsync(g->ids[i], g->pinned[i], 2 * n * sizeof(uint16_t), cudaMemcpyHostToDevice,
                     g->copy));
  CU(cudaEventRecord(g->staged[i], g->copy));
  return 0;
}

/* Batch j's forward on the compute stream, then its per-token losses
 * into nll_h[j % 2]; nothing waited for. */
static int score_val(trainer *t, uint64_t j, pg_error *err) {
  struct trainer_gpu *g = t->gpu;
  const size_t n = (size_t)t->B * t->T;
  int i = (int)(j % 2);
  CU(cudaStreamWaitEvent(g->compute, g->staged[i], 0));
  if (gpt_cuda_forward_ids(g->gc, g->ids[i], g->losses, err) != 0) return -1;
  CU(cudaEventRecord(g->consumed[i], g->compute));
  CU(cudaMemcpyAsync(g->nll_h[i], gpt_cuda_token_losses(g->gc), n * sizeof(float),
                     cudaMemcpyDeviceToHost, g->compute));
  CU(cudaEventRecord(g->scored[i], g->compute));
  return 0;
}

/* Batch j's b sequences' losses added to r->loss_sum in token order, in
 * float64 (eval_val's sum), once they are on the host. */
static int sum_val(trainer *t, uint64_t j, int b, eval_result *r, pg_error *err) {
  struct trainer_gpu *g = t->gpu;
  const float *nll = g->nll_h[j % 2];
  CU(cudaEventSynchronize(g->scored[j % 2]));
  for (size_t k = 0; k < (size_t)b * t->T; k++) r->loss_sum += (double)nll[k];
  return 0;
}

/* Sequences in batch j of n_seq in batches of B. */
static int batch_seqs(uint64_t j, uint64_t n_seq, int B) {
  uint64_t left = n_seq - j * (uint64_t)B;
  return left < (uint64_t)B ? (int)left : B;
}

/* Batch j is staged and scored while the host sums batch j - 1 and stages
 * batch j + 1; two of each buffer suffice, each reuse ordered by the
 * events (staged, consumed, scored) as in the training steps. */
int trainer_gpu_validate(trainer *t, const float *params, eval_result *r, pg_error *err) {
  struct trainer_gpu *g = t->gpu;
  const uint64_t T = (uint64_t)t->T, n_seq = (t->val.n_tokens - 1) / T;
  const uint64_t n_batch = (n_seq + (uint64_t)t->B - 1) / (uint64_t)t->B;
  memset(r, 0, sizeof *r);
  if (t->val.seq_len != T)
    return pg_fail(err, "", -1, "evaluation: stream truncated for %u, windows of %d",
                   t->val.seq_len, t->T);
  double t0 = trainer_now_ms();
  if (params)
    CU(cudaMemcpyAsync(gpt_cuda_params(g->gc), params, t->l.n_params * sizeof(float),
                       cudaMemcpyHostToDevice, g->compute));
  if (n_batch > 0 && stage_val(t, 0, batch_seqs(0, n_seq, t->B), r, err) != 0) return -1;
  for (uint64_t j = 0; j < n_batch; j++) {
    if (score_val(t, j, err) != 0) return -1;
    if (j + 1 < n_batch && stage_val(t, j + 1, batch_seqs(j + 1, n_seq, t->B), r, err) != 0)
      return -1;
    if (j > 0 && sum_val(t, j - 1, batch_seqs(j - 1, n_seq, t->B), r, err) != 0) return -1;
  }
  if (n_batch > 0 && sum_val(t, n_batch - 1, batch_seqs(n_batch - 1, n_seq, t->B), r, err) != 0)
    return -1;
  eval_result_finish(r, n_seq, T, (trainer_now_ms() - t0) / 1e3);
  return 0;
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
int trainer_gpu_validate(trainer *t, const float *params, eval_result *r, pg_error *err) {
  return (void)t, (void)params, (void)r, absent(err);
}
/* Validation batch j (sequences from j * B, b of them) into pinned[j % 2]
 * and on the copy stream into ids[j % 2], as stage() does a training
 * batch; its bytes added to r->bytes. A short last batch is padded with
 * token 0 to the full B sequences, so that every product keeps the
 * training's shape (and cuBLASLt its recorded plans); the padding's
 * losses are never read. */
static int stage_val(trainer *t, uint64_t j, int b, eval_result *r, pg_error *err) {
  struct trainer_gpu *g = t->gpu;
  const size_t n = (size_t)t->B * t->T, used = (size_t)b * t->T;
  int i = (int)(j % 2);
  uint16_t *x = g->pinned[i], *y = g->pinned[i] + n;
  CU(cudaEventSynchronize(g->staged[i]));
  if (eval_batch_ids(&t->val, &t->luts, j * (uint64_t)t->B, b, g->win, x, y, &r->bytes, err) != 0)
    return -1;
  memset(x + used, 0, (n - used) * sizeof *x);
  memset(y + used, 0, (n - used) * sizeof *y);
  CU(cudaStreamWaitEvent(g->copy, g->consumed[i], 0));
  CU(cudaMemcpyAsync(g->ids[i], g->pinned[i], 2 * n * sizeof(uint16_t), cudaMemcpyHostToDevice,
                     g->copy));
  CU(cudaEventRecord(g->staged[i], g->copy));
  return 0;
}

/* Batch j's forward on the compute stream, then its per-token losses
 * into nll_h[j % 2]; nothing waited for. */
static int score_val(trainer *t, uint64_t j, pg_error *err) {
  struct trainer_gpu *g = t->gpu;
  const size_t n = (size_t)t->B * t->T;
  int i = (int)(j % 2);
  CU(cudaStreamWaitEvent(g->compute, g->staged[i], 0));
  if (gpt_cuda_forward_ids(g->gc, g->ids[i], g->losses, err) != 0) return -1;
  CU(cudaEventRecord(g->consumed[i], g->compute));
  CU(cudaMemcpyAsync(g->nll_h[i], gpt_cuda_token_losses(g->gc), n * sizeof(float),
                     cudaMemcpyDeviceToHost, g->compute));
  CU(cudaEventRecord(g->scored[i], g->compute));
  return 0;
}

/* Batch j's b sequences' losses added to r->loss_sum in token order, in
 * float64 (eval_val's sum), once they are on the host. */
static int sum_val(trainer *t, uint64_t j, int b, eval_result *r, pg_error *err) {
  struct trainer_gpu *g = t->gpu;
  const float *nll = g->nll_h[j % 2];
  CU(cudaEventSynchronize(g->scored[j % 2]));
  for (size_t k = 0; k < (size_t)b * t->T; k++) r->loss_sum += (double)nll[k];
  return 0;
}

/* Sequences in batch j of n_seq in batches of B. */
static int batch_seqs(uint64_t j, uint64_t n_seq, int B) {
  uint64_t left = n_seq - j * (uint64_t)B;
  return left < (uint64_t)B ? (int)left : B;
}

/* Batch j is staged and scored while the host sums batch j - 1 and stages
 * batch j + 1; two of each buffer suffice, each reuse ordered by the
 * events (staged, consumed, scored) as in the training steps. */
int trainer_gpu_validate(trainer *t, const float *params, eval_result *r, pg_error *err) {
  struct trainer_gpu *g = t->gpu;
  const uint64_t T = (uint64_t)t->T, n_seq = (t->val.n_tokens - 1) / T;
  const uint64_t n_batch = (n_seq + (uint64_t)t->B - 1) / (uint64_t)t->B;
  memset(r, 0, sizeof *r);
  if (t->val.seq_len != T)
    return pg_fail(err, "", -1, "evaluation: stream truncated for %u, windows of %d",
                   t->val.seq_len, t->T);
  double t0 = trainer_now_ms();
  if (params)
    CU(cudaMemcpyAsync(gpt_cuda_params(g->gc), params, t->l.n_params * sizeof(float),
                       cudaMemcpyHostToDevice, g->compute));
  if (n_batch > 0 && stage_val(t, 0, batch_seqs(0, n_seq, t->B), r, err) != 0) return -1;
  for (uint64_t j = 0; j < n_batch; j++) {
    if (score_val(t, j, err) != 0) return -1;
    if (j + 1 < n_batch && stage_val(t, j + 1, batch_seqs(j + 1, n_seq, t->B), r, err) != 0)
      return -1;
    if (j > 0 && sum_val(t, j - 1, batch_seqs(j - 1, n_seq, t->B), r, err) != 0) return -1;
  }
  if (n_batch > 0 && sum_val(t, n_batch - 1, batch_seqs(n_batch - 1, n_seq, t->B), r, err) != 0)
    return -1;
  eval_result_finish(r, n_seq, T, (trainer_now_ms() - t0) / 1e3);
  return 0;
}

json_t *trainer_gpu_json(trainer *t) { return (void)t, json_null(); }
void trainer_gpu_log(trainer *t) { (void)t; }

#endif
