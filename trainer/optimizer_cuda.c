/* The optimizer on the GPU; see optimizer_cuda.h. optimizer_cuda_step is
 * optimizer.c's optimizer_step, muon.c's muon_update and clip.c's
 * clip_grad_norm with each loop replaced by its CUDA twin. */
#ifdef PGOLF_HAVE_CUDA
#include "trainer/optimizer_cuda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/bf16.h"
#include "kernels/cuda_common.h"
#include "kernels/newton_schulz.h"
#include "kernels/optim_step.h"
#include "trainer/adam.h"
#include "trainer/clip.h"
#include "trainer/clip_cuda.h"
#include "trainer/schedule.h"

/* The Muon matrices of one shape: Newton-Schulz runs on them as one batch
 * (the baseline's 54 matrices are 4 shapes). */
typedef struct muon_group {
  int rows, cols;
  int first, count; /* members[first .. first + count): tensor indices, in layout order */
} muon_group;

struct optimizer_cuda {
  optimizer host; /* hyperparameters, offsets, the step count; its arrays unused */
  const gpt_layout *l;
  matmul_cuda_ctx *mm;
  cudaStream_t stream;
  float *adam_m, *adam_v, *muon_buf; /* device state */
  float *u, *ns_work;                /* device scratch for the largest group's batch */
  float *norms;   /* device: one per tensor (clip), then one per matrix of a batch */
  double *sumsq;  /* device: the same count */
  float *norms_h; /* host copy of the clip norms */
  muon_group *groups;
  int *members, n_groups;
};

#define CU(call)                                               \
  do {                                                         \
    cudaError_t rc_ = (call);                                  \
    if (rc_ != cudaSuccess) return cuda_fail(err, rc_, #call); \
  } while (0)

static int is_muon(const gpt_tensor *t) { return t->group == GPT_GROUP_MATRIX; }

/* The Muon tensors grouped by shape, each group in layout order; the
 * largest batch's needs into *u_floats, *work_floats and *batch. 0, or -1
 * out of memory. */
static int group_matrices(optimizer_cuda *o, size_t *u_floats, size_t *work_floats, int *batch) {
  const gpt_layout *l = o->l;
  o->groups = calloc((size_t)l->n_tensors + 1, sizeof *o->groups);
  o->members = calloc((size_t)l->n_tensors + 1, sizeof *o->members);
  if (!o->groups || !o->members) return -1;
  *u_floats = *work_floats = 0, *batch = 1;
  for (int i = 0; i < l->n_tensors; i++) {
    const gpt_tensor *t = &l->tensors[i];
    if (!is_muon(t)) continue;
    int gi = 0;
    while (gi < o->n_groups && !(o->groups[gi].rows == t->rows && o->groups[gi].cols == t->cols))
      gi++;
    if (gi == o->n_groups) o->groups[o->n_groups++] = (muon_group){t->rows, t->cols, 0, 0};
    o->groups[gi].count++;
  }
  for (int gi = 0, first = 0; gi < o->n_groups; gi++) {
    muon_group *g = &o->groups[gi];
    g->first = first, first += g->count, g->count = 0;
    size_t numel = (size_t)g->rows * g->cols;
    for (int i = 0; i < l->n_tensors; i++)
      if (is_muon(&l->tensors[i]) && l->tensors[i].rows == g->rows && l->tensors[i].cols == g->cols)
        o->members[g->first + g->count++] = i;
    if (numel * g->count > *u_floats) *u_floats = numel * g->count;
    size_t w = newton_schulz5_work_floats(g->rows, g->cols) * g->count;
    if (w > *work_floats) *work_floats = w;
    if (g->count > *batch) *batch = g->count;
  }
  return 0;
}

int optimizer_cuda_new(optimizer_cuda **out, const gpt_layout *l, const optim_hparams *hp,
                       matmul_cuda_ctx *mm, cudaStream_t stream, pg_error *err) {
  *out = NULL;
  optimizer_cuda *o = calloc(1, sizeof *o);
  if (!o) return pg_fail(err, "optimizer", -1, "out of memory");
  if (optimizer_init(&o->host, l, hp, err)) {
    free(o);
    return -1;
  }
  o->l = l, o->mm = mm, o->stream = stream;
  size_t largest = 0, work = 0;
  int batch = 1;
  if (group_matrices(o, &largest, &work, &batch)) {
    optimizer_cuda_free(o);
    return pg_fail(err, "optimizer", -1, "out of memory");
  }
  size_t nt = (size_t)l->n_tensors + (size_t)batch;
  o->norms_h = malloc(nt * sizeof *o->norms_h);
  cudaError_t rc = cudaSuccess;
  void **bufs[] = {(void **)&o->adam_m,  (void **)&o->adam_v, (void **)&o->muon_buf, (void **)&o->u,
                   (void **)&o->ns_work, (void **)&o->norms,  (void **)&o->sumsq};
  size_t bytes[] = {(o->host.n_adam + 1) * sizeof(float),
                    (o->host.n_adam + 1) * sizeof(float),
                    (o->host.n_muon + 1) * sizeof(float),
                    (largest + 1) * sizeof(float),
                    (work + 1) * sizeof(float),
                    nt * sizeof(float),
                    nt * sizeof(double)};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs && rc == cudaSuccess; i++)
    rc = cudaMalloc(bufs[i], bytes[i]);
  /* On the optimizer's stream, which is non-blocking: a plain cudaMemset
   * goes to the legacy default stream, which such a stream does not wait
   * for, so the state's first reads could race it. */
  for (size_t i = 0; i < 3 && rc == cudaSuccess; i++)
    rc = cudaMemsetAsync(*bufs[i], 0, bytes[i], stream);
  if (rc == cudaSuccess) rc = cudaStreamSynchronize(stream);
  if (rc != cudaSuccess || !o->norms_h) {
    if (rc != cudaSuccess) cuda_fail(err, rc, "optimizer state on the device");
    else pg_fail(err, "optimizer", -1, "out of memory");
    optimizer_cuda_free(o);
    return -1;
  }
  *out = o;
  return 0;
}

