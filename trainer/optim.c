#include "trainer/optim.h"

#include <math.h>

void optim_hparams_default(optim_hparams *h) {
  *h = (optim_hparams){
      .embed_lr = 0.6,
      .head_lr = 0.008,
      .tied_embed_lr = 0.05,
      .matrix_lr = 0.04,
      .scalar_lr = 0.04,
      .beta1 = 0.9,
      .beta2 = 0.95,
      .adam_eps = 1e-8,
      .muon_momentum = 0.95,
      .muon_backend_steps = 5,
      .muon_momentum_warmup_start = 0.85,
      .muon_momentum_warmup_steps = 500,
      .grad_clip_norm = 0.0,
      .iterations = 20000,
      .warmdown_iters = 1200,
  };
}

static int check_rate(double v, const char *name, pg_error *err) {
  if (!isfinite(v) || v < 0.0)
    return pg_fail(err, "config", -1, "%s must be finite and >= 0, got %g", name, v);
  return 0;
}

static int check_unit(double v, const char *name, pg_error *err) {
  if (!(v >= 0.0 && v < 1.0)) return pg_fail(err, "config", -1, "%s must be in [0, 1), got %g", name, v);
  return 0;
}

int optim_hparams_check(const optim_hparams *h, pg_error *err) {
  if (check_rate(h->embed_lr, "embed_lr", err) || check_rate(h->head_lr, "head_lr", err) ||
      check_rate(h->tied_embed_lr, "tied_embed_lr", err) ||
      check_rate(h->matrix_lr, "matrix_lr", err) || check_rate(h->scalar_lr, "scalar_lr", err) ||
      check_rate(h->grad_clip_norm, "grad_clip_norm", err))
    return -1;
  if (check_unit(h->beta1, "beta1", err) || check_unit(h->beta2, "beta2", err) ||
      check_unit(h->muon_momentum, "muon_momentum", err) ||
      check_unit(h->muon_momentum_warmup_start, "muon_momentum_warmup_start", err))
    return -1;
  if (!isfinite(h->adam_eps) || !(h->adam_eps > 0.0))
    return pg_fail(err, "config", -1, "adam_eps must be finite and > 0, got %g", h->adam_eps);
  if (h->muon_backend_steps < 1 || h->muon_backend_steps > 100)
    return pg_fail(err, "config", -1, "muon_backend_steps %d outside [1, 100]",
                   h->muon_backend_steps);
  if (h->muon_momentum_warmup_steps < 0)
    return pg_fail(err, "config", -1, "muon_momentum_warmup_steps must be >= 0, got %d",
                   h->muon_momentum_warmup_steps);
  if (h->iterations < 1) return pg_fail(err, "config", -1, "iterations must be >= 1");
  if (h->warmdown_iters < 0) return pg_fail(err, "config", -1, "warmdown_iters must be >= 0");
  return 0;
}
