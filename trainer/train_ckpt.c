/* Saving and restoring a training run (the entries of DIR/checkpoint).
 *
 *   format        bytes  "pgolf-train-v1"
 *   config        bytes  the configuration JSON (train_config_to_json,
 *                        iterations as planned)
 *   params        f32    the flat parameters
 *   optim.*       f32    the optimizer state (trainer/optimizer.h)
 *   loader        u64[3] file index, position, tokens consumed (rank 0's)
 *   loader.ranks  u64[3 x world_size] every rank's, in rank order (absent
 *                 in older checkpoints: then every rank has "loader")
 *   step          u64[1] steps done
 *   train_ms      f64[1] training time so far
 *   loss.step     u64[n], loss.bits u32[n], loss.lr_mult u32[n],
 *   loss.wall_ms  f64[n] the loss records, n == step
 *   chain         bytes[32] chain head over the records
 *   init, plan    bytes  predicate.init and the budget plan (JSON; plan
 *                        may be empty)
 *   log           bytes  the log text so far
 * Restoring checks what the container cannot: the records are steps 1..n,
 * the chain head matches them, the loader state is inside the shards.
 * Every process of a run takes part in saving (the ranks' loader states
 * are gathered); process 0 alone writes, atomically. A resumed run may
 * have another number of processes: each takes its ranks' states. */
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json_read.h"
#include "manifests/loss_chain.h"
#include "trainer/train_internal.h"

#define FORMAT_TAG "pgolf-train-v1"

static int add_json(checkpoint *c, const char *name, const json_t *j, pg_error *err) {
  char *s = j ? json_dumps(j, JSON_PRESERVE_ORDER | JSON_COMPACT) : NULL;
  if (j && !s) return pg_fail(err, "", -1, "out of memory");
  int rc = ckpt_add(c, name, CKPT_BYTES, s ? s : "", s ? strlen(s) : 0, err);
  free(s);
  return rc;
}

static int add_records(trainer *t, checkpoint *c, pg_error *err) {
  size_t n = t->n_recs;
  uint64_t *steps = malloc((n ? n : 1) * sizeof *steps);
  uint32_t *bits = malloc((n ? n : 1) * sizeof *bits), *lr = malloc((n ? n : 1) * sizeof *lr);
  double *wall = malloc((n ? n : 1) * sizeof *wall);
  int rc = -1;
  if (steps && bits && lr && wall) {
    for (size_t i = 0; i < n; i++) {
      steps[i] = t->recs[i].step;
      bits[i] = t->recs[i].loss_bits;
      lr[i] = t->recs[i].lr_mult_bits;
      wall[i] = t->recs[i].wall_ms;
    }
    rc = ckpt_add(c, "loss.step", CKPT_U64, steps, n, err) || ckpt_add(c, "loss.bits", CKPT_U32, bits, n, err) ||
                 ckpt_add(c, "loss.lr_mult", CKPT_U32, lr, n, err) ||
                 ckpt_add(c, "loss.wall_ms", CKPT_F64, wall, n, err)
             ? -1
             : 0;
  } else {
    pg_fail(err, "", -1, "out of memory");
  }
  free(steps);
  free(bits);
  free(lr);
  free(wall);
  return rc;
}

static int fill(trainer *t, checkpoint *c, const uint64_t *ranks, pg_error *err) {
  json_t *cfg = train_config_to_json(&t->cfg);
  uint64_t step = (uint64_t)t->step;
  int rc = ckpt_add(c, "format", CKPT_BYTES, FORMAT_TAG, strlen(FORMAT_TAG), err) ||
                   add_json(c, "config", cfg, err) ||
                   ckpt_add(c, "params", CKPT_F32, t->params, t->l.n_params, err) ||
                   optimizer_save(&t->opt, c, err) || ckpt_add(c, "loader", CKPT_U64, ranks, 3, err) ||
                   ckpt_add(c, "loader.ranks", CKPT_U64, ranks, 3 * (size_t)t->cfg.world_size, err) ||
                   ckpt_add(c, "step", CKPT_U64, &step, 1, err) ||
                   ckpt_add(c, "train_ms", CKPT_F64, &t->train_ms, 1, err) || add_records(t, c, err) ||
                   ckpt_add(c, "chain", CKPT_BYTES, t->chain, SHA256_LEN, err) ||
                   add_json(c, "init", t->init, err) || add_json(c, "plan", t->plan, err) ||
                   ckpt_add(c, "log", CKPT_BYTES, t->log.text ? t->log.text : "", t->log.len, err)
               ? -1
               : 0;
  json_decref(cfg);
  return rc;
}

