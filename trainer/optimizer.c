#include "trainer/optimizer.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/bf16.h"
#include "kernels/flags.h"
#include "trainer/adam.h"
#include "trainer/clip.h"
#include "trainer/muon.h"
#include "trainer/schedule.h"

static int is_muon(const gpt_tensor *t) { return t->group == GPT_GROUP_MATRIX; }

int optimizer_init(optimizer *o, const gpt_layout *l, const optim_hparams *hp, pg_error *err) {
  memset(o, 0, sizeof *o);
  if (optim_hparams_check(hp, err)) return -1;
  o->hp = *hp;
  o->state_off = calloc((size_t)l->n_tensors, sizeof *o->state_off);
  if (!o->state_off) goto oom;
  size_t work = 0;
  for (int i = 0; i < l->n_tensors; i++) {
    const gpt_tensor *t = &l->tensors[i];
    if (is_muon(t)) {
      if (t->ndim != 2) return optimizer_free(o), pg_fail(err, t->name, -1, "Muon needs a matrix");
      o->state_off[i] = o->n_muon;
      o->n_muon += t->numel;
      size_t w = muon_work_floats(t->rows, t->cols);
      if (w > work) work = w;
    } else {
      o->state_off[i] = o->n_adam;
      o->n_adam += t->numel;
    }
  }
  /* calloc(0) may return NULL: allocate at least one element. */
  o->adam_m = calloc(o->n_adam + 1, sizeof(float));
  o->adam_v = calloc(o->n_adam + 1, sizeof(float));
  o->muon_buf = calloc(o->n_muon + 1, sizeof(float));
  o->work = malloc((work + 1) * sizeof(float));
  if (!o->adam_m || !o->adam_v || !o->muon_buf || !o->work) goto oom;
  return 0;
oom:
  optimizer_free(o);
  return pg_fail(err, "optimizer", -1, "out of memory for the optimizer state");
}

void optimizer_free(optimizer *o) {
  free(o->state_off);
  free(o->adam_m);
  free(o->adam_v);
  free(o->muon_buf);
  free(o->work);
  free(o->muon_u);
  memset(o, 0, sizeof *o);
}

int optimizer_state(optimizer *o, optimizer_state_array out[OPTIMIZER_N_STATE]) {
  out[0] = (optimizer_state_array){"optim.adam.exp_avg", o->adam_m, o->n_adam};
  out[1] = (optimizer_state_array){"optim.adam.exp_avg_sq", o->adam_v, o->n_adam};
  out[2] = (optimizer_state_array){"optim.muon.momentum", o->muon_buf, o->n_muon};
  out[3] = (optimizer_state_array){"optim.adam.step", &o->adam_step, 1};
  return OPTIMIZER_N_STATE;
}

int optimizer_save(optimizer *o, checkpoint *c, pg_error *err) {
  optimizer_state_array s[OPTIMIZER_N_STATE];
  int n = optimizer_state(o, s);
  for (int i = 0; i < n; i++)
    if (ckpt_add(c, s[i].name, CKPT_F32, s[i].data, s[i].n, err)) return -1;
  return 0;
}

int optimizer_load(optimizer *o, const checkpoint *c, const char *file, pg_error *err) {
  optimizer_state_array s[OPTIMIZER_N_STATE];
  int n = optimizer_state(o, s);
  for (int i = 0; i < n; i++)
    if (ckpt_get(c, file, s[i].name, CKPT_F32, s[i].n, s[i].data, err)) return -1;
  return 0;
}

static double adam_base_lr(const optim_hparams *hp, const gpt_tensor *t) {
  return t->group == GPT_GROUP_EMBED ? hp->tied_embed_lr : hp->scalar_lr;
}

/* Adam on layout tensor i. */
static void adam_tensor(optimizer *o, const gpt_layout *l, int i, float *params, const float *grads,
                        double lr_mult, gpt_precision prec) {
  const optim_hparams *hp = &o->hp;
  const gpt_tensor *t = &l->tensors[i];
  adam_coeffs c;
  adam_coeffs_init(&c, adam_base_lr(hp, t) * lr_mult, hp->beta1, hp->beta2, hp->adam_eps, o->adam_step);
  adam_update(params + t->offset, grads + t->offset, o->adam_m + o->state_off[i], o->adam_v + o->state_off[i],
              t->numel, &c, clip_tensor_is_bf16(t, prec) ? KERNEL_BF16 : 0);
}

