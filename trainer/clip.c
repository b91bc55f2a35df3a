#include "trainer/clip.h"

#include <math.h>

#include "kernels/bf16.h"
#include "kernels/flags.h"
#include "kernels/l2norm.h"

int clip_tensor_is_bf16(const gpt_tensor *t, gpt_precision prec) {
  return prec == GPT_MIXED && t->group == GPT_GROUP_EMBED;
}

/* Sum of squared per-tensor norms over the tensors whose bf16-ness is
 * `bf16`, in layout order. */
static double sum_sq_norms(const float *grads, const gpt_layout *l, gpt_precision prec, int bf16) {
  double s = 0.0;
  for (int i = 0; i < l->n_tensors; i++) {
    const gpt_tensor *t = &l->tensors[i];
    if (clip_tensor_is_bf16(t, prec) != bf16) continue;
    float norm = l2norm(grads + t->offset, t->numel);
    if (bf16) norm = bf16_round(norm);
    s += (double)norm * (double)norm;
  }
  return s;
}

float clip_total_norm(const float *grads, const gpt_layout *l, gpt_precision prec) {
  double s = sum_sq_norms(grads, l, prec, 0);
  s += sum_sq_norms(grads, l, prec, 1);
  return (float)sqrt(s);
}

float clip_grad_norm(float *grads, const gpt_layout *l, double max_norm, gpt_precision prec) {
  float total = clip_total_norm(grads, l, prec);
  float coef = (float)max_norm / (total + 1e-6f);
  if (coef > 1.0f) coef = 1.0f;
  for (int i = 0; i < l->n_tensors; i++) {
    const gpt_tensor *t = &l->tensors[i];
    float *g = grads + t->offset;
    int flags = clip_tensor_is_bf16(t, prec) ? KERNEL_BF16 : 0;
#pragma omp parallel for schedule(static)
    for (size_t j = 0; j < t->numel; j++) g[j] = kernel_round(g[j] * coef, flags);
  }
  return total;
}
