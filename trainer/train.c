/* The training run: setup, the budget plan, and the official loop. */
#include "trainer/train.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/grow.h"
#include "common/json_read.h"
#include "manifests/loss_chain.h"
#include "trainer/model_init.h"
#include "trainer/schedule.h"
#include "formats/tokenizer.h"
#include "kernels/matmul.h"
#include "trainer/train_internal.h"

double trainer_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int trainer_add_record(trainer *t, uint64_t step, float loss, float lr_mult, double wall_ms) {
  if (PG_GROW(t->recs, t->cap_recs, t->n_recs + 1, 256)) return -1;
  loss_record *r = &t->recs[t->n_recs++];
  memset(r, 0, sizeof *r);
  r->step = step;
  memcpy(&r->loss_bits, &loss, 4);
  memcpy(&r->lr_mult_bits, &lr_mult, 4);
  r->wall_ms = wall_ms;
  r->has_lr_mult = r->has_wall_ms = 1;
  loss_chain_extend(t->chain, step, r->loss_bits);
  return 0;
}

/* The log: the file and the echo are process 0's; the other processes
 * keep the text in memory only. */
int trainer_open_log(trainer *t, const char *prior, size_t prior_len, pg_error *err) {
  int root = t->comm->rank == 0;
  return train_log_open(&t->log, root ? t->path_buf[PATH_LOG] : NULL, prior, prior_len, root ? t->o->echo : NULL,
                        err);
}

/* ---- setup ---- */

static int make_dir(const char *dir, pg_error *err) {
  if (mkdir(dir, 0755) == 0 || errno == EEXIST) {
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
  }
  return pg_fail_errno(err, dir, "cannot create the output directory");
}

/* The official script refuses a tokenizer whose vocabulary differs. */
static int check_tokenizer(const train_config *c, pg_error *err) {
  sp_model sp;
  if (sp_model_load(c->tokenizer, &sp, err) != 0) return -1;
  uint32_t n = sp.n_pieces;
  sp_model_free(&sp);
  if ((int)n != c->model.vocab_size)
    return pg_fail(err, c->tokenizer, -1, "tokenizer has %u pieces but vocab_size is %d", n,
                   c->model.vocab_size);
  return 0;
}

static int set_paths(trainer *t, const char *dir, pg_error *err) {
  static const char *names[5] = {TRAIN_CHECKPOINT_NAME, TRAIN_ARTIFACT_NAME, TRAIN_MANIFEST_NAME,
                                 TRAIN_LOG_NAME, TRAIN_LOSSES_NAME};
  if (strlen(dir) > 1000) return pg_fail(err, dir, -1, "output directory path too long");
  for (int i = 0; i < 5; i++) snprintf(t->path_buf[i], sizeof t->path_buf[i], "%s/%s", dir, names[i]);
  return make_dir(dir, err);
}

/* Process of Muon matrix j: its owner rank j % world lives on process
 * rank / ranks_per_process. */
static int muon_process(const trainer *t, int j) { return j % t->cfg.world_size / t->n_local; }

/* Muon's exchange (optimizer_shard.gather): this process's matrices'
 * updates packed in matrix order, all-gathered, each process's unpacked to
 * its matrices' places. */
static int muon_gather(void *ctx, float *u, pg_error *err) {
  trainer *t = ctx;
  double t0 = trainer_now_ms();
  size_t pos = 0;
  for (int i = 0, j = 0; i < t->l.n_tensors; i++) {
    const gpt_tensor *m = &t->l.tensors[i];
    if (m->group != GPT_GROUP_MATRIX) continue;
    if (muon_process(t, j++) == t->comm->rank) {
      memcpy(t->mu_send + pos, u + t->opt.state_off[i], m->numel * sizeof(float));
      pos += m->numel;
    }
  }
  if (comm_allgatherv_f32(t->comm, t->mu_send, t->mu_recv, t->mu_count, t->mu_displ, err) != 0) return -1;
  for (int q = 0; q < t->comm->size; q++) {
    pos = (size_t)t->mu_displ[q];
    for (int i = 0, j = 0; i < t->l.n_tensors; i++) {
      const gpt_tensor *m = &t->l.tensors[i];
      if (m->group != GPT_GROUP_MATRIX) continue;
      if (muon_process(t, j++) != q) continue;
      if (q != t->comm->rank) memcpy(u + t->opt.state_off[i], t->mu_recv + pos, m->numel * sizeof(float));
      pos += m->numel;
    }
  }
  t->exchange_ms += trainer_now_ms() - t0;
  return 0;
}

