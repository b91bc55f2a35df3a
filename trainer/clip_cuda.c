/* Gradient clipping on the GPU; see clip_cuda.h. */
#ifdef PGOLF_HAVE_CUDA
#include "trainer/clip_cuda.h"

#include "kernels/cuda_common.h"
#include "kernels/l2norm.h"
#include "kernels/optim_step.h"
#include "trainer/clip.h"

int clip_grad_norm_cuda(float *grads, const gpt_layout *l, double max_norm, gpt_precision prec,
                        float *norms, double *sumsq, float *norms_h, cudaStream_t stream,
                        float *total, pg_error *err) {
  for (int i = 0; i < l->n_tensors; i++) {
    const gpt_tensor *t = &l->tensors[i];
    if (l2norm_cuda(norms + i, sumsq + i, grads + t->offset, t->numel, stream, err)) return -1;
  }
  cudaError_t rc = cudaMemcpyAsync(norms_h, norms, (size_t)l->n_tensors * sizeof(float),
                                   cudaMemcpyDeviceToHost, stream);
  if (rc == cudaSuccess) rc = cudaStreamSynchronize(stream);
  if (rc != cudaSuccess) return cuda_fail(err, rc, "reading the gradient norms");
  *total = clip_total_from_norms(norms_h, l, prec);
  float coef = clip_coef(*total, max_norm);
  for (int i = 0; i < l->n_tensors; i++) {
    const gpt_tensor *t = &l->tensors[i];
    int flags = clip_tensor_is_bf16(t, prec) ? KERNEL_BF16 : 0;
    if (scale_round_cuda(grads + t->offset, grads + t->offset, t->numel, coef, flags, stream, err))
      return -1;
  }
  return 0;
}

#endif
