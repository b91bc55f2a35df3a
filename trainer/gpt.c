/* The baseline GPT's forward and backward, composed from kernels/.
 *
 * Shapes: N = B*T token rows; D model width; H heads of hd; KV heads;
 * M = mlp_mult*D; V vocabulary. Every activation is [N, width], row-major.
 *
 * Forward (the official GPT.forward):
 *   emb = tok_emb[x]; x0 = rms_norm(emb); x = x0
 *   block l (input x_in): xm = mix0*x_in + mix1*x0; n1 = rms_norm(xm)
 *     q = rms_norm_head(n1 Wq^T), k = rms_norm_head(n1 Wk^T), v = n1 Wv^T
 *     q = rope(q) * q_gain; k = rope(k); a = attention(q, k, v)
 *     xa = xm + attn_scale * (a Wo^T); n2 = rms_norm(xa)
 *     x_out = xa + mlp_scale * (relu(n2 Wfc^T)^2 Wp^T)
 *   encoder layers l < E push x_out; decoder layer E+i first adds
 *   skip_weights[i] * (output of encoder E-1-i) to its input.
 *   z = rms_norm(x) tok_emb^T; loss = mean CE(30 tanh(z / 30), y).
 *
 * GPT_FP32: every tensor float32, no extra rounding.
 *
 * GPT_MIXED reproduces the official run: tok_emb is a bf16 parameter, the
 * forward runs under torch.autocast("cuda", bfloat16) in eager semantics.
 * CUDA autocast casts the inputs of linear layers and of
 * scaled_dot_product_attention to bf16, and runs rms_norm and pow (behind
 * Tensor.square) in float32 (its fp32 list). So the residual stream, x0,
 * every norm output, q and k after their norm, RoPE (its tables take q's
 * dtype, float32) and the q_gain product stay float32, and the rounding
 * points are exactly these (bf16() = round to nearest even):
 *   F1 matrices: W.to(bf16) for every linear weight (tok_emb is bf16).
 *   F2 linear inputs: n1, n2 and the final norm output are rounded when
 *      cast for their linear layer; relu(h)^2 is rounded at the down
 *      projection's input (the square itself is exact in float32).
 *   F3 linear outputs: q, k, v, the attention projection, fc, the MLP
 *      projection and the tied head z are bf16 (float32 accumulation).
 *   F4 attention: q and k (after norm, RoPE, gain) are rounded at the SDPA
 *      cast; v is bf16; the output is bf16; scores, softmax, log-sum-exp
 *      and the sums are float32 (flash attention keeps them so; we do not
 *      model its rounding of P to bf16 inside the P V product).
 *   F5 relu(h) on bf16 h is bf16 (exact).
 *   F6 the soft-cap runs on bf16 z, op by op: u = bf16(z * (1/30)) (CUDA
 *      divides by a scalar through its float32 reciprocal), th =
 *      bf16(tanh(u)), logit = bf16(30 * th); logits.float() and the
 *      cross-entropy are float32.
 *   Mixed operands promote to float32: attn_scale * attn_out (bf16) and
 *   mlp_scale * mlp_out are float32, as is every residual add.
 * Backward (autograd casts each gradient to its input's dtype):
 *   B1 the cross-entropy gradient is rounded at logits.float(); the
 *      soft-cap chain's gradients are bf16 op by op (kernels/
 *      softcap_cross_entropy.h).
 *   B2 every linear's input gradient and weight gradient are bf16 (float32
 *      accumulation); the weight gradient is added to the float32 .grad of
 *      the float32 parameter. The three gradients of n1 (from q, k, v) are
 *      converted to float32 and summed there in float32 (q, then k, then v).
 *   B3 the gradient of the attention projection's output is bf16
 *      (attn_scale * attn_out backward casts to attn_out's dtype); same for
 *      mlp_out. attn_scale, mlp_scale, skip_weights, resid_mix and q_gain
 *      gradients are float32 sums.
 *   B4 attention's dq, dk, dv are bf16; q_gain, RoPE and the q/k norms
 *      backpropagate in float32 and the q/k norm input gradient is rounded
 *      (the norm's input, the bf16 projection output, was cast to float32).
 *   B5 relu^2: pow's float32 backward dy * 2r is rounded when cast back to
 *      relu's bf16 output; relu's backward masks it.
 *   B6 the embedding norm's input gradient is rounded (emb is bf16); the
 *      embedding scatter-add sums each row in float32 and rounds; the tied
 *      embedding's gradient is bf16(head part + embedding part), added to
 *      the bf16 .grad with a bf16 rounding (tok_emb.grad is bf16).
 * torch.compile (the official run compiles the model) may fuse elementwise
 * ops; this reproduces eager autocast, the behaviour compilation preserves
 * up to fusion-internal precision.
 *
 * Determinism: every kernel computes each output in one thread in a fixed
 * order, so forward and backward are bit-identical for any thread count. */