/* Over several processes each computes its ranks' Muon matrices only
 * (optimizer.h, optimizer_shard), the official exchange being a gather. */
static int setup_muon_shard(trainer *t, pg_error *err) {
  int P = t->comm->size;
  t->mu_count = calloc((size_t)P * 2, sizeof(int));
  t->mu_send = malloc((t->opt.n_muon + 1) * sizeof(float));
  t->mu_recv = malloc((t->opt.n_muon + 1) * sizeof(float));
  if (!t->mu_count || !t->mu_send || !t->mu_recv) return pg_fail(err, "", -1, "out of memory");
  t->mu_displ = t->mu_count + P;
  for (int i = 0, j = 0; i < t->l.n_tensors; i++)
    if (t->l.tensors[i].group == GPT_GROUP_MATRIX) t->mu_count[muon_process(t, j++)] += (int)t->l.tensors[i].numel;
  for (int q = 1; q < P; q++) t->mu_displ[q] = t->mu_displ[q - 1] + t->mu_count[q - 1];
  t->shard = (optimizer_shard){t->cfg.world_size, t->first_rank, t->n_local, muon_gather, t};
  return 0;
}

/* This process's share of the world: world_size / processes consecutive
 * ranks, each with its own place in the stream (all start at the
 * beginning) and, for a world above 1, its own gradient. */
static int setup_ranks(trainer *t, pg_error *err) {
  t->comm = t->o->comm ? t->o->comm : &t->solo;
  t->solo.size = t->solo.local_size = 1;
  t->solo.timeout_s = COMM_DEFAULT_TIMEOUT_S;
  int W = t->cfg.world_size, P = t->comm->size;
  if (W % P != 0)
    return pg_fail(err, "", -1, "world_size %d is not a multiple of the %d processes (each process runs "
                                "world_size / processes ranks)", W, P);
  t->n_local = W / P;
  t->first_rank = t->comm->rank * t->n_local;
  size_t n = t->l.n_params;
  t->rank_ls = calloc((size_t)t->n_local, sizeof *t->rank_ls);
  t->all_ls = calloc((size_t)W * 3, sizeof *t->all_ls);
  if (!t->rank_ls || !t->all_ls) return pg_fail(err, "", -1, "out of memory");
  for (int l = 0; l < t->n_local; l++) loader_get_state(&t->loader, &t->rank_ls[l]);
  /* On the GPU the ranks' gradients and their combination stay on the
   * device (train_cuda.c), and every process steps the whole optimizer. */
  if (W == 1 || t->o->device_cuda) return 0;
  t->rank_grads = calloc(n * (size_t)t->n_local, sizeof(float));
  t->rank_g = calloc((size_t)t->n_local, sizeof *t->rank_g);
  if (!t->rank_grads || !t->rank_g) return pg_fail(err, "", -1, "out of memory for %d ranks' gradients", t->n_local);
  for (int l = 0; l < t->n_local; l++) gpt_params_bind(&t->rank_g[l], &t->l, t->rank_grads + (size_t)l * n);
  if (grad_exchange_init(&t->gx, t->comm, t->n_local, n, err) != 0) return -1;
  return P > 1 ? setup_muon_shard(t, err) : 0;
}