/* The records as a loss file: exact bits, so it feeds
 * `pgolf manifest create --losses` and any tool without loss of precision. */
static int write_losses(trainer *t, pg_error *err) {
  size_t cap = 64 + t->n_recs * 64, len = 0;
  char *buf = malloc(cap);
  if (!buf) return pg_fail(err, "", -1, "out of memory");
  len += (size_t)snprintf(buf, cap, "# step loss_bits lr_mult_bits wall_ms\n");
  for (size_t i = 0; i < t->n_recs; i++) {
    const loss_record *r = &t->recs[i];
    len += (size_t)snprintf(buf + len, cap - len, "%llu 0x%08x 0x%08x %.3f\n", (unsigned long long)r->step,
                            r->loss_bits, r->lr_mult_bits, r->wall_ms);
  }
  int rc = file_write_atomic(t->path_buf[PATH_LOSSES], buf, len, 0644, err);
  free(buf);
  return rc;
}

/* Every rank's loader state in rank order, from all processes, into
 * t->all_ls. */
int trainer_gather_loaders(trainer *t, pg_error *err) {
  uint64_t *mine = malloc((size_t)t->n_local * 3 * sizeof *mine);
  if (!mine) return pg_fail(err, "", -1, "out of memory");
  for (int l = 0; l < t->n_local; l++) {
    mine[3 * l] = t->rank_ls[l].file_idx;
    mine[3 * l + 1] = t->rank_ls[l].pos;
    mine[3 * l + 2] = t->rank_ls[l].consumed;
  }
  int rc = comm_allgather_bytes(t->comm, mine, (size_t)t->n_local * 3 * sizeof *mine, t->all_ls, err);
  free(mine);
  return rc;
}

int trainer_write_checkpoint(trainer *t, pg_error *err) {
  checkpoint c = {0};
  int rc = fill(t, &c, t->all_ls, err);
  if (rc == 0) rc = ckpt_write(&c, t->path_buf[PATH_CKPT], err);
  if (rc == 0) rc = write_losses(t, err);
  ckpt_free(&c);
  return rc;
}

int trainer_save(trainer *t, pg_error *err) {
  if (t->gpu && trainer_gpu_get(t, err) != 0) return -1; /* the device's state is the run's */
  if (trainer_gather_loaders(t, err) != 0) return -1;
  return t->comm->rank == 0 ? trainer_write_checkpoint(t, err) : 0;
}

/* ---- restoring ---- */

static int bytes_entry(const checkpoint *c, const char *file, const char *name, const ckpt_entry **e,
                       pg_error *err) {
  *e = ckpt_find(c, name);
  if (!*e || (*e)->type != CKPT_BYTES) return pg_fail(err, file, -1, "checkpoint entry \"%s\" missing or not bytes", name);
  return 0;
}

static int json_entry(const checkpoint *c, const char *file, const char *name, int allow_empty, json_t **out,
                      pg_error *err) {
  const ckpt_entry *e;
  *out = NULL;
  if (bytes_entry(c, file, name, &e, err) != 0) return -1;
  if (e->count == 0 && allow_empty) return 0;
  pg_error je;
  if (json_read_buf(e->data, (size_t)e->count, name, out, &je) != 0)
    return pg_fail(err, file, -1, "checkpoint entry \"%s\": %s", name, je.msg);
  return 0;
}

int train_checkpoint_config(const checkpoint *ck, const char *name, train_config *c, pg_error *err) {
  const ckpt_entry *e;
  if (bytes_entry(ck, name, "format", &e, err) != 0) return -1;
  if (e->count != strlen(FORMAT_TAG) || memcmp(e->data, FORMAT_TAG, e->count) != 0)
    return pg_fail(err, name, -1, "not a pgolf training checkpoint (format entry)");
  json_t *j;
  if (json_entry(ck, name, "config", 0, &j, err) != 0) return -1;
  train_config_preset("baseline", c, err);
  int rc = train_config_apply_json(c, j, name, err);
  json_decref(j);
  if (rc == 0) rc = train_config_check(c, err);
  return rc;
}

