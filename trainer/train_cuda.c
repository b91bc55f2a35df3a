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
 * the host in token order, as eval_val sums them.
 *
 * A world of N ranks over P processes (mpirun, P divides N) runs one
 * process per GPU, the device being the process's place on its node. Each
 * of its N/P ranks computes its gradient as above; the gradient is copied
 * into a send buffer cut into P slices of m = ceil(n/P) floats (slice q to
 * process q; layout [q][local rank][m]), NCCL moves the slices (an
 * all-to-all of grouped sends and receives), so process q holds every
 * rank's shard of slice q in rank order, the ordered sum of kernels/
 * ordered_sum.h (the CPU's expression, trainer/grad_sum.h) makes its slice
 * of the step's gradient, and an NCCL all-gather gives every process every
 * slice: the whole gradient, the same bits for any P (one process sums
 * its ranks' buffers in place of the exchange). Every process then takes
 * the whole optimizer step on its own GPU from the same gradient, so all
 * hold the same parameters without another exchange. */
#include "trainer/train_internal.h"

#ifdef PGOLF_HAVE_CUDA
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda_common.h"
#include "kernels/matmul.h"
#include "kernels/nccl.h"
#include "kernels/ordered_sum.h"
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
  int device;                /* this process's GPU: its place among the processes on its node */
  cuda_device_info *all_dev; /* every process's GPU, process 0's first */
  nccl_comm *nccl;           /* several processes: NCCL between their GPUs */
  /* World > 1 (see the top): floats per slice, and device buffers */
  size_t m;
  float *send;     /* the local ranks' gradients, [q][l][m] */
  float *recv;     /* several processes: every rank's shard of this slice, [r][m] */
  float *part;     /* several processes: this process's summed slice (m) */
  float *combined; /* the step's gradient (n; P * m with the last slice's padding) */
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

/* The process's GPU: its place among the processes on its node, one
 * process per GPU; refused where the node has fewer GPUs. */
static int select_device(trainer *t, struct trainer_gpu *g, pg_error *err) {
  int n;
  if (cuda_device_count(&n, err) != 0) return -1;
  g->device = t->comm->local_rank;
  if (g->device >= n)
    return pg_fail(
        err, "", -1,
        "process %d is process %d of %d on its node, which has %d usable CUDA device%s: a GPU run "
        "takes one GPU per process (start at most as many processes per node as it has GPUs)",
        t->comm->rank, t->comm->local_rank, t->comm->local_size, n, n == 1 ? "" : "s");
  CU(cudaSetDevice(g->device));
  return 0;
}

/* Floats of slice q (of m) inside n: the last slice may be short, a slice
 * past n empty. */
static size_t slice_len(size_t n, size_t m, int q) {
  size_t lo = (size_t)q * m;
  return lo >= n ? 0 : (n - lo < m ? n - lo : m);
}

/* Every process's device, recorded; for world > 1 the combination's
 * buffers (zeroed: the last slice's padding is moved, never summed); for
 * several processes the NCCL communicator. */
static int world_open(trainer *t, struct trainer_gpu *g, pg_error *err) {
  int P = t->comm->size, W = t->cfg.world_size;
  size_t n = t->l.n_params;
  if (!(g->all_dev = calloc((size_t)P, sizeof *g->all_dev)))
    return pg_fail(err, "", -1, "out of memory");
  if (comm_allgather_bytes(t->comm, &g->dev, sizeof g->dev, g->all_dev, err) != 0) return -1;
  if (W == 1) return 0;
  g->m = (n + (size_t)P - 1) / (size_t)P;
  size_t slots = (size_t)W * g->m; /* P slices x N/P ranks */
  CU(cudaMalloc((void **)&g->send, slots * sizeof(float)));
  /* On the compute stream that uses them (non-blocking, so it would not
   * wait for a plain cudaMemset on the legacy default stream). */
  CU(cudaMemsetAsync(g->send, 0, slots * sizeof(float), g->compute));
  CU(cudaMalloc((void **)&g->combined, (size_t)P * g->m * sizeof(float)));
  if (P == 1) return 0;
  CU(cudaMalloc((void **)&g->recv, slots * sizeof(float)));
  CU(cudaMalloc((void **)&g->part, g->m * sizeof(float)));
  CU(cudaMemsetAsync(g->part, 0, g->m * sizeof(float), g->compute));
  CU(cudaStreamSynchronize(g->compute));
  return comm_nccl_open(t->comm, &g->nccl, err);
}

int trainer_gpu_open(trainer *t, pg_error *err) {
  struct trainer_gpu *g = calloc(1, sizeof *g);
  if (!g) return pg_fail(err, "", -1, "out of memory");
  t->gpu = g;
  if (select_device(t, g, err) != 0 || cuda_device_query(g->device, &g->dev, err) != 0 ||
      cuda_versions_get(&g->ver, err) != 0 ||
      staging_open(g, (size_t)t->B * t->T, t->cfg.grad_accum_steps, err) != 0 ||
      gpt_cuda_new(&g->gc, &t->l, t->B, t->T, t->prec, g->compute, err) != 0 ||
      optimizer_cuda_new(&g->oc, &t->l, &t->cfg.opt, gpt_cuda_matmul(g->gc), g->compute, err) !=
          0 ||
      world_open(t, g, err) != 0)
    return -1; /* teardown closes what was opened */
  return 0;
}

void trainer_gpu_close(trainer *t, int failed) {
  struct trainer_gpu *g = t->gpu;
  if (!g) return;
  /* After a failed run of several processes NCCL's kernels may wait for a
   * dead peer, and every synchronising call (a stream's, a free,
   * ncclCommDestroy) with them: leave it all to the process's exit, which
   * follows at once (the run stops every process, cmd_train.c). */
  if (failed && g->nccl) {
    t->gpu = NULL;
    return;
  }
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
  nccl_comm_free(g->nccl);
  float *world_bufs[4] = {g->send, g->recv, g->part, g->combined};
  for (int i = 0; i < 4; i++)
    if (world_bufs[i]) cudaFree(world_bufs[i]);
  free(g->all_dev);
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

/* Local rank l's finished gradient into the send buffer: its shard of
 * slice q at [q][l], queued on the compute stream before the next rank's
 * step clears the gradient. */
static int pack_rank(trainer *t, int l, pg_error *err) {
  struct trainer_gpu *g = t->gpu;
  size_t n = t->l.n_params;
  const float *grads = gpt_cuda_grads(g->gc);
  for (int q = 0; q < t->comm->size; q++) {
    size_t len = slice_len(n, g->m, q);
    if (len)
      CU(cudaMemcpyAsync(g->send + ((size_t)q * (size_t)t->n_local + (size_t)l) * g->m,
                         grads + (size_t)q * g->m, len * sizeof(float), cudaMemcpyDeviceToDevice,
                         g->compute));
  }
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
  if (t->cfg.world_size > 1 && pack_rank(t, l, err) != 0) return -1;
  CU(cudaMemcpyAsync(g->losses_h, g->losses, (size_t)G * sizeof(float), cudaMemcpyDeviceToHost,
                     g->compute));
  CU(cudaStreamSynchronize(g->compute));
  float sum = 0.0f; /* train.c's rank_step: the micro-step losses in order */
  for (int k = 0; k < G; k++) sum += g->losses_h[k];
  *loss = sum / (float)G;
  return 0;
}

int trainer_gpu_combine(trainer *t, pg_error *err) {
  struct trainer_gpu *g = t->gpu;
  int W = t->cfg.world_size, P = t->comm->size;
  const float scale = 1.0f / (float)W; /* exact: W divides 8 */
  size_t n = t->l.n_params;
  if (P == 1) return ordered_sum_cuda(g->combined, g->send, g->m, W, n, scale, g->compute, err);
  size_t per_peer = (size_t)t->n_local * g->m;
  if (nccl_alltoall_f32(g->nccl, g->send, g->recv, per_peer, g->compute, err) != 0 ||
      ordered_sum_cuda(g->part, g->recv, g->m, W, slice_len(n, g->m, t->comm->rank), scale,
                       g->compute, err) != 0 ||
      nccl_allgather_f32(g->nccl, g->part, g->combined, g->m, g->compute, err) != 0)
    return -1;
  return nccl_wait(g->nccl, g->compute, t->comm->timeout_s, "the gradient exchange over NCCL", err);
}

int trainer_gpu_optimizer_step(trainer *t, double lr_mult, pg_error *err) {
  float norm;
  float *grads = t->cfg.world_size > 1 ? t->gpu->combined : gpt_cuda_grads(t->gpu->gc);
  return optimizer_cuda_step(t->gpu->oc, gpt_cuda_params(t->gpu->gc), grads, t->step, lr_mult,
                             t->prec, &norm, err);
}

/* Every process's GPU: {"process", "index", "name", "pci_bus_id"}. */
static json_t *devices_json(const trainer *t) {
  json_t *a = json_array();
  for (int p = 0; a && p < t->comm->size; p++) {
    const cuda_device_info *d = &t->gpu->all_dev[p];
    json_array_append_new(a, json_pack("{s:i, s:i, s:s, s:s}", "process", p, "index", d->index,
                                       "name", d->name, "pci_bus_id", d->pci_bus_id));
  }
  return a;
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
  json_t *j = cuda_device_json(&g->dev, &g->ver); /* its index: this process's GPU */
  if (!j) return NULL;
  json_object_set_new(j, "cublaslt", gpt_cuda_plans_json(g->gc));
  json_object_set_new(j, "attention", json_string(gpt_cuda_attention_kind(g->gc)));
  json_object_set_new(j, "gpus", json_integer(t->comm->size));
  json_object_set_new(j, "devices", devices_json(t));
  if (g->nccl) json_object_set_new(j, "nccl", nccl_describe());
  return j;
}

void trainer_gpu_log(trainer *t) {
  const struct trainer_gpu *g = t->gpu;
  char line[512];
  cuda_device_line(line, sizeof line, &g->dev, &g->ver);
  train_log_printf(&t->log, "%s", line);
  if (!g->nccl) return;
  char ver[32];
  pg_error e;
  if (nccl_version(ver, sizeof ver, &e) != 0) snprintf(ver, sizeof ver, "unknown");
  train_log_printf(&t->log, "gpus:%d nccl:%s", t->comm->size, ver);
}

#else

/* Without the CUDA path only the first call is reachable (t->gpu stays
 * NULL); the rest keep the interface whole. */
int trainer_gpu_open(trainer *t, pg_error *err) {
  (void)t;
  return pg_fail(err, "", -1, "--device cuda: this pgolf was built without CUDA (no nvcc)");
}
void trainer_gpu_close(trainer *t, int failed) { (void)t, (void)failed; }
static int absent(pg_error *err) { return pg_fail(err, "", -1, "no CUDA path in this build"); }
int trainer_gpu_put(trainer *t, pg_error *err) { return (void)t, absent(err); }
int trainer_gpu_get(trainer *t, pg_error *err) { return (void)t, absent(err); }
int trainer_gpu_rank_step(trainer *t, int l, float *loss, pg_error *err) {
  return (void)t, (void)l, (void)loss, absent(err);
}
int trainer_gpu_combine(trainer *t, pg_error *err) { return (void)t, absent(err); }
int trainer_gpu_optimizer_step(trainer *t, double lr_mult, pg_error *err) {
  return (void)t, (void)lr_mult, absent(err);
}
int trainer_gpu_validate(trainer *t, const float *params, eval_result *r, pg_error *err) {
  return (void)t, (void)params, (void)r, absent(err);
}
json_t *trainer_gpu_json(trainer *t) { return (void)t, json_null(); }
void trainer_gpu_log(trainer *t) { (void)t; }

#endif
