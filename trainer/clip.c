#include "trainer/clip.h"

#include <stdlib.h>

#include "kernels/optim_step.h"

#include <math.h>

#include "kernels/bf16.h"
#include "kernels/flags.h"
#include "kernels/l2norm.h"

int clip_tensor_is_bf16(const gpt_tensor *t, gpt_precision prec) {
  return prec == GPT_MIXED && t->group == GPT_GROUP_EMBED;
}

void clip_tensor_norms(float *norms, const float *grads, const gpt_layout *l, int tree) {
  for (int i = 0; i < l->n_tensors; i++) {
    const gpt_tensor *t = &l->tensors[i];
    norms[i] = (tree ? l2norm_tree_ref : l2norm)(grads + t->offset, t->numel);
  }
}

/* Sum of squared norms over the tensors whose bf16-ness is `bf16`, in
 * layout order. */
static double sum_sq_norms(const float *norms, const gpt_layout *l, gpt_precision prec, int bf16) {
  double s = 0.0;
  for (int i = 0; i < l->n_tensors; i++) {
    if (clip_tensor_is_bf16(&l->tensors[i], prec) != bf16) continue;
    float norm = bf16 ? bf16_round(norms[i]) : norms[i];
    s += (double)norm * (double)norm;
  }
  return s;
}

float clip_total_from_norms(const float *norms, const gpt_layout *l, gpt_precision prec) {
  double s = sum_sq_norms(norms, l, prec, 0);
  s += sum_sq_norms(norms, l, prec, 1);
  return (float)sqrt(s);
}

float clip_coef(float total, double max_norm) {
  float coef = (float)max_norm / (total + 1e-6f);
  return coef > 1.0f ? 1.0f : coef;
}

float clip_total_norm_tree(const float *grads, const gpt_layout *l, gpt_precision prec, int tree) {
  float *norms = malloc(((size_t)l->n_tensors + 1) * sizeof *norms);
  if (!norms) abort();
  clip_tensor_norms(norms, grads, l, tree);
  float total = clip_total_from_norms(norms, l, prec);
  free(norms);
  return total;
}

float clip_total_norm(const float *grads, const gpt_layout *l, gpt_precision prec) {
  return clip_total_norm_tree(grads, l, prec, 0);
}

float clip_grad_norm_tree(float *grads, const gpt_layout *l, double max_norm, gpt_precision prec,
                          int tree) {
  float total = clip_total_norm_tree(grads, l, prec, tree);
  float coef = clip_coef(total, max_norm);
  for (int i = 0; i < l->n_tensors; i++) {
    const gpt_tensor *t = &l->tensors[i];
    float *g = grads + t->offset;
    int flags = clip_tensor_is_bf16(t, prec) ? KERNEL_BF16 : 0;
#pragma omp parallel for schedule(static)
    for (size_t j = 0; j < t->numel; j++) g[j] = scale_round_elem(g[j], coef, flags);
  }
  return total;
}

float clip_grad_norm(float *grads, const gpt_layout *l, double max_norm, gpt_precision prec) {
  return clip_grad_norm_tree(grads, l, max_norm, prec, 0);
}
