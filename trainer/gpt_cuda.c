/* The GPT on one GPU; see gpt_cuda.h. Each function below is its gpt.c
 * namesake with every kernel replaced by its CUDA twin, in the same order
 * with the same flags (the rounding points F1-F6 and B1-B6 of gpt.c), so
 * the two files are read side by side. */
#ifdef PGOLF_HAVE_CUDA
#include "trainer/gpt_cuda.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/attention.h"
#include "kernels/bf16.h"
#include "kernels/col_dot.h"
#include "kernels/cuda_common.h"
#include "kernels/embedding.h"
#include "kernels/matmul.h"
#include "kernels/matmul_split.h"
#include "kernels/q_gain.h"
#include "kernels/qk_norm.h"
#include "kernels/reduce_tree.h"
#include "kernels/relu_square.h"
#include "kernels/residual_mix.h"
#include "kernels/residual_norm.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"
#include "kernels/scale_add.h"
#include "kernels/softcap_cross_entropy.h"
#include "kernels/vec_add.h"
#include "trainer/gpt_internal.h"

/* cuBLASLt's one workspace (kernels/matmul.h): llm.c's size for Hopper. */
#define GPT_CUDA_WORKSPACE (32u << 20)

/* Mixed precision's packed copies of a layer's GEMM inputs (kernels/
 * flags.h), written by the kernels that produce them and kept from the
 * forward for the backward's weight gradients: each is packed once a
 * step, by its producer, not by a pass of its own before each product.
 * Only GEMMs read n1, n2, h and xf, so in mixed precision their float32
 * copies in gpt_acts are not written at all. All NULL in fp32. */
typedef struct {
  uint16_t *n1, *q, *k, *att, *ao, *n2, *hpre, *h, *mo; /* N x D, D, kvd, D, D, D, M, M, D */
  uint16_t *qf, *kf, *v; /* the tensor-core attention's operands: N x D, kvd, kvd */
  /* The block's input, in both precisions: la->x_in where a skip
   * connection makes it, else the previous block's output (or x0) itself,
   * which stays untouched until the backward has read it: no copy. */
  const float *x_in;
} layer16;

struct gpt_cuda {
  const gpt_layout *l;
  int B, T, mixed; /* the shape of the next forward (gpt_cuda_set_shape) */
  int B_max, T_max; /* gpt_cuda_new's: what the buffers hold */
  cudaStream_t stream;
  matmul_cuda_ctx *mm;
  gpt_acts a;       /* carved from acts_mem (device) */
  float *acts_mem;  /* device: the activations, gpt_acts_carve's layout */
  float *params;    /* device: float32 master parameters */
  float *grads;     /* device: their gradients */
  uint16_t *w16;    /* device: the parameters' bf16 copy (GPT_MIXED, F1) */
  uint16_t *ids;    /* device: x then y, B*T each (gpt_cuda_forward's copy) */
  const uint16_t *cur; /* the ids of the last forward, read by the backward */
  uint16_t *s16a; /* device (mixed): gradients packed by their producers for their
                     products (dq's, dk's and dv's side by side) */
  uint16_t *s16b; /* device (mixed): products kept packed for their readers: dh for
                     relu^2, the norms' input gradients (n1's three side by side),
                     the attention's output gradient */
  uint16_t *s16o; /* device (mixed): a product's bf16 result before it is unpacked: a weight
                     gradient's, and v's and datt's where the CUDA-core attention reads floats */
  size_t s16o_n;  /* its bf16 words */
  uint16_t *acts16;             /* device (mixed): the layers' packed inputs, then xf's */
  layer16 *l16;                 /* carved from acts16 (host array, one per layer) */
  uint16_t *xf16;               /* the final norm's packed copy, for the head */
  uint16_t *z16, *th16;         /* the logits as the head's GEMM leaves them; the soft-cap's th */
  float *att_scratch; /* device: attention's row dots and ds (attention_backward_scratch_bytes) */
  double *qg_scratch; /* device: q_gain's tree partials, H*TREE_LANES */
  double *cd_scratch; /* device: the per-channel gradients' lane partials, COL_DOT_SCRATCH(2 D)
                         (residual_mix's two halves at once) */
  float *nll, *loss;  /* device: per-token losses, their mean */
  gpt_params p, g, w; /* bound over params, grads, and the float32 bf16 copy */
};

#define TRY(call)          \
  do {                     \
    if (call) return -1;   \
  } while (0)