static int setup(trainer *t, const train_options *o, pg_error *err) {
  t->o = o;
  t->cfg = o->cfg;
  t->prec = t->cfg.precision == TRAIN_MIXED ? GPT_MIXED : GPT_FP32;
  loss_chain_init(t->chain);
  if (t->cfg.threads > 0) omp_set_num_threads(t->cfg.threads);
  if (!t->cfg.data[0] || !t->cfg.tokenizer[0])
    return pg_fail(err, "config", -1, "no %s given", !t->cfg.data[0] ? "data directory" : "tokenizer");
  if (check_tokenizer(&t->cfg, err) != 0 || set_paths(t, o->out_dir, err) != 0) return -1;
  if (gpt_layout_init(&t->l, &t->cfg.model, err) != 0) return -1;
  t->T = t->cfg.model.seq_len;
  t->B = train_config_micro_batch(&t->cfg);
  size_t n = t->l.n_params, bt = (size_t)t->B * (size_t)t->T;
  t->params = calloc(n, sizeof(float));
  t->grads = calloc(n, sizeof(float));
  t->x = malloc(bt * sizeof(uint16_t));
  t->y = malloc(bt * sizeof(uint16_t));
  t->evals = json_array();
  if (!t->params || !t->grads || !t->x || !t->y || !t->evals) return pg_fail(err, "", -1, "out of memory");
  gpt_params_bind(&t->p, &t->l, t->params);
  gpt_params_bind(&t->g, &t->l, t->grads);
  if (!(t->acts = gpt_acts_new(&t->l, t->B, t->T, err))) return -1;
  if (optimizer_init(&t->opt, &t->l, &t->cfg.opt, err) != 0) return -1;
  if (loader_open(&t->loader, t->cfg.data, "fineweb_train_", (uint32_t)t->cfg.model.vocab_size, err) != 0)
    return -1;
  if (setup_ranks(t, err) != 0) return -1;
  if (o->device_cuda) return trainer_gpu_open(t, err);
  /* Test-only (README): the CPU sums by the GPU's trees, so a CUDA run's
   * chain can be required to equal this one where the products agree. */
  const char *trees = getenv("PGOLF_TEST_GPU_TREES");
  if (trees && !strcmp(trees, "1")) {
    gpt_acts_use_tree_refs(t->acts);
    t->opt.tree = 1;
    t->gpu_trees = 1;
  }
  return 0;
}

/* failed: the run ends in an error (its processes are about to be stopped). */
static void teardown(trainer *t, int failed) {
  trainer_gpu_close(t, failed);
  free(t->params);
  free(t->grads);
  free(t->x);
  free(t->y);
  free(t->recs);
  gpt_params_free(&t->p);
  gpt_params_free(&t->g);
  if (t->acts) gpt_acts_free(t->acts);
  optimizer_free(&t->opt);
  loader_close(&t->loader);
  for (int l = 0; t->rank_g && l < t->n_local; l++) gpt_params_free(&t->rank_g[l]);
  free(t->rank_g);
  free(t->rank_grads);
  free(t->rank_ls);
  free(t->all_ls);
  grad_exchange_free(&t->gx);
  free(t->mu_count);
  free(t->mu_send);
  free(t->mu_recv);
  trainer_close_val(t);
  gpt_layout_free(&t->l);
  json_decref(t->init);
  json_decref(t->plan);
  json_decref(t->evals);
}

/* ---- one step ---- */

/* One rank's part of the official step: zero its gradient, then
 * grad_accum micro-steps of forward and (loss * grad_scale).backward() on
 * its span of the stream; *loss is the float32 mean of the micro-step
 * losses. */
static int rank_step(trainer *t, int l, gpt_params *g, float *grad, float *loss, pg_error *err) {
  const train_config *c = &t->cfg;
  int G = c->grad_accum_steps;
  float grad_scale = (float)(1.0 / G), sum = 0.0f;
  memset(grad, 0, t->l.n_params * sizeof(float));
  if (loader_set_state(&t->loader, &t->rank_ls[l], err) != 0) return -1;
  for (int k = 0; k < G; k++) {
    if (loader_next_batch(&t->loader, (uint64_t)c->train_batch_tokens, t->T, G, t->first_rank + l,
                          c->world_size, t->x, t->y, err) != 0)
      return -1;
    float lk = gpt_forward(&t->l, &t->p, t->acts, t->x, t->y, t->B, t->T, t->prec, NULL);
    sum += lk;
    gpt_backward(&t->l, &t->p, g, t->acts, t->x, t->y, t->B, t->T, t->prec, grad_scale);
  }
  loader_get_state(&t->loader, &t->rank_ls[l]);
  *loss = sum / (float)G;
  return 0;
}

