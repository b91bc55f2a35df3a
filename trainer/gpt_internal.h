/* The GPT's activation layout, shared by the CPU model (trainer/gpt.c)
 * and its CUDA twin (trainer/gpt_cuda.c): the same tensors carved from one
 * buffer, host memory for the one and device memory for the other. Internal
 * to the trainer. */
#ifndef PGOLF_GPT_INTERNAL_H
#define PGOLF_GPT_INTERNAL_H

#include <stddef.h>

#include "trainer/gpt.h"
#include "trainer/model.h"

/* Saved activations of one block, each [N, width]. */
typedef struct layer_acts {
  float *x_in, *x_mix, *rstd1, *n1, *q_raw, *k_raw, *v, *rstd_q, *rstd_k, *q_rope, *q_fin, *k_fin;
  float *att, *lse, *attn_out, *x_mid, *rstd2, *n2, *h_pre, *h_act, *mlp_out, *x_out;
} layer_acts;

struct gpt_acts {
  int B, T;            /* capacity */
  int tree;            /* reductions by the GPU's trees (gpt_acts_use_tree_refs) */
  int split_rows;      /* the weight gradients' chunk width (kernels/matmul_split.h) */
  float *split;        /* their partials, when a batch spans several chunks */
  float *mem;          /* one allocation for everything below */
  float *wcopy;        /* bf16-rounded copy of the parameters (mixed) */
  float *cos_t, *sin_t;     /* RoPE tables of a float32 module (GPT_FP32) */
  float *cos_m, *sin_m;     /* and of the bf16 module (GPT_MIXED): kernels/rope.h */
  float *emb, *rstd0, *x0, *rstdf, *xf, *z, *th, *lse_ce;
  layer_acts *layers;
  /* backward scratch */
  float *dx, *dx0, *dm, *dn, *dq, *dk, *dv, *dh, *datt, *dz, *dtok, *dskip;
};

typedef struct dims {
  int N, D, H, KV, hd, kvd, M, V, L, E;
} dims;

/* The model's dimensions for a batch of B x T tokens. */
dims gpt_dims(const gpt_layout *l, int B, int T);

/* Lay out a's tensors in mem (mem != NULL: pointer arithmetic only, so mem
 * may be device memory) or count them (mem == NULL: every pointer NULL);
 * returns the floats needed. a->T and a->layers must be set. */
size_t gpt_acts_carve(gpt_acts *a, const gpt_layout *l, const dims *d, float *mem);

#endif