#include "trainer/gpt.h"
#include "trainer/gpt_internal.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/attention.h"
#include "kernels/bf16.h"
#include "kernels/embedding.h"
#include "kernels/matmul.h"
#include "kernels/matmul_split.h"
#include "kernels/q_gain.h"
#include "kernels/qk_norm.h"
#include "kernels/relu_square.h"
#include "kernels/residual_mix.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"
#include "kernels/scale_add.h"
#include "kernels/softcap_cross_entropy.h"
#include "kernels/vec_add.h"

dims gpt_dims(const gpt_layout *l, int B, int T) {
  dims d = {B * T,        l->cfg.model_dim, l->cfg.num_heads, l->cfg.num_kv_heads, l->head_dim,
            l->kv_dim,    l->hidden,        l->cfg.vocab_size, l->cfg.num_layers, l->num_encoder};
  return d;
}

/* A bump allocator over one buffer; with base NULL it only counts. */
typedef struct carver {
  float *base;
  size_t used;
} carver;

/* Each tensor starts a multiple of 16 floats (64 bytes) into the buffer,
 * so a kernel may read any of them a float4 at a time (the GPU's
 * attention stages its tiles so) and cuBLASLt sees aligned operands. */
static float *take(carver *c, size_t n) {
  c->used = (c->used + 15) / 16 * 16;
  float *r = c->base ? c->base + c->used : NULL;
  c->used += n;
  return r;
}

size_t gpt_acts_carve(gpt_acts *a, const gpt_layout *l, const dims *d, float *mem) {
  carver cv = {mem, 0}, *p = &cv;
  size_t N = (size_t)d->N, D = (size_t)d->D;
  a->wcopy = take(p, l->n_params);
  a->cos_t = take(p, (size_t)a->T * d->hd / 2);
  a->sin_t = take(p, (size_t)a->T * d->hd / 2);
  a->cos_m = take(p, (size_t)a->T * d->hd / 2);
  a->sin_m = take(p, (size_t)a->T * d->hd / 2);
  a->emb = take(p, N * D);
  a->rstd0 = take(p, N);
  a->x0 = take(p, N * D);
  a->rstdf = take(p, N);
  a->xf = take(p, N * D);
  a->z = take(p, N * d->V);
  a->th = take(p, N * d->V);
  a->lse_ce = take(p, N);
  for (int i = 0; i < d->L; i++) {
    layer_acts *la = &a->layers[i];
    la->x_in = take(p, N * D);
    la->x_mix = take(p, N * D);
    la->rstd1 = take(p, N);
    la->n1 = take(p, N * D);
    la->q_raw = take(p, N * D);
    la->k_raw = take(p, N * d->kvd);
    la->v = take(p, N * d->kvd);
    la->rstd_q = take(p, N * d->H);
    la->rstd_k = take(p, N * d->KV);
    la->q_rope = take(p, N * D);
    la->q_fin = take(p, N * D);
    la->k_fin = take(p, N * d->kvd);
    la->att = take(p, N * D);
    la->lse = take(p, N * d->H);
    la->attn_out = take(p, N * D);
    la->x_mid = take(p, N * D);
    la->rstd2 = take(p, N);
    la->n2 = take(p, N * D);
    la->h_pre = take(p, N * d->M);
    la->h_act = take(p, N * d->M);
    la->mlp_out = take(p, N * D);
    la->x_out = take(p, N * D);
  }
  a->dx = take(p, N * D);
  a->dx0 = take(p, N * D);
  a->dm = take(p, N * D);
  a->dn = take(p, N * D);
  a->dq = take(p, N * D);
  a->dk = take(p, N * d->kvd);
  a->dv = take(p, N * d->kvd);
  a->dh = take(p, N * d->M);
  a->datt = take(p, N * D);
  a->dz = take(p, N * d->V);
  a->dtok = take(p, (size_t)d->V * D);
  a->dskip = take(p, (size_t)(d->E > 0 ? d->E : 1) * N * D);
  /* The weight gradients' partials: room for the widest (the tied head's
   * V x D or the MLP's M x D) when the batch spans several chunks. */
  size_t widest = (size_t)(d->V > d->M ? d->V : d->M) * D;
  if (D * D > widest) widest = D * D;
  int chunks = matmul_split_chunks(d->N, a->split_rows);
  a->split = take(p, chunks > 1 ? (size_t)chunks * widest : 0);
  return cv.used;
}

