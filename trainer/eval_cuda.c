/* pgolf eval's forward passes and test-time training on one GPU; see
 * eval_cuda.h. */
#include "trainer/eval_cuda.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef PGOLF_HAVE_CUDA
#include "kernels/cuda_common.h"
#include "kernels/optim_step.h"
#include "trainer/clip_cuda.h"
#include "trainer/gpt_cuda.h"

struct eval_gpu {
  const gpt_layout *l;
  int B, T;
  gpt_precision prec;
  cudaStream_t stream;
  gpt_cuda *gc;
  cuda_device_info dev;
  cuda_versions ver;
  float *loss;            /* device: the last forward's mean (unread) */
  float *mom;             /* device: SGD momentum (ttt) */
  float *norms;           /* device: the clip's per-tensor norms (ttt) */
  double *sumsq;          /* device: their sums of squares (ttt) */
  float *norms_h;         /* host: the norms read back (ttt) */
};

#define CU(call)                                               \
  do {                                                         \
    cudaError_t rc_ = (call);                                  \
    if (rc_ != cudaSuccess) return cuda_fail(err, rc_, #call); \
  } while (0)

static int open_ttt(eval_gpu *g, pg_error *err) {
  const size_t n = g->l->n_params, nt = (size_t)g->l->n_tensors;
  CU(cudaMalloc((void **)&g->mom, n * sizeof(float)));
  CU(cudaMalloc((void **)&g->norms, nt * sizeof(float)));
  CU(cudaMalloc((void **)&g->sumsq, nt * sizeof(double)));
  /* On the session's non-blocking stream: a plain cudaMemset would go to
   * the legacy stream, which this one does not wait for. */
  CU(cudaMemsetAsync(g->mom, 0, n * sizeof(float), g->stream));
  g->norms_h = malloc(nt * sizeof *g->norms_h);
  if (!g->norms_h) return pg_fail(err, "", -1, "evaluation: out of memory");
  return 0;
}

static int open_device(eval_gpu *g, int ttt, const float *flat, pg_error *err) {
  int n;
  if (cuda_device_count(&n, err)) return -1;
  CU(cudaSetDevice(0));
  if (cuda_device_query(0, &g->dev, err) || cuda_versions_get(&g->ver, err)) return -1;
  CU(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
  if (gpt_cuda_new(&g->gc, g->l, g->B, g->T, g->prec, g->stream, err)) return -1;
  CU(cudaMalloc((void **)&g->loss, sizeof(float)));
  CU(cudaMemcpyAsync(gpt_cuda_params(g->gc), flat, g->l->n_params * sizeof(float),
                     cudaMemcpyHostToDevice, g->stream));
  if (ttt && open_ttt(g, err)) return -1;
  CU(cudaStreamSynchronize(g->stream));
  return 0;
}

int eval_gpu_open(eval_gpu **out, const gpt_layout *l, int B, int T, gpt_precision prec, int ttt,
                  const float *flat, pg_error *err) {
  *out = NULL;
  eval_gpu *g = calloc(1, sizeof *g);
  if (!g) return pg_fail(err, "", -1, "evaluation: out of memory");
  g->l = l, g->B = B, g->T = T, g->prec = prec;
  if (open_device(g, ttt, flat, err)) {
    eval_gpu_close(g);
    return -1;
  }
  *out = g;
  return 0;
}

void eval_gpu_close(eval_gpu *g) {
  if (!g) return;
  if (g->stream) cudaStreamSynchronize(g->stream);
  gpt_cuda_free(g->gc);
  void *dev[] = {g->loss, g->mom, g->norms, g->sumsq};
  for (size_t i = 0; i < sizeof dev / sizeof *dev; i++)
    if (dev[i]) cudaFree(dev[i]);
  if (g->stream) cudaStreamDestroy(g->stream);
  free(g->norms_h);
  free(g);
}

int eval_gpu_score(eval_gpu *g, const uint16_t *x, const uint16_t *y, float *nll, pg_error *err) {
  const size_t N = (size_t)g->B * g->T;
  float loss;
  if (gpt_cuda_set_shape(g->gc, g->B, g->T, err) || gpt_cuda_forward(g->gc, x, y, &loss, err))
    return -1;
  CU(cudaMemcpyAsync(nll, gpt_cuda_token_losses(g->gc), N * sizeof *nll, cudaMemcpyDeviceToHost,
                     g->stream));
  CU(cudaStreamSynchronize(g->stream));
  return 0;
}

int eval_gpu_logits_row(eval_gpu *g, size_t row, float *out, pg_error *err) {
  return gpt_cuda_logits_row(g->gc, row, out, err);
}

/* eval_adapt.c's adapt_step with each part on the device. */
int eval_gpu_adapt(eval_gpu *g, const uint16_t *x, const uint16_t *y, int b, int T, float lr,
                   float mu, double clip, pg_error *err) {
  if (!g->mom) return pg_fail(err, "", -1, "evaluation: this session cannot adapt");
  float *params = gpt_cuda_params(g->gc), *grads = gpt_cuda_grads(g->gc), loss, total;
  const size_t n = g->l->n_params;
  CU(cudaMemsetAsync(grads, 0, n * sizeof *grads, g->stream));
  if (gpt_cuda_set_shape(g->gc, b, T, err) || gpt_cuda_forward(g->gc, x, y, &loss, err) ||
      gpt_cuda_backward(g->gc, 1.0f, err))
    return -1;
  if (clip > 0 && clip_grad_norm_cuda(grads, g->l, clip, g->prec, g->norms, g->sumsq, g->norms_h,
                                      g->stream, &total, err))
    return -1;
  return sgd_momentum_cuda(params, g->mom, grads, n, lr, mu, g->stream, err);
}

json_t *eval_gpu_json(const eval_gpu *g) {
  json_t *j = cuda_device_json(&g->dev, &g->ver);
  if (j) {
    json_object_set_new(j, "cublaslt", gpt_cuda_plans_json(g->gc));
    json_object_set_new(j, "attention", json_string(gpt_cuda_attention_kind(g->gc)));
  }
  return j;
}

void eval_gpu_describe(const eval_gpu *g, char *buf, size_t cap) {
  cuda_device_line(buf, cap, &g->dev, &g->ver);
}

#else

/* Without the CUDA path only eval_gpu_open is reachable (it fails, so no
 * session holds a GPU); the rest keep the interface whole. */
int eval_gpu_open(eval_gpu **out, const gpt_layout *l, int B, int T, gpt_precision prec, int ttt,
                  const float *flat, pg_error *err) {
  (void)l, (void)B, (void)T, (void)prec, (void)ttt, (void)flat;
  *out = NULL;
  return pg_fail(err, "", -1, "--device cuda: this pgolf was built without CUDA (no nvcc)");
}
void eval_gpu_close(eval_gpu *g) { (void)g; }
static int absent(pg_error *err) { return pg_fail(err, "", -1, "no CUDA path in this build"); }
int eval_gpu_score(eval_gpu *g, const uint16_t *x, const uint16_t *y, float *nll, pg_error *err) {
  return (void)g, (void)x, (void)y, (void)nll, absent(err);
}
int eval_gpu_logits_row(eval_gpu *g, size_t row, float *out, pg_error *err) {
  return (void)g, (void)row, (void)out, absent(err);
}
int eval_gpu_adapt(eval_gpu *g, const uint16_t *x, const uint16_t *y, int b, int T, float lr,
                   float mu, double clip, pg_error *err) {
  return (void)g, (void)x, (void)y, (void)b, (void)T, (void)lr, (void)mu, (void)clip, absent(err);
}
json_t *eval_gpu_json(const eval_gpu *g) { return (void)g, json_null(); }
void eval_gpu_describe(const eval_gpu *g, char *buf, size_t cap) {
  (void)g;
  snprintf(buf, cap, "device:cpu");
}

#endif