static int restore_records(trainer *t, const checkpoint *c, const char *file, uint64_t n, pg_error *err) {
  uint64_t *steps = malloc((n ? n : 1) * sizeof *steps);
  uint32_t *bits = malloc((n ? n : 1) * sizeof *bits), *lr = malloc((n ? n : 1) * sizeof *lr);
  double *wall = malloc((n ? n : 1) * sizeof *wall);
  int rc = -1;
  if (!steps || !bits || !lr || !wall) {
    pg_fail(err, file, -1, "out of memory");
    goto out;
  }
  if (ckpt_get(c, file, "loss.step", CKPT_U64, n, steps, err) || ckpt_get(c, file, "loss.bits", CKPT_U32, n, bits, err) ||
      ckpt_get(c, file, "loss.lr_mult", CKPT_U32, n, lr, err) ||
      ckpt_get(c, file, "loss.wall_ms", CKPT_F64, n, wall, err))
    goto out;
  loss_chain_init(t->chain);
  for (uint64_t i = 0; i < n; i++) {
    if (steps[i] != i + 1) {
      pg_fail(err, file, -1, "checkpoint loss record %llu is for step %llu, expected %llu",
              (unsigned long long)i, (unsigned long long)steps[i], (unsigned long long)(i + 1));
      goto out;
    }
    float loss, lrm;
    memcpy(&loss, &bits[i], 4);
    memcpy(&lrm, &lr[i], 4);
    if (trainer_add_record(t, steps[i], loss, lrm, wall[i]) != 0) {
      pg_fail(err, file, -1, "out of memory");
      goto out;
    }
  }
  uint8_t head[SHA256_LEN];
  rc = ckpt_get(c, file, "chain", CKPT_BYTES, SHA256_LEN, head, err);
  if (rc == 0 && memcmp(head, t->chain, SHA256_LEN) != 0)
    rc = pg_fail(err, file, -1, "checkpoint chain head does not match its loss records");
out:
  free(steps);
  free(bits);
  free(lr);
  free(wall);
  return rc;
}

/* This process's ranks' loader states ("loader.ranks", or "loader" for
 * every rank in a checkpoint without it), each checked against the shards. */
static int restore_loaders(trainer *t, const checkpoint *c, const char *file, pg_error *err) {
  size_t W = (size_t)t->cfg.world_size;
  uint64_t *all = malloc(W * 3 * sizeof *all);
  if (!all) return pg_fail(err, file, -1, "out of memory");
  int rc = ckpt_find(c, "loader.ranks") ? ckpt_get(c, file, "loader.ranks", CKPT_U64, 3 * W, all, err)
                                        : ckpt_get(c, file, "loader", CKPT_U64, 3, all, err);
  int have_ranks = ckpt_find(c, "loader.ranks") != NULL;
  for (int l = 0; rc == 0 && l < t->n_local; l++) {
    const uint64_t *v = have_ranks ? all + 3 * (size_t)(t->first_rank + l) : all;
    loader_state ls = {v[0], v[1], v[2]};
    rc = loader_set_state(&t->loader, &ls, err);
    t->rank_ls[l] = ls;
  }
  free(all);
  return rc;
}

static int restore_state(trainer *t, const checkpoint *c, const char *file, pg_error *err) {
  uint64_t step;
  if (ckpt_get(c, file, "step", CKPT_U64, 1, &step, err) || ckpt_get(c, file, "train_ms", CKPT_F64, 1, &t->train_ms, err) ||
      ckpt_get(c, file, "params", CKPT_F32, t->l.n_params, t->params, err) ||
      optimizer_load(&t->opt, c, file, err))
    return -1;
  if (step > (uint64_t)t->cfg.opt.iterations)
    return pg_fail(err, file, -1, "checkpoint at step %llu, past the run's %lld iterations",
                   (unsigned long long)step, (long long)t->cfg.opt.iterations);
  if (restore_loaders(t, c, file, err) != 0) return -1;
  t->step = (int64_t)step;
  return restore_records(t, c, file, step, err);
}

int trainer_restore(trainer *t, const checkpoint *c, const char *file, pg_error *err) {
  const ckpt_entry *log;
  if (restore_state(t, c, file, err) != 0) return -1;
  if (json_entry(c, file, "init", 0, &t->init, err) || json_entry(c, file, "plan", 1, &t->plan, err) ||
      bytes_entry(c, file, "log", &log, err))
    return -1;
  if (trainer_open_log(t, log->data, (size_t)log->count, err) != 0)
    return -1;
  train_log_printf(&t->log, "resumed_from_checkpoint: step:%lld/%lld", (long long)t->step,
                   (long long)t->cfg.opt.iterations);
  return 0;
}