gpt_acts *gpt_acts_new(const gpt_layout *l, int B, int T, pg_error *err) {
  if (B < 1 || T < 1 || T > l->cfg.seq_len || (long long)B * T > (1LL << 30)) {
    pg_fail(err, "model", -1, "batch %d x %d outside 1..seq_len %d", B, T, l->cfg.seq_len);
    return NULL;
  }
  gpt_acts *a = calloc(1, sizeof *a);
  if (!a) goto oom;
  a->B = B;
  a->T = T;
  a->split_rows = MATMUL_SPLIT_ROWS;
  a->layers = calloc((size_t)l->cfg.num_layers, sizeof *a->layers);
  if (!a->layers) goto oom;
  dims d = gpt_dims(l, B, T);
  size_t n = gpt_acts_carve(a, l, &d, NULL);
  a->mem = calloc(n, sizeof *a->mem);
  if (!a->mem) goto oom;
  gpt_acts_carve(a, l, &d, a->mem);
  rope_table(a->cos_t, a->sin_t, T, l->head_dim, l->cfg.rope_base, 0);
  rope_table(a->cos_m, a->sin_m, T, l->head_dim, l->cfg.rope_base, KERNEL_BF16);
  return a;
oom:
  gpt_acts_free(a);
  pg_fail(err, "model", -1, "out of memory for activations of %d x %d tokens", B, T);
  return NULL;
}

void gpt_acts_use_tree_refs(gpt_acts *a) { a->tree = 1; }

void gpt_acts_free(gpt_acts *a) {
  if (!a) return;
  free(a->mem);
  free(a->layers);
  free(a);
}

/* The weights the matmuls read: the parameters, or their bf16 copy (F1). */
static void bind_weights(gpt_params *w, const gpt_layout *l, const gpt_params *p, gpt_acts *a,
                         gpt_precision prec) {
  if (prec == GPT_FP32) {
    *w = *p; /* shares p's block table: unbind_weights leaves it alone */
    return;
  }
  /* The flat buffer starts at the first tensor (skip_weights). */
  const float *flat = p->skip_weights - l->tensors[0].offset;
  for (size_t i = 0; i < l->n_params; i++) a->wcopy[i] = bf16_round(flat[i]);
  gpt_params_bind(w, l, a->wcopy);
}

static void unbind_weights(gpt_params *w, gpt_precision prec) {
  if (prec != GPT_FP32) gpt_params_free(w);
}

/* The kernels with a reduction, by the CPU's order or the GPU's tree. */
static void rms_fwd(const gpt_acts *a, float *y, float *rstd, const float *x, int rows, int d,
                    int flags) {
  (a->tree ? rmsnorm_forward_tree_ref : rmsnorm_forward)(y, rstd, x, rows, d, flags);
}

static void rms_bwd(const gpt_acts *a, float *dx, const float *dy, const float *x,
                    const float *rstd, int rows, int d, int flags) {
  (a->tree ? rmsnorm_backward_tree_ref : rmsnorm_backward)(dx, dy, x, rstd, rows, d, flags);
}

static void scale_add_bwd(const gpt_acts *a, float *dy, float *ds, const float *dout,
                          const float *s, const float *y, int rows, int d, int flags) {
  (a->tree ? scale_add_backward_tree_ref : scale_add_backward)(dy, ds, dout, s, y, rows, d, flags);
}

static void mix_bwd(const gpt_acts *a, float *dx, float *dx0, float *dmix, const float *dout,
                    const float *x, const float *x0, const float *mix, int rows, int d) {
  (a->tree ? residual_mix_backward_tree_ref : residual_mix_backward)(dx, dx0, dmix, dout, x, x0,
                                                                      mix, rows, d, 0);
}

/* q_gain's dg alone (qk_norm_backward applies the gain to dq). */
static void q_gain_dg(const gpt_acts *a, float *dg, const float *dy, const float *q, const float *g,
                      int rows, int heads, int hd) {
  (a->tree ? q_gain_backward_tree_ref : q_gain_backward)(NULL, dg, dy, q, g, rows, heads, hd, 0);
}