void optimizer_cuda_free(optimizer_cuda *o) {
  if (!o) return;
  void *dev[] = {o->adam_m, o->adam_v, o->muon_buf, o->u, o->ns_work, o->norms, o->sumsq};
  for (size_t i = 0; i < sizeof dev / sizeof *dev; i++)
    if (dev[i]) cudaFree(dev[i]);
  optimizer_free(&o->host);
  free(o->norms_h);
  free(o->groups);
  free(o->members);
  free(o);
}

/* muon_update on the device for the matrices of group g: each one's
 * momentum into its slot of u, Newton-Schulz on the batch, the shape
 * factor over the batch, then each one's step. The tensors' updates are
 * independent, so the order across tensors changes no bit. */
static int muon_group_step(optimizer_cuda *o, const muon_group *g, float *params,
                           const float *grads, double momentum, double lr, int flags,
                           pg_error *err) {
  const gpt_layout *l = o->l;
  const size_t numel = (size_t)g->rows * g->cols;
  const int nt = l->n_tensors;
  for (int j = 0; j < g->count; j++) {
    const int i = o->members[g->first + j];
    const gpt_tensor *t = &l->tensors[i];
    if (muon_momentum_cuda(o->muon_buf + o->host.state_off[i], o->u + (size_t)j * numel,
                           grads + t->offset, numel, (float)momentum, o->stream, err))
      return -1;
  }
  if (newton_schulz5_batch_cuda(o->mm, o->u, o->u, g->count, g->rows, g->cols,
                                o->host.hp.muon_backend_steps, flags, o->ns_work, o->norms + nt,
                                o->sumsq + nt, o->stream, err))
    return -1;
  double ratio = (double)g->rows / (double)g->cols;
  if (ratio > 1.0 && scale_round_cuda(o->u, o->u, numel * (size_t)g->count, (float)sqrt(ratio),
                                      flags, o->stream, err))
    return -1;
  for (int j = 0; j < g->count; j++) {
    const gpt_tensor *t = &l->tensors[o->members[g->first + j]];
    if (muon_apply_cuda(params + t->offset, o->u + (size_t)j * numel, numel, (float)(-lr),
                        o->stream, err))
      return -1;
  }
  return 0;
}