/* The official step over the world: every local rank's part, the
 * gradients combined in rank order (grad_sum.h; world 1 accumulates in
 * place, as before; on the GPU the same expression by train_cuda.c), then
 * every optimizer. The loss is rank 0's, as the
 * official master process logs its own; process 0 holds rank 0 and hands
 * its bits to the others with the heartbeat. */
static int train_step(trainer *t, double lr_mult, float *loss_out, pg_error *err) {
  int W = t->cfg.world_size;
  size_t n = t->l.n_params;
  float loss0 = 0.0f;
  for (int l = 0; l < t->n_local; l++) {
    float lk;
    int rc = t->gpu ? trainer_gpu_rank_step(t, l, &lk, err)
                    : rank_step(t, l, W == 1 ? &t->g : &t->rank_g[l],
                                W == 1 ? t->grads : t->rank_grads + (size_t)l * n, &lk, err);
    if (rc != 0) return -1;
    if (l == 0) loss0 = lk;
  }
  double t0 = trainer_now_ms();
  uint32_t bits;
  memcpy(&bits, &loss0, 4);
  if (comm_heartbeat(t->comm, (uint64_t)t->step, &bits, t->n_local, err) != 0) return -1;
  memcpy(loss_out, &bits, 4);
  if (W > 1 && (t->gpu ? trainer_gpu_combine(t, err)
                       : grad_combine(&t->gx, t->comm, W, t->rank_grads, t->grads, err)) != 0)
    return -1;
  t->exchange_ms += trainer_now_ms() - t0;
  if (t->gpu) return trainer_gpu_optimizer_step(t, lr_mult, err);
  if (t->comm->size == 1) {
    optimizer_step(&t->opt, &t->l, t->params, t->grads, t->step, lr_mult, t->prec);
    return 0;
  }
  float norm;
  return optimizer_step_sharded(&t->opt, &t->l, t->params, t->grads, t->step, lr_mult, t->prec, &t->shard, &norm,
                                err);
}

/* ---- the budget plan ---- */

/* Time TRAIN_PLAN_SAMPLES real steps, then put parameters, optimizer and
 * loader back exactly (as the official warm-up restores its state), and
 * turn the budget into a step count. */
static int plan_budget(trainer *t, pg_error *err) {
  double ms[TRAIN_PLAN_SAMPLES];
  float *saved = malloc(t->l.n_params * sizeof(float));
  checkpoint opt_state = {0};
  loader_state *ls = malloc((size_t)t->n_local * sizeof *ls);
  double *all_ms = malloc((size_t)t->comm->size * sizeof ms); /* every process's, process 0's first */
  int rc = -1;
  if (!saved || !ls || !all_ms) {
    free(saved);
    free(ls);
    free(all_ms);
    return pg_fail(err, "", -1, "out of memory");
  }
  memcpy(saved, t->params, t->l.n_params * sizeof(float));
  memcpy(ls, t->rank_ls, (size_t)t->n_local * sizeof *ls);
  if (optimizer_save(&t->opt, &opt_state, err) != 0) goto out;
  for (int i = 0; i < TRAIN_PLAN_SAMPLES; i++) {
    float loss;
    double t0 = trainer_now_ms();
    if (train_step(t, schedule_lr_mult(i, t->cfg.opt.iterations, t->cfg.opt.warmdown_iters), &loss, err) != 0)
      goto out;
    t->step++;
    ms[i] = trainer_now_ms() - t0;
  }
  t->step = 0;
  t->exchange_ms = 0;
  memcpy(t->params, saved, t->l.n_params * sizeof(float));
  memcpy(t->rank_ls, ls, (size_t)t->n_local * sizeof *ls);
  if (optimizer_load(&t->opt, &opt_state, "plan", err) != 0) goto out;
  if (t->gpu && trainer_gpu_put(t, err) != 0) goto out;
  /* Every process plans from process 0's times, so all plan the same steps. */
  if (comm_allgather_bytes(t->comm, ms, sizeof ms, all_ms, err) != 0) goto out;
  schedule_plan plan;
  if (schedule_plan_steps(t->cfg.budget_seconds, all_ms, TRAIN_PLAN_SAMPLES, t->cfg.opt.iterations, &plan, err) != 0)
    goto out;
  t->cfg.opt.iterations = plan.planned_steps;
  t->plan = schedule_plan_to_json(&plan);
  train_log_printf(&t->log, "budget_plan: budget:%.3fs measured_step_avg:%.2fms planned_steps:%lld",
                   plan.budget_seconds, plan.measured_step_ms, (long long)plan.planned_steps);
  rc = t->plan ? 0 : pg_fail(err, "", -1, "out of memory");
out:
  free(saved);
  free(ls);
  free(all_ms);
  ckpt_free(&opt_state);
  return rc;
}