static float ce_fwd(const gpt_acts *a, float *nll, const uint16_t *y, int N, int V, float cap,
                    int flags) {
  return (a->tree ? softcap_cross_entropy_forward_tree_ref : softcap_cross_entropy_forward)(
      a->th, a->lse_ce, nll, a->z, y, N, V, cap, flags);
}

static void block_forward(const dims *d, const gpt_block_params *bp, const gpt_block_params *bw,
                          layer_acts *la, gpt_acts *a, int T, int mixed) {
  const int N = d->N, D = d->D, fb = mixed ? KERNEL_BF16 : 0;
  residual_mix_forward(la->x_mix, la->x_in, a->x0, bp->resid_mix, N, D, 0);
  rms_fwd(a, la->n1, la->rstd1, la->x_mix, N, D, fb); /* F2: n1 cast for the linears */
  matmul_forward(la->q_raw, la->n1, bw->c_q, N, D, D, fb);
  matmul_forward(la->k_raw, la->n1, bw->c_k, N, D, d->kvd, fb);
  matmul_forward(la->v, la->n1, bw->c_v, N, D, d->kvd, fb);
  /* q, k per-head norm (float32), RoPE, gain; dq/dk are free scratch now. */
  const float *rc = mixed ? a->cos_m : a->cos_t, *rs = mixed ? a->sin_m : a->sin_t;
  /* F4: q and k cast as they are stored; the norms' sums by the GPU's
   * tree when asked (KERNEL_TREE). */
  const int f4 = (mixed ? KERNEL_ROUND_OUT : 0) | (a->tree ? KERNEL_TREE : 0);
  qk_norm_forward(la->q_rope, la->q_fin, la->rstd_q, la->q_raw, bp->q_gain, rc, rs, N, T, d->H,
                  d->hd, f4, a->dq);
  qk_norm_forward(NULL, la->k_fin, la->rstd_k, la->k_raw, NULL, rc, rs, N, T, d->KV, d->hd, f4,
                  a->dk);
  attention_forward(la->att, la->lse, la->q_fin, la->k_fin, la->v, N / T, T, d->H, d->KV, d->hd,
                    fb);
  matmul_forward(la->attn_out, la->att, bw->attn_proj, N, D, D, fb);
  scale_add_forward(la->x_mid, la->x_mix, bp->attn_scale, la->attn_out, N, D, 0);
  rms_fwd(a, la->n2, la->rstd2, la->x_mid, N, D, fb);
  matmul_forward(la->h_pre, la->n2, bw->fc, N, D, d->M, fb);
  relu_square_forward(la->h_act, la->h_pre, (size_t)N * d->M, fb); /* F2/F5 */
  matmul_forward(la->mlp_out, la->h_act, bw->mlp_proj, N, d->M, D, fb);
  scale_add_forward(la->x_out, la->x_mid, bp->mlp_scale, la->mlp_out, N, D, 0);
}

float gpt_forward(const gpt_layout *l, const gpt_params *p, gpt_acts *a, const uint16_t *x,
                  const uint16_t *y, int B, int T, gpt_precision prec, float *nll_out) {
  const dims d = gpt_dims(l, B, T);
  const int mixed = prec == GPT_MIXED, fb = mixed ? KERNEL_BF16 : 0;
  const size_t ND = (size_t)d.N * d.D;
  gpt_params w;
  bind_weights(&w, l, p, a, prec);
  embedding_forward(a->emb, w.tok_emb, x, d.N, d.D);
  rms_fwd(a, a->x0, a->rstd0, a->emb, d.N, d.D, 0);
  const float *cur = a->x0;
  for (int i = 0; i < d.L; i++) {
    layer_acts *la = &a->layers[i];
    int dec = i - d.E; /* decoder index, or negative */
    if (dec >= 0 && dec < l->num_skip)
      scale_add_forward(la->x_in, cur, p->skip_weights + (size_t)dec * d.D,
                        a->layers[d.E - 1 - dec].x_out, d.N, d.D, 0);
    else
      memcpy(la->x_in, cur, ND * sizeof *cur);
    block_forward(&d, &p->blocks[i], &w.blocks[i], la, a, T, mixed);
    cur = la->x_out;
  }
  rms_fwd(a, a->xf, a->rstdf, cur, d.N, d.D, fb);
  matmul_forward(a->z, a->xf, w.tok_emb, d.N, d.D, d.V, fb);
  float loss = ce_fwd(a, nll_out, y, d.N, d.V, l->cfg.logit_softcap, fb);
  unbind_weights(&w, prec);
  return loss;
}

