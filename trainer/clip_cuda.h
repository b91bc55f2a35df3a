/* Gradient clipping on the GPU: clip_grad_norm_tree(grads, l, max_norm,
 * prec, 1) of trainer/clip.h with the tensors' norms taken on the device
 * by the GPU's tree (l2norm_cuda, whose CPU twin is l2norm_tree_ref),
 * their total and the coefficient on the host by clip.c's own functions,
 * and the scaling on the device (scale_round_cuda): the same bits as the
 * CPU with the GPU's trees. Used by the optimizer's step and by pgolf
 * eval's test-time training. */
#ifndef PGOLF_CLIP_CUDA_H
#define PGOLF_CLIP_CUDA_H

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"
#include "trainer/gpt.h"
#include "trainer/model.h"

/* Clip the device's flat grads in place to max_norm; *total: the norm
 * before clipping. norms and sumsq are device scratch of l->n_tensors
 * each, norms_h host scratch of as many. Waits for the stream once, to
 * read the norms. */
int clip_grad_norm_cuda(float *grads, const gpt_layout *l, double max_norm, gpt_precision prec,
                        float *norms, double *sumsq, float *norms_h, cudaStream_t stream,
                        float *total, pg_error *err);
#endif

#endif