#define CU(call)                                                   \
  do {                                                             \
    cudaError_t rc_ = (call);                                      \
    if (rc_ != cudaSuccess) return cuda_fail(err, rc_, #call);     \
  } while (0)

/* The bf16 copy of the parameter w points into (same offset). */
static const uint16_t *w16_of(const gpt_cuda *g, const float *w) {
  return g->w16 + (w - g->params);
}

/* ---- the products, in the model's precision ---- */

/* Mixed precision's GEMMs read bf16 operands, and every one arrives
 * packed (x16, dy16), written beside or instead of the float32 result by
 * the kernel that produced it (kernels/flags.h's packed copies), or left
 * packed by the product that made it: a caller that passes none is a bug,
 * reported, never a silent extra pass. Packing is exact (the values are
 * bf16 already), so where it happens changes no bit. In fp32 the packed
 * operands are ignored. */

/* 0 if the mixed precision's operand p is there; else the error. */
static int packed_there(const gpt_cuda *g, const uint16_t *p, const char *what, pg_error *err) {
  if (!g->mixed || p) return 0;
  return pg_fail(err, "model", -1, "internal: %s's operand is not packed", what);
}

/* s16o for a product of n elements; NULL with the error where it would
 * not fit (a shape the allocation in gpt_cuda_new did not foresee). */
static uint16_t *s16o_for(const gpt_cuda *g, size_t n, pg_error *err) {
  if (n <= g->s16o_n) return g->s16o;
  pg_fail(err, "model", -1, "internal: a product of %zu elements exceeds s16o's %zu", n, g->s16o_n);
  return NULL;
}

/* dst = x's bf16 copy in mixed precision; nothing in fp32. */
static int pack_to(gpt_cuda *g, uint16_t *dst, const float *x, size_t n, pg_error *err) {
  return g->mixed ? bf16_pack_cuda(dst, x, n, g->stream, err) : 0;
}

/* y[n,out] = x W^T: gpt.c's matmul_forward(y, x, w, n, in, out, fb). In
 * mixed precision the product is bf16: with y16 it stays there, packed,
 * for a consumer that reads it so (y unwritten); else it is unpacked into
 * y. */
static int mm_fwd(gpt_cuda *g, float *y, uint16_t *y16, const float *x, const uint16_t *x16,
                  const float *w, int n, int in, int out, pg_error *err) {
  if (!g->mixed) return matmul_forward_cuda(g->mm, y, x, w, n, in, out, 0, g->stream, err);
  TRY(packed_there(g, x16, "a forward product", err));
  uint16_t *o = y16 ? y16 : s16o_for(g, (size_t)n * out, err);
  if (!o) return -1;
  TRY(matmul_forward_cuda(g->mm, o, x16, w16_of(g, w), n, in, out, KERNEL_BF16, g->stream, err));
  return y16 ? 0 : bf16_unpack_cuda(y, o, (size_t)n * out, 0, g->stream, err);
}

/* dx[n,in] (+)= dy W: matmul_backward_input with fb, or with facc when acc
 * (the float32 sum of n1's three gradients, B2); dx16 as mm_fwd's y16,
 * and then the sum that acc asks for is its reader's (the products side
 * by side, rmsnorm_backward_cuda's dy_parts). */
static int mm_bin(gpt_cuda *g, float *dx, uint16_t *dx16, const float *dy, const uint16_t *dy16,
                  const float *w, int n, int in, int out, int acc, pg_error *err) {
  int f = acc ? KERNEL_ACCUMULATE : 0;
  if (!g->mixed) return matmul_backward_input_cuda(g->mm, dx, dy, w, n, in, out, f, g->stream, err);
  TRY(packed_there(g, dy16, "an input gradient", err));
  uint16_t *o = dx16 ? dx16 : s16o_for(g, (size_t)n * in, err);
  if (!o) return -1;
  TRY(matmul_backward_input_cuda(g->mm, o, dy16, w16_of(g, w), n, in, out, KERNEL_BF16, g->stream,
                                 err));
  return dx16 ? 0 : bf16_unpack_cuda(dx, o, (size_t)n * in, f, g->stream, err);
}

/* dw[out,in] (+)= dy^T x: matmul_backward_weight with facc (a float32
 * .grad) when acc, else with fb (the tied head's part, dtok); split into
 * chunks of rows when the batch spans several (kernels/matmul_split.h). */
static int mm_bw(gpt_cuda *g, float *dw, const float *dy, const uint16_t *dy16, const float *x,
                 const uint16_t *x16, int n, int in, int out, int acc, pg_error *err) {
  int f = acc ? KERNEL_ACCUMULATE : 0;
  TRY(packed_there(g, dy16, "a weight gradient", err));
  TRY(packed_there(g, x16, "a weight gradient", err));
  if (matmul_split_chunks(n, g->a.split_rows) > 1) { /* gpt.c's mm_bw with the GPU's trees */
    int fs = (acc ? KERNEL_ACCUMULATE | KERNEL_OUT_FP32 : 0) | (g->mixed ? KERNEL_BF16 : 0);
    const void *a = g->mixed ? (const void *)dy16 : (const void *)dy;
    const void *b = g->mixed ? (const void *)x16 : (const void *)x;
    return matmul_backward_weight_split_cuda(g->mm, dw, a, b, n, in, out, fs, g->a.split_rows,
                                             g->a.split, g->stream, err);
  }
  if (!g->mixed) return matmul_backward_weight_cuda(g->mm, dw, dy, x, n, in, out, f, g->stream, err);
  uint16_t *o = s16o_for(g, (size_t)out * in, err);
  if (!o) return -1;
  TRY(matmul_backward_weight_cuda(g->mm, o, dy16, x16, n, in, out, KERNEL_BF16, g->stream, err));
  return bf16_unpack_cuda(dw, o, (size_t)out * in, f, g->stream, err);
}

/* ---- forward ---- */

/* One block, from the residual update that makes x_mix to the MLP's
 * product; the caller makes x_out. `in` says how x_mix's input comes (the
 * previous block's pending x_out, a skip connection's add, or x_in
 * itself): this fills in the mix and n1, so the update, the mix and the
 * norm are one pass (kernels/residual_norm.h), as is x_mid's add with
 * n2. */
static int block_forward(gpt_cuda *g, const dims *d, const gpt_block_params *bp, layer_acts *la,
                         const layer16 *p16, residual_norm_io in, pg_error *err) {
  gpt_acts *a = &g->a;
  const int N = d->N, D = d->D, T = g->T, fb = g->mixed ? KERNEL_BF16 : 0;
  const int f4 = g->mixed ? KERNEL_ROUND_OUT : 0; /* F4: q and k cast as they are stored */
  cudaStream_t s = g->stream;
  in.x0 = a->x0, in.mix = bp->resid_mix, in.v = la->x_mix;
  in.n = g->mixed ? NULL : la->n1, in.n16 = p16->n1, in.rstd = la->rstd1;
  TRY(residual_norm_forward_cuda(&in, N, D, 0, fb, s, err));
  /* q and k stay packed in mixed precision: their norms read them so. */
  TRY(mm_fwd(g, la->q_raw, p16->q, la->n1, p16->n1, bp->c_q, N, D, D, err));
  TRY(mm_fwd(g, la->k_raw, p16->k, la->n1, p16->n1, bp->c_k, N, D, d->kvd, err));
  /* The tensor-core attention reads q, k and v packed, as qk_norm's F4
   * cast and v's product leave them, and leaves its output packed alone. */
  const int att16 = g->mixed && attention_mma_supported(d->hd, fb);
  uint16_t *qf = att16 ? p16->qf : NULL, *kf = att16 ? p16->kf : NULL, *v16 = att16 ? p16->v : NULL;
  TRY(mm_fwd(g, la->v, v16, la->n1, p16->n1, bp->c_v, N, D, d->kvd, err));
  const float *qr = g->mixed ? NULL : la->q_raw, *kr = g->mixed ? NULL : la->k_raw;
  const float *rc = g->mixed ? a->cos_m : a->cos_t, *rs = g->mixed ? a->sin_m : a->sin_t;
  TRY(qk_norm_forward_cuda(la->q_rope, qf ? NULL : la->q_fin, qf, la->rstd_q, qr, p16->q,
                           bp->q_gain, rc, rs, N, T, d->H, d->hd, f4, s, err));
  TRY(qk_norm_forward_cuda(NULL, kf ? NULL : la->k_fin, kf, la->rstd_k, kr, p16->k, NULL, rc, rs, N,
                           T, d->KV, d->hd, f4, s, err));
  if (att16)
    TRY(attention_forward_packed_cuda(NULL, p16->att, la->lse, qf, kf, v16, N / T, T, d->H, d->KV,
                                      d->hd, fb, s, err));
  else
    TRY(attention_forward_cuda(la->att, p16->att, la->lse, la->q_fin, la->k_fin, la->v, N / T, T,
                               d->H, d->KV, d->hd, fb, s, err));
  /* The projections' outputs stay packed: the residual adds read them so, both ways. */
  const float *ao = g->mixed ? NULL : la->attn_out;
  TRY(mm_fwd(g, la->attn_out, p16->ao, la->att, p16->att, bp->attn_proj, N, D, D, err));
  residual_norm_io mid = {.x = la->x_mix,
                          .s = bp->attn_scale,
                          .y = ao,
                          .y16 = p16->ao,
                          .u = la->x_mid,
                          .n = g->mixed ? NULL : la->n2,
                          .n16 = p16->n2,
                          .rstd = la->rstd2};
  TRY(residual_norm_forward_cuda(&mid, N, D, 0, fb, s, err));
  /* h_pre stays packed in mixed precision: relu^2 (both ways) reads it so. */
  TRY(mm_fwd(g, la->h_pre, p16->hpre, la->n2, p16->n2, bp->fc, N, D, d->M, err));
  TRY(relu_square_forward_cuda(g->mixed ? NULL : la->h_act, p16->h, g->mixed ? NULL : la->h_pre,
                               p16->hpre, (size_t)N * d->M, fb, s, err));
  return mm_fwd(g, la->mlp_out, p16->mo, la->h_act, p16->h, bp->mlp_proj, N, d->M, D, err);
}

/* A block's pending x_out = x_mid + mlp_scale * mlp_out, as the input of
 * the residual update that consumes it. */
static residual_norm_io pending_out(const gpt_cuda *g, const gpt_block_params *bp, layer_acts *la,
                                    const layer16 *p16) {
  residual_norm_io io = {.x = la->x_mid, .s = bp->mlp_scale, .u = la->x_out};
  if (g->mixed)
    io.y16 = p16->mo;
  else
    io.y = la->mlp_out;
  return io;
}

int gpt_cuda_forward_ids(gpt_cuda *g, const uint16_t *ids, float *loss, pg_error *err) {
  const gpt_layout *l = g->l;
  const dims d = gpt_dims(l, g->B, g->T);
  gpt_acts *a = &g->a;
  const int fb = g->mixed ? KERNEL_BF16 : 0;
  cudaStream_t s = g->stream;
  g->cur = ids;
  if (g->mixed) { /* F1: the bf16 copy, packed for the GEMMs and as floats */
    TRY(bf16_pack_cuda(g->w16, g->params, l->n_params, s, err));
    TRY(bf16_unpack_cuda(a->wcopy, g->w16, l->n_params, 0, s, err));
  }
  TRY(embedding_forward_cuda(a->emb, g->mixed ? g->w.tok_emb : g->p.tok_emb, ids, d.N, d.D, s,
                             err));
  TRY(rmsnorm_forward_cuda(a->x0, NULL, a->rstd0, a->emb, NULL, d.N, d.D, 0, s, err));
  /* Each block's x_out is made by the next residual update that reads it
   * (the next block's mix, or the final norm), in the same pass; a skip
   * connection's add reads it as floats, so before one it is made alone. */
  residual_norm_io in = {.x = a->x0};
  for (int i = 0; i < d.L; i++) {
    layer_acts *la = &a->layers[i];
    const int dec = i - d.E;
    g->l16[i].x_in = i ? a->layers[i - 1].x_out : a->x0;
    if (dec >= 0 && dec < l->num_skip) {
      if (in.s) TRY(scale_add_forward_cuda(in.u, in.x, in.s, in.y, in.y16, d.N, d.D, 0, s, err));
      in = (residual_norm_io){.x = g->l16[i].x_in,
                              .s = g->p.skip_weights + (size_t)dec * d.D,
                              .y = a->layers[d.E - 1 - dec].x_out,
                              .u = la->x_in};
      g->l16[i].x_in = la->x_in;
    }
    TRY(block_forward(g, &d, &g->p.blocks[i], la, &g->l16[i], in, err));
    in = pending_out(g, &g->p.blocks[i], la, &g->l16[i]);
  }
  in.n = g->mixed ? NULL : a->xf, in.n16 = g->xf16, in.rstd = a->rstdf;
  TRY(residual_norm_forward_cuda(&in, d.N, d.D, 0, fb, s, err));
  /* In mixed precision the logits and th stay packed (F6: both bf16). */
  TRY(mm_fwd(g, a->z, g->z16, a->xf, g->xf16, g->p.tok_emb, d.N, d.D, d.V, err));
  return softcap_cross_entropy_forward_cuda(g->mixed ? NULL : a->th, g->th16, a->lse_ce, g->nll,
                                            loss, g->mixed ? NULL : a->z, g->z16, ids + d.N, d.N,
                                            d.V, l->cfg.logit_softcap, fb, s, err);
}

int gpt_cuda_forward(gpt_cuda *g, const uint16_t *x, const uint16_t *y, float *loss,
                     pg_error *err) {
  const size_t N = (size_t)g->B * g->T;
  cudaStream_t s = g->stream;
  CU(cudaMemcpyAsync(g->ids, x, N * sizeof *x, cudaMemcpyHostToDevice, s));
  CU(cudaMemcpyAsync(g->ids + N, y, N * sizeof *y, cudaMemcpyHostToDevice, s));
  TRY(gpt_cuda_forward_ids(g, g->ids, g->loss, err));
  CU(cudaMemcpyAsync(loss, g->loss, sizeof *loss, cudaMemcpyDeviceToHost, s));
  CU(cudaStreamSynchronize(s));
  return 0;
}

/* ---- backward ---- */

/* dx: the gradient of the block's output on entry, of its input on exit. */
static int block_backward(gpt_cuda *g, const dims *d, const gpt_block_params *bp,
                          gpt_block_params *gr, layer_acts *la, const layer16 *p16, pg_error *err) {
  gpt_acts *a = &g->a;
  const int N = d->N, D = d->D, T = g->T, fb = g->mixed ? KERNEL_BF16 : 0;
  const int b3 = g->mixed ? KERNEL_ROUND_OUT : 0; /* B3: dm cast as it is stored */
  cudaStream_t s = g->stream;
  /* Each gradient is packed by its producer (into s16a) for its two
   * products; dq, dk and dv side by side, all three read after all are
   * made. */
  uint16_t *ga = g->mixed ? g->s16a : NULL;
  uint16_t *gk = ga ? ga + (size_t)N * D : NULL, *gv = gk ? gk + (size_t)N * d->kvd : NULL;
  const float *ao = g->mixed ? NULL : la->attn_out, *mo = g->mixed ? NULL : la->mlp_out;
  /* In mixed precision dm is packed alone: its products read nothing else. */
  float *dm = ga ? NULL : a->dm;
  TRY(scale_add_backward_cuda(dm, ga, gr->mlp_scale, a->dx, bp->mlp_scale, mo, p16->mo, N, D, b3,
                              g->cd_scratch, s, err));
  /* dh's product stays packed in s16b for relu^2's backward (B5), which
   * packs its result into s16a once the weight gradient has read dm's. */
  uint16_t *dh16 = g->mixed ? g->s16b : NULL;
  TRY(mm_bin(g, a->dh, dh16, a->dm, ga, bp->mlp_proj, N, d->M, D, 0, err));
  TRY(mm_bw(g, gr->mlp_proj, a->dm, ga, la->h_act, p16->h, N, d->M, D, 1, err));
  TRY(relu_square_backward_cuda(dh16 ? NULL : a->dh, ga, dh16 ? NULL : a->dh, dh16,
                                g->mixed ? NULL : la->h_pre, p16->hpre, (size_t)N * d->M, fb, s,
                                err));
  /* n2's and n1's gradients stay packed in s16b (dh's is spent) for the
   * norms' backwards, which read and sum them there. */
  uint16_t *dn16 = g->mixed ? g->s16b : NULL;
  const float *dn = dn16 ? NULL : a->dn;
  TRY(mm_bin(g, a->dn, dn16, a->dh, ga, bp->fc, N, D, d->M, 0, err));
  TRY(mm_bw(g, gr->fc, a->dh, ga, la->n2, p16->n2, N, D, d->M, 1, err));
  TRY(rmsnorm_backward_cuda(a->dx, NULL, dn, dn16, 1, la->x_mid, NULL, la->rstd2, N, D,
                            KERNEL_ACCUMULATE, s, err));
  TRY(scale_add_backward_cuda(dm, ga, gr->attn_scale, a->dx, bp->attn_scale, ao, p16->ao, N, D, b3,
                              g->cd_scratch, s, err));
  /* The tensor-core attention reads its output's gradient packed (s16b,
   * free again), its output and operands as the forward packed them. */
  const int att16 = g->mixed && attention_mma_supported(d->hd, fb);
  uint16_t *datt16 = att16 ? g->s16b : NULL;
  TRY(mm_bin(g, a->datt, datt16, a->dm, ga, bp->attn_proj, N, D, D, 0, err));
  TRY(mm_bw(g, gr->attn_proj, a->dm, ga, la->att, p16->att, N, D, D, 1, err));
  /* The tensor-core attention leaves dq, dk and dv packed where their
   * readers want them (B4's bf16 values): dv for its products, dq and dk
   * for qk_norm's backwards, which then overwrite them in place. */
  if (att16)
    TRY(attention_backward_packed_cuda(ga, gk, gv, datt16, p16->att, la->lse, p16->qf, p16->kf,
                                       p16->v, g->att_scratch, N / T, T, d->H, d->KV, d->hd, fb, s,
                                       err));
  else
    TRY(attention_backward_cuda(a->dq, a->dk, a->dv, a->datt, la->att, la->lse, la->q_fin,
                                la->k_fin, la->v, g->att_scratch, N / T, T, d->H, d->KV, d->hd, fb,
                                s, err));
  const float *dq = att16 ? NULL : a->dq, *dk = att16 ? NULL : a->dk;
  const uint16_t *dq16 = att16 ? ga : NULL, *dk16 = att16 ? gk : NULL;
  TRY(q_gain_backward_cuda(NULL, gr->q_gain, g->qg_scratch, dq, dq16, la->q_rope, bp->q_gain, N,
                           d->H, d->hd, 0, s, err)); /* dg alone: qk_norm applies the gain to dq */
  const float *rc = g->mixed ? a->cos_m : a->cos_t, *rs = g->mixed ? a->sin_m : a->sin_t;
  const float *qr = g->mixed ? NULL : la->q_raw, *kr = g->mixed ? NULL : la->k_raw;
  /* B4; in mixed precision dq and dk only packed (their products read nothing else) */
  TRY(qk_norm_backward_cuda(ga ? NULL : a->dq, ga, dq, dq16, qr, p16->q, la->rstd_q, bp->q_gain, rc,
                            rs, N, T, d->H, d->hd, fb, s, err));
  TRY(qk_norm_backward_cuda(gk ? NULL : a->dk, gk, dk, dk16, kr, p16->k, la->rstd_k, NULL, rc, rs,
                            N, T, d->KV, d->hd, fb, s, err));
  if (!att16) TRY(pack_to(g, gv, a->dv, (size_t)N * d->kvd, err));
  /* dn sums q, then k, then v (B2); the weight gradients are separate
   * tensors, each reading n1's copy from the forward. */
  const size_t ND = (size_t)N * D;
  TRY(mm_bin(g, a->dn, dn16, a->dq, ga, bp->c_q, N, D, D, 0, err));
  TRY(mm_bw(g, gr->c_q, a->dq, ga, la->n1, p16->n1, N, D, D, 1, err));
  TRY(mm_bin(g, a->dn, dn16 ? dn16 + ND : NULL, a->dk, gk, bp->c_k, N, D, d->kvd, 1, err));
  TRY(mm_bw(g, gr->c_k, a->dk, gk, la->n1, p16->n1, N, D, d->kvd, 1, err));
  TRY(mm_bin(g, a->dn, dn16 ? dn16 + 2 * ND : NULL, a->dv, gv, bp->c_v, N, D, d->kvd, 1, err));
  TRY(mm_bw(g, gr->c_v, a->dv, gv, la->n1, p16->n1, N, D, d->kvd, 1, err));
  TRY(rmsnorm_backward_cuda(a->dx, NULL, dn, dn16, 3, la->x_mix, NULL, la->rstd1, N, D,
                            KERNEL_ACCUMULATE, s, err));
  return residual_mix_backward_cuda(a->dx, a->dx0, gr->resid_mix, a->dx, p16->x_in, a->x0,
                                    bp->resid_mix, N, D, 0, g->cd_scratch, s, err);
}

int gpt_cuda_backward(gpt_cuda *g, float loss_scale, pg_error *err) {
  const gpt_layout *l = g->l;
  const dims d = gpt_dims(l, g->B, g->T);
  gpt_acts *a = &g->a;
  const int fb = g->mixed ? KERNEL_BF16 : 0;
  const size_t ND = (size_t)d.N * d.D;
  cudaStream_t s = g->stream;
  const uint16_t *x = g->cur, *y = g->cur + d.N;
  uint16_t *dzp = g->mixed ? g->s16a : NULL; /* dz packed as it is made, for its two products */
  TRY(softcap_cross_entropy_backward_cuda(dzp ? NULL : a->dz, dzp, g->th16 ? NULL : a->th, g->th16,
                                          a->lse_ce, y, d.N, d.V, l->cfg.logit_softcap, loss_scale,
                                          fb, s, err));
  uint16_t *dxf16 = g->mixed ? g->s16b : NULL; /* xf's gradient, packed for its norm */
  TRY(mm_bin(g, a->dm, dxf16, a->dz, dzp, g->p.tok_emb, d.N, d.D, d.V, 0, err));
  TRY(mm_bw(g, a->dtok, a->dz, dzp, a->xf, g->xf16, d.N, d.D, d.V, 0, err));
  TRY(rmsnorm_backward_cuda(a->dx, NULL, dxf16 ? NULL : a->dm, dxf16, 1, a->layers[d.L - 1].x_out,
                            NULL, a->rstdf, d.N, d.D, 0, s, err));
  CU(cudaMemsetAsync(a->dx0, 0, ND * sizeof *a->dx0, s));
  CU(cudaMemsetAsync(a->dskip, 0, (size_t)(d.E > 0 ? d.E : 1) * ND * sizeof *a->dskip, s));
  for (int i = d.L - 1; i >= 0; i--) {
    layer_acts *la = &a->layers[i];
    if (i < d.E) TRY(vec_add_cuda(a->dx, a->dskip + (size_t)i * ND, ND, 0, s, err));
    TRY(block_backward(g, &d, &g->p.blocks[i], &g->g.blocks[i], la, &g->l16[i], err));
    int dec = i - d.E;
    if (dec >= 0 && dec < l->num_skip) {
      int src = d.E - 1 - dec;
      TRY(scale_add_backward_cuda(a->dskip + (size_t)src * ND, NULL,
                                  g->g.skip_weights + (size_t)dec * d.D, a->dx,
                                  g->p.skip_weights + (size_t)dec * d.D, a->layers[src].x_out, NULL,
                                  d.N, d.D, KERNEL_ACCUMULATE, g->cd_scratch, s, err));
    }
  }
  TRY(vec_add_cuda(a->dx0, a->dx, ND, 0, s, err));
  TRY(rmsnorm_backward_cuda(a->dm, NULL, a->dx0, NULL, 1, a->emb, NULL, a->rstd0, d.N, d.D, fb, s,
                            err)); /* B6 */
  TRY(embedding_backward_cuda(a->dtok, a->dm, x, d.N, d.V, d.D, KERNEL_ACCUMULATE | fb, s, err));
  return vec_add_cuda(g->g.tok_emb, a->dtok, (size_t)d.V * d.D, fb, s, err);
}

/* ---- state ---- */

static int dev_alloc(void **p, size_t bytes, pg_error *err) {
  CU(cudaMalloc(p, bytes ? bytes : 1));
  return 0;
}

int gpt_cuda_new(gpt_cuda **out, const gpt_layout *l, int B, int T, gpt_precision prec,
                 cudaStream_t stream, pg_error *err) {
  *out = NULL;
  int n_dev;
  if (cuda_device_count(&n_dev, err)) return -1;
  if (B < 1 || T < 1 || T > l->cfg.seq_len || (long long)B * T > (1LL << 30))
    return pg_fail(err, "model", -1, "batch %d x %d outside 1..seq_len %d", B, T, l->cfg.seq_len);
  gpt_cuda *g = calloc(1, sizeof *g);
  if (!g) return pg_fail(err, "model", -1, "out of memory");
  g->l = l, g->B = B, g->T = T, g->B_max = B, g->T_max = T, g->mixed = prec == GPT_MIXED, g->stream = stream;
  g->a.B = B, g->a.T = T, g->a.split_rows = MATMUL_SPLIT_ROWS;
  g->a.layers = calloc((size_t)l->cfg.num_layers, sizeof *g->a.layers);
  g->l16 = calloc((size_t)l->cfg.num_layers, sizeof *g->l16);
  if (!g->a.layers || !g->l16) {
    free(g->a.layers), free(g->l16), free(g);
    return pg_fail(err, "model", -1, "out of memory");
  }
  const dims d = gpt_dims(l, B, T);
  const size_t N = (size_t)d.N;
  size_t wide = (size_t)d.D;
  if ((size_t)d.M > wide) wide = (size_t)d.M;
  if ((size_t)d.V > wide) wide = (size_t)d.V;
  /* s16o: N x D activations (v, datt) or a weight, at most wide x D. */
  size_t s16 = N > wide ? N * (size_t)d.D : wide * (size_t)d.D;
  /* s16a holds one gradient's packed copy (the logits' N x V among them),
   * or dq's, dk's and dv's side by side. */
  size_t wide_a = (size_t)d.D + 2 * (size_t)d.kvd > wide ? (size_t)d.D + 2 * (size_t)d.kvd : wide;
  /* s16b: dh (N x M), n1's three gradients, datt or xf's gradient; never the logits */
  size_t wide_b = 3 * (size_t)d.D > (size_t)d.M ? 3 * (size_t)d.D : (size_t)d.M;
  size_t per_layer = 7 * (size_t)d.D + 3 * (size_t)d.kvd + 2 * (size_t)d.M; /* layer16's */
  /* layer16s, then xf16, z16 and th16 */
  size_t n16 = g->mixed ? N * ((size_t)d.L * per_layer + (size_t)d.D + 2 * (size_t)d.V) : 0;
  size_t n_acts = gpt_acts_carve(&g->a, l, &d, NULL);
  if (matmul_cuda_init(&g->mm, GPT_CUDA_WORKSPACE, err) ||
      dev_alloc((void **)&g->acts_mem, n_acts * sizeof(float), err) ||
      dev_alloc((void **)&g->params, l->n_params * sizeof(float), err) ||
      dev_alloc((void **)&g->grads, l->n_params * sizeof(float), err) ||
      dev_alloc((void **)&g->w16, l->n_params * sizeof(uint16_t), err) ||
      dev_alloc((void **)&g->ids, 2 * N * sizeof(uint16_t), err) ||
      dev_alloc((void **)&g->s16a, N * wide_a * sizeof(uint16_t), err) ||
      (n16 && dev_alloc((void **)&g->acts16, n16 * sizeof(uint16_t), err)) ||
      dev_alloc((void **)&g->s16b, N * wide_b * sizeof(uint16_t), err) ||
      dev_alloc((void **)&g->s16o, s16 * sizeof(uint16_t), err) ||
      dev_alloc((void **)&g->att_scratch,
                attention_backward_scratch_bytes(B, T, d.H, d.hd, g->mixed ? KERNEL_BF16 : 0),
                err) ||
      dev_alloc((void **)&g->qg_scratch, (size_t)d.H * TREE_LANES * sizeof(double), err) ||
      dev_alloc((void **)&g->cd_scratch, COL_DOT_SCRATCH(2 * (size_t)d.D) * sizeof(double), err) ||
      dev_alloc((void **)&g->nll, N * sizeof(float), err) ||
      dev_alloc((void **)&g->loss, sizeof(float), err)) {
    gpt_cuda_free(g);
    return -1;
  }
  g->s16o_n = s16;
  gpt_acts_carve(&g->a, l, &d, g->acts_mem);
  g->a.mem = g->acts_mem;
  if (g->acts16) { /* each layer's layer16, in its order, then xf */
    uint16_t *p = g->acts16;
    for (int i = 0; i < d.L; i++) {
      layer16 *c = &g->l16[i];
      c->n1 = p, p += N * d.D;
      c->q = p, p += N * d.D;
      c->k = p, p += N * d.kvd;
      c->att = p, p += N * d.D;
      c->ao = p, p += N * d.D;
      c->n2 = p, p += N * d.D;
      c->hpre = p, p += N * d.M;
      c->h = p, p += N * d.M;
      c->mo = p, p += N * d.D;
      c->qf = p, p += N * d.D;
      c->kf = p, p += N * d.kvd;
      c->v = p, p += N * d.kvd;
    }
    g->xf16 = p, p += N * d.D;
    g->z16 = p, p += N * d.V;
    g->th16 = p;
  }
  gpt_params_bind(&g->p, l, g->params);
  gpt_params_bind(&g->g, l, g->grads);
  gpt_params_bind(&g->w, l, g->a.wcopy);
  cudaError_t rc = cudaMemsetAsync(g->grads, 0, l->n_params * sizeof(float), stream);
  if ((rc != cudaSuccess && cuda_fail(err, rc, "clearing the gradients")) ||
      rope_table_cuda(g->a.cos_t, g->a.sin_t, T, l->head_dim, l->cfg.rope_base, 0, stream, err) ||
      rope_table_cuda(g->a.cos_m, g->a.sin_m, T, l->head_dim, l->cfg.rope_base, KERNEL_BF16,
                      stream, err)) {
    gpt_cuda_free(g);
    return -1;
  }
  *out = g;
  return 0;
}

void gpt_cuda_free(gpt_cuda *g) {
  if (!g) return;
  void *dev[] = {g->acts_mem,   g->params,     g->grads, g->w16,    g->ids,
                 g->s16a,       g->s16b,       g->s16o,  g->acts16, g->att_scratch,
                 g->qg_scratch, g->cd_scratch, g->nll,   g->loss};
  for (size_t i = 0; i < sizeof dev / sizeof *dev; i++)
    if (dev[i]) cudaFree(dev[i]);
  if (g->mm) matmul_cuda_free(g->mm);
  if (g->p.blocks) gpt_params_free(&g->p);
  if (g->g.blocks) gpt_params_free(&g->g);
  if (g->w.blocks) gpt_params_free(&g->w);
  free(g->a.layers);
  free(g->l16);
  free(g);
}

/* Every buffer was carved for B_max x T_max and each kernel reads the
 * first N = B x T rows of it, as gpt_forward does with acts bigger than
 * its batch; the rope tables hold positions 0 .. T_max - 1, whose values
 * do not depend on the table's length. */
int gpt_cuda_set_shape(gpt_cuda *g, int B, int T, pg_error *err) {
  if (B < 1 || T < 1 || B > g->B_max || T > g->T_max)
    return pg_fail(err, "model", -1, "batch %d x %d outside the device's 1..%d x 1..%d", B, T,
                   g->B_max, g->T_max);
  g->B = B, g->T = T;
  return 0;
}

float *gpt_cuda_params(gpt_cuda *g) { return g->params; }
int gpt_cuda_logits_row(gpt_cuda *g, size_t row, float *out, pg_error *err) {
  const size_t V = (size_t)g->l->cfg.vocab_size;
  if (row >= (size_t)g->B * (size_t)g->T)
    return pg_fail(err, "model", -1, "logits row %zu past the batch's %d", row, g->B * g->T);
  float *z = g->a.z + row * V;
  /* mixed: the row unpacked where its floats would be (exact) */
  if (g->z16) TRY(bf16_unpack_cuda(z, g->z16 + row * V, V, 0, g->stream, err));
  CU(cudaMemcpyAsync(out, z, V * sizeof *out, cudaMemcpyDeviceToHost, g->stream));
  CU(cudaStreamSynchronize(g->stream));
  return 0;
}
float *gpt_cuda_grads(gpt_cuda *g) { return g->grads; }
const float *gpt_cuda_token_losses(const gpt_cuda *g) { return g->nll; }
json_t *gpt_cuda_plans_json(const gpt_cuda *g) { return matmul_cuda_plans_json(g->mm); }

const char *gpt_cuda_attention_kind(const gpt_cuda *g) {
  const dims d = gpt_dims(g->l, g->B, g->T);
  return attention_mma_supported(d.hd, g->mixed ? KERNEL_BF16 : 0) ? "tensor_cores" : "cuda_cores";
}
matmul_cuda_ctx *gpt_cuda_matmul(gpt_cuda *g) { return g->mm; }

#endif