int optimizer_cuda_step(optimizer_cuda *o, float *params, float *grads, int64_t step,
                        double lr_mult, gpt_precision prec, float *norm, pg_error *err) {
  const gpt_layout *l = o->l;
  const optim_hparams *hp = &o->host.hp;
  for (int i = 0; i < l->n_tensors; i++)
    if (clip_tensor_is_bf16(&l->tensors[i], prec) &&
        bf16_round_array_cuda(grads + l->tensors[i].offset, l->tensors[i].numel, o->stream, err))
      return -1;
  *norm = 0.0f;
  if (hp->grad_clip_norm > 0.0 &&
      clip_grad_norm_cuda(grads, l, hp->grad_clip_norm, prec, o->norms, o->sumsq, o->norms_h,
                          o->stream, norm, err))
    return -1;
  double momentum = schedule_muon_momentum(step, hp->muon_momentum_warmup_start, hp->muon_momentum,
                                           hp->muon_momentum_warmup_steps);
  o->host.adam_step += 1.0f;
  int ns_flags = prec == GPT_MIXED ? KERNEL_BF16 : 0;
  for (int gi = 0; gi < o->n_groups; gi++)
    if (muon_group_step(o, &o->groups[gi], params, grads, momentum, hp->matrix_lr * lr_mult,
                        ns_flags, err))
      return -1;
  for (int i = 0; i < l->n_tensors; i++) {
    const gpt_tensor *t = &l->tensors[i];
    float *p = params + t->offset, *g = grads + t->offset;
    size_t off = o->host.state_off[i];
    if (is_muon(t)) continue; /* above, by shape */
    adam_coeffs c;
    double lr = (t->group == GPT_GROUP_EMBED ? hp->tied_embed_lr : hp->scalar_lr) * lr_mult;
    adam_coeffs_init(&c, lr, hp->beta1, hp->beta2, hp->adam_eps, o->host.adam_step);
    if (adam_update_cuda(p, g, o->adam_m + off, o->adam_v + off, t->numel, c,
                         clip_tensor_is_bf16(t, prec) ? KERNEL_BF16 : 0, o->stream, err))
      return -1;
  }
  return 0;
}

/* The three state arrays between the device and host, one direction. */
static int state_copy(optimizer_cuda *o, optimizer *host, int to_host, pg_error *err) {
  float *dev[3] = {o->adam_m, o->adam_v, o->muon_buf};
  float *hst[3] = {host->adam_m, host->adam_v, host->muon_buf};
  size_t n[3] = {o->host.n_adam, o->host.n_adam, o->host.n_muon};
  for (int i = 0; i < 3; i++)
    CU(cudaMemcpyAsync(to_host ? hst[i] : dev[i], to_host ? dev[i] : hst[i], n[i] * sizeof(float),
                       to_host ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice, o->stream));
  CU(cudaStreamSynchronize(o->stream));
  return 0;
}

int optimizer_cuda_state_get(optimizer_cuda *o, optimizer *host, pg_error *err) {
  if (state_copy(o, host, 1, err) != 0) return -1;
  host->adam_step = o->host.adam_step;
  return 0;
}

int optimizer_cuda_state_set(optimizer_cuda *o, optimizer *host, pg_error *err) {
  if (state_copy(o, host, 0, err) != 0) return -1;
  o->host.adam_step = host->adam_step;
  return 0;
}
#endif