/* ---- the loop ---- */

static int should_log(const trainer *t, int64_t step) {
  int64_t every = t->cfg.train_log_every;
  return every > 0 && (step <= 10 || step % every == 0 || step == t->cfg.opt.iterations);
}

/* On the GPU the parameters it trains are validated there (NULL). */
static int validate_and_log(trainer *t, pg_error *err) {
  double vl, vb;
  if (trainer_validate(t, t->gpu ? NULL : t->params, &vl, &vb, err) != 0) return -1;
  progress_clear(&t->prog);
  train_log_val_step(&t->log, t->step, t->cfg.opt.iterations, vl, vb, t->train_ms);
  t->last_val_loss = vl;
  t->last_val_bpb = vb;
  t->have_val = 1;
  return 0;
}

static int after_step(trainer *t, float loss, double lr_mult, double elapsed_ms, pg_error *err) {
  if (trainer_add_record(t, (uint64_t)t->step, loss, (float)lr_mult, elapsed_ms) != 0)
    return pg_fail(err, "", -1, "out of memory");
  if (should_log(t, t->step)) {
    progress_clear(&t->prog);
    train_log_train_step(&t->log, t->step, t->cfg.opt.iterations, loss, elapsed_ms);
  }
  progress_update(&t->prog, t->step, loss);
  return 0;
}

/* Returns 1 when stopped by stop_after, 0 at the end, -1 on error. */
static int loop(trainer *t, pg_error *err) {
  const train_options *o = t->o;
  int64_t M = t->cfg.opt.iterations, every = t->cfg.val_loss_every;
  double t0 = trainer_now_ms();
  for (;;) {
    int last = t->step >= M;
    if (!last && o->stop_after > 0 && t->step >= o->stop_after) {
      t->train_ms += trainer_now_ms() - t0;
      return trainer_save(t, err) == 0 ? 1 : -1;
    }
    /* Every process validates during training (the same bits; it keeps
     * them in step); the end's validation and export are process 0's. */
    if (last) {
      /* The final checkpoint's loader states, while every process is here,
       * and the device's state, which the checkpoint and export read. */
      if (trainer_gather_loaders(t, err) != 0) return -1;
      if (t->gpu && trainer_gpu_get(t, err) != 0) return -1;
      if (t->comm->rank != 0) return 0;
    }
    if (last || (every > 0 && t->step % every == 0)) {
      t->train_ms += trainer_now_ms() - t0;
      if (validate_and_log(t, err) != 0) return -1;
      t0 = trainer_now_ms();
    }
    if (last) return 0;
    double lr_mult = schedule_lr_mult(t->step, M, t->cfg.opt.warmdown_iters);
    float loss;
    if (train_step(t, lr_mult, &loss, err) != 0) return -1;
    t->step++;
    if (after_step(t, loss, lr_mult, t->train_ms + trainer_now_ms() - t0, err) != 0) return -1;
    if (o->checkpoint_every > 0 && t->step % o->checkpoint_every == 0 && t->step < M) {
      t->train_ms += trainer_now_ms() - t0; /* writing is not training */
      if (trainer_save(t, err) != 0) return -1;
      t0 = trainer_now_ms();
    }
  }
}