/* dx: gradient of the block's output on entry, of its input x_in on exit. */
/* dw (+)= dy^T x (matmul_backward_weight's flags): with the GPU's trees
 * and a batch of several chunks, split as the GPU splits it
 * (kernels/matmul_split.h); otherwise one sum per element. */
static void mm_bw(const gpt_acts *a, float *dw, const float *dy, const float *x, int n, int in,
                  int out, int flags) {
  if (a->tree && matmul_split_chunks(n, a->split_rows) > 1)
    matmul_backward_weight_split(dw, dy, x, n, in, out, flags, a->split_rows, a->split);
  else
    matmul_backward_weight(dw, dy, x, n, in, out, flags);
}

static void block_backward(const dims *d, const gpt_block_params *bp, const gpt_block_params *bw,
                           gpt_block_params *g, layer_acts *la, gpt_acts *a, int T, int mixed) {
  const int N = d->N, D = d->D, fb = mixed ? KERNEL_BF16 : 0;
  const int facc = KERNEL_ACCUMULATE | KERNEL_OUT_FP32 | fb; /* B2: into float32 .grad */
  /* x_out = x_mid + mlp_scale * mlp_out */
  const int b3 = mixed ? KERNEL_ROUND_OUT : 0; /* B3: dm cast as it is stored */
  scale_add_bwd(a, a->dm, g->mlp_scale, a->dx, bp->mlp_scale, la->mlp_out, N, D, b3);
  matmul_backward_input(a->dh, a->dm, bw->mlp_proj, N, d->M, D, fb);
  mm_bw(a, g->mlp_proj, a->dm, la->h_act, N, d->M, D, facc);
  relu_square_backward(a->dh, a->dh, la->h_pre, (size_t)N * d->M, fb); /* B5 */
  matmul_backward_input(a->dn, a->dh, bw->fc, N, D, d->M, fb);
  mm_bw(a, g->fc, a->dh, la->n2, N, D, d->M, facc);
  rms_bwd(a, a->dx, a->dn, la->x_mid, la->rstd2, N, D, KERNEL_ACCUMULATE);
  /* x_mid = x_mix + attn_scale * attn_out */
  scale_add_bwd(a, a->dm, g->attn_scale, a->dx, bp->attn_scale, la->attn_out, N, D, b3);
  matmul_backward_input(a->datt, a->dm, bw->attn_proj, N, D, D, fb);
  mm_bw(a, g->attn_proj, a->dm, la->att, N, D, D, facc);
  attention_backward(a->dq, a->dk, a->dv, a->datt, la->att, la->lse, la->q_fin, la->k_fin, la->v,
                     N / T, T, d->H, d->KV, d->hd, fb);
  q_gain_dg(a, g->q_gain, a->dq, la->q_rope, bp->q_gain, N, d->H, d->hd);
  const float *rc = mixed ? a->cos_m : a->cos_t, *rs = mixed ? a->sin_m : a->sin_t;
  const int b4 = fb | (a->tree ? KERNEL_TREE : 0); /* B4 */
  qk_norm_backward(a->dq, a->dq, la->q_raw, la->rstd_q, bp->q_gain, rc, rs, N, T, d->H, d->hd, b4,
                   a->dq);
  qk_norm_backward(a->dk, a->dk, la->k_raw, la->rstd_k, NULL, rc, rs, N, T, d->KV, d->hd, b4,
                   a->dk);
  matmul_backward_input(a->dn, a->dq, bw->c_q, N, D, D, fb);
  matmul_backward_input(a->dn, a->dk, bw->c_k, N, D, d->kvd, facc);
  matmul_backward_input(a->dn, a->dv, bw->c_v, N, D, d->kvd, facc);
  mm_bw(a, g->c_q, a->dq, la->n1, N, D, D, facc);
  mm_bw(a, g->c_k, a->dk, la->n1, N, D, d->kvd, facc);
  mm_bw(a, g->c_v, a->dv, la->n1, N, D, d->kvd, facc);
  rms_bwd(a, a->dx, a->dn, la->x_mix, la->rstd1, N, D, KERNEL_ACCUMULATE);
  /* x_mix = mix0 * x_in + mix1 * x0 */
  mix_bwd(a, a->dx, a->dx0, g->resid_mix, a->dx, la->x_in, a->x0, bp->resid_mix, N, D);
}

