/* Gradient clipping as torch.nn.utils.clip_grad_norm_(parameters, max_norm):
 *   norms      = the L2 norm of each gradient tensor, in its dtype
 *                (kernels/l2norm.h; rounded to bf16 for the bf16 token
 *                embedding of GPT_MIXED, as a bf16 tensor's norm is bf16);
 *   total      = L2 norm of the norms, taken as torch groups them: the
 *                float32 tensors in parameter order, then the bf16 ones
 *                (float64 sum of squares, narrowed to float32);
 *   coef       = (float)max_norm / (total + 1e-6f), clamped to at most 1
 *                (NaN stays NaN, as torch.clamp);
 *   every gradient *= coef (rounded to bf16 for a bf16 tensor).
 * Tensors are those of the layout, in its (the state_dict) order, which is
 * the order of base_model.parameters(). Deterministic for any thread
 * count. */
#ifndef PGOLF_CLIP_H
#define PGOLF_CLIP_H

#include "trainer/gpt.h"
#include "trainer/model.h"

/* 1 if tensor t's gradient is a bf16 tensor under prec (the token
 * embedding in GPT_MIXED). */
int clip_tensor_is_bf16(const gpt_tensor *t, gpt_precision prec);

/* The total norm only (nothing scaled). */
float clip_total_norm(const float *grads, const gpt_layout *l, gpt_precision prec);

/* Clip grads in place to max_norm; returns the total norm before clipping. */
float clip_grad_norm(float *grads, const gpt_layout *l, double max_norm, gpt_precision prec);

/* The same with each tensor's norm by the GPU's tree when tree
 * (l2norm_tree_ref): the CPU computing what the CUDA optimizer does. */
float clip_total_norm_tree(const float *grads, const gpt_layout *l, gpt_precision prec, int tree);
float clip_grad_norm_tree(float *grads, const gpt_layout *l, double max_norm, gpt_precision prec,
                          int tree);

/* The steps, for the CUDA optimizer, which takes the norms on the device:
 * each tensor's norm (layout order) into norms[l->n_tensors]; the total
 * from them; the coefficient every gradient is scaled by (scale_round_elem
 * of kernels/optim_step.h, rounded to bf16 for a bf16 tensor). */
void clip_tensor_norms(float *norms, const float *grads, const gpt_layout *l, int tree);
float clip_total_from_norms(const float *norms, const gpt_layout *l, gpt_precision prec);
float clip_coef(float total, double max_norm);

#endif