/* What every step starts with: bf16 gradients rounded, clipping, the
 * momentum of this step, Adam's step count. Returns the norm (or 0). */
static float step_prologue(optimizer *o, const gpt_layout *l, float *grads, int64_t step, gpt_precision prec,
                           double *momentum) {
  const optim_hparams *hp = &o->hp;
  /* A bf16 parameter's .grad is a bf16 tensor. */
  for (int i = 0; i < l->n_tensors; i++)
    if (clip_tensor_is_bf16(&l->tensors[i], prec))
      bf16_round_array(grads + l->tensors[i].offset, l->tensors[i].numel);
  float norm = 0.0f;
  if (hp->grad_clip_norm > 0.0)
    norm = clip_grad_norm_tree(grads, l, hp->grad_clip_norm, prec, o->tree);
  *momentum = schedule_muon_momentum(step, hp->muon_momentum_warmup_start, hp->muon_momentum,
                                     hp->muon_momentum_warmup_steps);
  o->adam_step += 1.0f; /* torch: state["step"] += 1 before the update */
  return norm;
}

float optimizer_step(optimizer *o, const gpt_layout *l, float *params, float *grads, int64_t step,
                     double lr_mult, gpt_precision prec) {
  const optim_hparams *hp = &o->hp;
  double momentum;
  float norm = step_prologue(o, l, grads, step, prec, &momentum);
  int ns_flags = (prec == GPT_MIXED ? KERNEL_BF16 : 0) | (o->tree ? KERNEL_TREE : 0);
  for (int i = 0; i < l->n_tensors; i++) {
    const gpt_tensor *t = &l->tensors[i];
    float *p = params + t->offset;
    float *g = grads + t->offset;
    if (is_muon(t))
      muon_update(p, g, o->muon_buf + o->state_off[i], t->rows, t->cols, momentum,
                  hp->matrix_lr * lr_mult, hp->muon_backend_steps, ns_flags, o->work);
    else
      adam_tensor(o, l, i, params, grads, lr_mult, prec);
  }
  return norm;
}

int optimizer_step_sharded(optimizer *o, const gpt_layout *l, float *params, float *grads, int64_t step,
                           double lr_mult, gpt_precision prec, const optimizer_shard *sh, float *norm,
                           pg_error *err) {
  const optim_hparams *hp = &o->hp;
  if (!o->muon_u && !(o->muon_u = malloc((o->n_muon + 1) * sizeof(float))))
    return pg_fail(err, "optimizer", -1, "out of memory for Muon's updates");
  double momentum;
  *norm = step_prologue(o, l, grads, step, prec, &momentum);
  int ns_flags = (prec == GPT_MIXED ? KERNEL_BF16 : 0) | (o->tree ? KERNEL_TREE : 0);
  for (int i = 0, j = 0; i < l->n_tensors; i++) {
    const gpt_tensor *t = &l->tensors[i];
    if (!is_muon(t)) continue;
    int owner = j++ % sh->world;
    float *buf = o->muon_buf + o->state_off[i], *g = grads + t->offset;
    if (owner >= sh->first_rank && owner < sh->first_rank + sh->n_local)
      muon_direction(o->muon_u + o->state_off[i], g, buf, t->rows, t->cols, momentum, hp->muon_backend_steps,
                     ns_flags, o->work);
    else
      muon_momentum(buf, g, t->numel, momentum);
  }
  if (sh->gather(sh->ctx, o->muon_u, err) != 0) return -1;
  for (int i = 0; i < l->n_tensors; i++) {
    const gpt_tensor *t = &l->tensors[i];
    if (is_muon(t))
      muon_apply(params + t->offset, o->muon_u + o->state_off[i], t->numel, hp->matrix_lr * lr_mult);
    else
      adam_tensor(o, l, i, params, grads, lr_mult, prec);
  }
  return 0;
}