void gpt_backward(const gpt_layout *l, const gpt_params *p, gpt_params *grads, gpt_acts *a,
                  const uint16_t *x, const uint16_t *y, int B, int T, gpt_precision prec,
                  float loss_scale) {
  const dims d = gpt_dims(l, B, T);
  const int mixed = prec == GPT_MIXED, fb = mixed ? KERNEL_BF16 : 0;
  const size_t ND = (size_t)d.N * d.D;
  gpt_params w;
  /* The forward filled wcopy; bind it again without recomputing. */
  if (mixed)
    gpt_params_bind(&w, l, a->wcopy);
  else
    bind_weights(&w, l, p, a, prec);
  softcap_cross_entropy_backward(a->dz, a->th, a->lse_ce, y, d.N, d.V, l->cfg.logit_softcap,
                                 loss_scale, fb);
  matmul_backward_input(a->dm, a->dz, w.tok_emb, d.N, d.D, d.V, fb);
  mm_bw(a, a->dtok, a->dz, a->xf, d.N, d.D, d.V, fb);
  const float *x_last = a->layers[d.L - 1].x_out;
  rms_bwd(a, a->dx, a->dm, x_last, a->rstdf, d.N, d.D, 0);
  memset(a->dx0, 0, ND * sizeof *a->dx0);
  memset(a->dskip, 0, (size_t)(d.E > 0 ? d.E : 1) * ND * sizeof *a->dskip);
  for (int i = d.L - 1; i >= 0; i--) {
    layer_acts *la = &a->layers[i];
    if (i < d.E) /* an encoder output: its skip gradient joins the stream's */
      vec_add(a->dx, a->dskip + (size_t)i * ND, ND, 0);
    block_backward(&d, &p->blocks[i], &w.blocks[i], &grads->blocks[i], la, a, T, mixed);
    int dec = i - d.E;
    if (dec >= 0 && dec < l->num_skip) {
      int src = d.E - 1 - dec;
      scale_add_bwd(a, a->dskip + (size_t)src * ND, grads->skip_weights + (size_t)dec * d.D, a->dx,
                    p->skip_weights + (size_t)dec * d.D, a->layers[src].x_out, d.N, d.D,
                    KERNEL_ACCUMULATE);
    }
  }
  /* x0 is block 0's stream input too. */
  vec_add(a->dx0, a->dx, ND, 0);
  rms_bwd(a, a->dm, a->dx0, a->emb, a->rstd0, d.N, d.D, fb); /* B6 */
  embedding_backward(a->dtok, a->dm, x, d.N, d.V, d.D, KERNEL_ACCUMULATE | fb);
  vec_add(grads->tok_emb, a->dtok, (size_t)d.V * d.D, fb);
  unbind_weights(&w, prec);
}

const float *gpt_acts_tensor(const gpt_acts *a, const gpt_layout *l, int layer, const char *name,
                             int B, int T, size_t *n) {
  const dims d = gpt_dims(l, B, T);
  const size_t N = (size_t)d.N;
  struct {
    const char *name;
    const float *p;
    size_t width;
  } global[] = {{"emb", a->emb, d.D}, {"x0", a->x0, d.D}, {"xf", a->xf, d.D}, {"z", a->z, d.V}};
  for (size_t i = 0; i < sizeof global / sizeof global[0]; i++)
    if (!strcmp(name, global[i].name)) {
      *n = N * global[i].width;
      return global[i].p;
    }
  if (layer < 0 || layer >= d.L) return NULL;
  const layer_acts *la = &a->layers[layer];
  struct {
    const char *name;
    const float *p;
    size_t width;
  } per[] = {{"x_in", la->x_in, d.D},       {"x_mix", la->x_mix, d.D},
             {"n1", la->n1, d.D},           {"q_raw", la->q_raw, d.D},
             {"k_raw", la->k_raw, d.kvd},   {"v", la->v, d.kvd},
             {"q_rope", la->q_rope, d.D},   {"q_fin", la->q_fin, d.D},
             {"k_fin", la->k_fin, d.kvd},   {"att", la->att, d.D},
             {"attn_out", la->attn_out, d.D}, {"x_mid", la->x_mid, d.D},
             {"n2", la->n2, d.D},           {"h_pre", la->h_pre, d.M},
             {"h_act", la->h_act, d.M},     {"mlp_out", la->mlp_out, d.D},
             {"x_out", la->x_out, d.D}};
  for (size_t i = 0; i < sizeof per / sizeof per[0]; i++)
    if (!strcmp(name, per[i].name)) {
      *n = N * per[i].width;
      return per[i].p;
    }
  return NULL;
}