/* ---- the run ---- */

static void log_header(trainer *t) {
  json_t *cfg = train_config_to_json(&t->cfg);
  train_log_printf(&t->log, "seed:%llu", (unsigned long long)t->cfg.seed);
  if (cfg) train_log_hparams(&t->log, cfg);
  json_decref(cfg);
  train_log_printf(&t->log, "model_params:%zu", t->l.n_params);
  train_log_printf(&t->log, "world_size:%d grad_accum_steps:%d", t->cfg.world_size, t->cfg.grad_accum_steps);
  train_log_printf(&t->log, "train_batch_tokens:%lld train_seq_len:%d iterations:%lld precision:%s threads:%d",
                   (long long)t->cfg.train_batch_tokens, t->cfg.model.seq_len,
                   (long long)t->cfg.opt.iterations, train_precision_name(t->cfg.precision),
                   omp_get_max_threads());
  if (t->comm->size > 1)
    train_log_printf(&t->log, "processes:%d ranks_per_process:%d mpi:%s", t->comm->size, t->n_local,
                     t->comm->library);
  if (t->gpu) trainer_gpu_log(t);
  if (matmul_kernel_slow() && !t->gpu)
    train_log_printf(&t->log, "warning: this CPU has no FMA unit: matmuls and attention run through "
                              "the C library's fmaf (same bits, many times slower)");
}

static int start_fresh(trainer *t, pg_error *err) {
  if (trainer_open_log(t, NULL, 0, err) != 0) return -1;
  log_header(t);
  if (gpt_init_params(&t->l, t->params, t->cfg.seed, err) != 0) return -1;
  if (!(t->init = gpt_init_predicate_json(&t->l, t->params))) return pg_fail(err, "", -1, "out of memory");
  if (t->gpu && trainer_gpu_put(t, err) != 0) return -1;
  if (t->cfg.budget_seconds > 0 && plan_budget(t, err) != 0) return -1;
  return 0;
}

int train_run(const train_options *o, train_result *r, pg_error *err) {
  trainer *t = calloc(1, sizeof *t);
  if (!t) return pg_fail(err, "", -1, "out of memory");
  memset(r, 0, sizeof *r);
  int rc = setup(t, o, err);
  if (rc == 0)
    rc = o->resume ? trainer_restore(t, o->resume, o->resume_name, err) : start_fresh(t, err);
  if (rc == 0 && o->resume && t->gpu) rc = trainer_gpu_put(t, err);
  if (rc == 0) {
    progress_init(&t->prog, t->step, t->cfg.opt.iterations,
                  t->cfg.train_batch_tokens, o->quiet || t->comm->rank != 0);
    rc = loop(t, err);
    progress_clear(&t->prog);
  }
  if (rc == 1) { /* stopped early: the checkpoint is written */
    r->finished = 0;
    rc = 0;
  } else if (rc == 0) {
    /* The loaders were gathered at the last step (loop). */
    if (t->comm->rank == 0) rc = trainer_write_checkpoint(t, err);
    if (rc == 0 && t->comm->rank == 0) rc = trainer_finish(t, r, err);
    r->finished = rc == 0;
  }
  r->steps = t->step;
  r->train_ms = t->train_ms;
  r->comm_ms = t->exchange_ms;
  memcpy(r->chain, t->chain, SHA256_LEN);
  if (t->n_recs) r->last_loss_bits = t->recs[t->n_recs - 1].loss_bits;
  pg_error ce;
  if (t->log.text || t->log.f) {
    if (train_log_close(&t->log, &ce) != 0 && rc == 0) {
      *err = ce;
      rc = -1;
    }
  }
  teardown(t, rc != 0);
  free(t);
  return rc;
}
