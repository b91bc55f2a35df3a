/* The end of a run, as the official main(): export the int8+zlib artifact,
 * log its size with the code size, load it back from disk, evaluate the
 * dequantized model (the final metric), then the final checkpoint and the
 * manifest. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json_read.h"
#include "manifests/manifest.h"
#include "trainer/artifact.h"
#include "trainer/code_size.h"
#include "trainer/eval.h"
#include "formats/tokenizer.h"
#include "trainer/train_internal.h"

/* ---- evaluation and artifact (trainer/eval.h, trainer/artifact.h) ---- */

/* The validation split and byte tables, opened at the first evaluation. */
static int open_val(trainer *t, pg_error *err) {
  if (t->val_open) return 0;
  sp_model sp;
  if (sp_model_load(t->cfg.tokenizer, &sp, err) != 0) return -1;
  int rc = luts_from_model(&sp, (uint32_t)t->cfg.model.vocab_size, &t->luts, err);
  sp_model_free(&sp);
  if (rc != 0) return -1;
  if (val_data_open(&t->val, t->cfg.data, "fineweb_val_", (uint32_t)t->T,
                    (uint32_t)t->cfg.model.vocab_size, err) != 0) {
    luts_free(&t->luts);
    return -1;
  }
  t->val_open = 1;
  return 0;
}

/* The official eval_val batch: val_batch_size / (world * grad_accum)
 * tokens, whole sequences (the sums do not depend on it, the memory does).
 * On the GPU the forward runs there, in batches of the training's shape
 * (trainer_gpu_validate; params NULL: the parameters on the device). */
int trainer_validate(trainer *t, const float *params, double *loss, double *bpb, pg_error *err) {
  if (open_val(t, err) != 0) return -1;
  int rc;
  if (t->gpu) {
    rc = trainer_gpu_validate(t, params, &t->last_eval, err);
  } else {
    int64_t bs = t->cfg.val_batch_size / ((int64_t)t->cfg.world_size * t->cfg.grad_accum_steps) / t->T;
    eval_opts eo = {bs < 1 ? 1 : (int)(bs > 65536 ? 65536 : bs), t->prec, NULL, t->gpu_trees};
    gpt_params p;
    gpt_params_bind(&p, &t->l, (float *)params);
    rc = eval_val(&t->val, &t->luts, &t->l, &p, &eo, &t->last_eval, err);
    gpt_params_free(&p);
  }
  if (rc != 0) return -1;
  *loss = t->last_eval.val_loss;
  *bpb = t->last_eval.val_bpb;
  return 0;
}

void trainer_close_val(trainer *t) {
  if (!t->val_open) return;
  val_data_close(&t->val);
  luts_free(&t->luts);
  t->val_open = 0;
}

static int export_artifact(trainer *t, uint64_t code_bytes, artifact_info *info, pg_error *err) {
  quant_dtype *dt = malloc((size_t)t->l.n_tensors * sizeof *dt);
  if (!dt) return pg_fail(err, "", -1, "out of memory");
  quant_dtypes_for(&t->l, t->prec == GPT_MIXED, dt);
  int rc = artifact_export(t->path_buf[PATH_ARTIFACT], &t->l, t->params, dt, code_bytes, info, err);
  free(dt);
  return rc;
}

/* ---- the manifest ---- */

static json_t *f64_bits(double v) {
  uint64_t b;
  char s[24];
  memcpy(&b, &v, 8);
  snprintf(s, sizeof s, "0x%016llx", (unsigned long long)b);
  return json_string(s);
}

/* Deterministic values only (the manifest diff compares this object):
 * the round-tripped artifact's score, and the score before export. */
static json_t *evaluation_json(const trainer *t, double vl, double vb) {
  char sum_bits[24];
  snprintf(sum_bits, sizeof sum_bits, "0x%016llx", (unsigned long long)t->last_eval.loss_sum_bits);
  json_t *e = json_pack("{s:s, s:f, s:f, s:o, s:o, s:I, s:I, s:s}", "mode", "int8_zlib_roundtrip",
                        "val_loss", vl, "val_bpb", vb, "val_loss_bits", f64_bits(vl), "val_bpb_bits",
                        f64_bits(vb), "tokens", (json_int_t)t->last_eval.tokens, "bytes",
                        (json_int_t)t->last_eval.bytes, "loss_sum_bits", sum_bits);
  if (e && t->have_val)
    json_object_set_new(e, "pre_quant",
                        json_pack("{s:f, s:f, s:o, s:o}", "val_loss", t->last_val_loss, "val_bpb",
                                  t->last_val_bpb, "val_loss_bits", f64_bits(t->last_val_loss),
                                  "val_bpb_bits", f64_bits(t->last_val_bpb)));
  return e;
}

typedef struct finish_info {
  double val_loss, val_bpb, eval_ms, export_ms;
  uint64_t model_bytes;
  code_size cs;
} finish_info;

static int write_manifest(trainer *t, const finish_info *f, pg_error *err) {
  json_t *cfg = train_config_to_json(&t->cfg);
  json_t *eval = evaluation_json(t, f->val_loss, f->val_bpb);
  json_t *sched = t->plan ? json_pack("{s:O}", "plan", t->plan) : NULL;
  json_t *timing = json_pack("{s:f, s:f, s:f}", "train_ms", t->train_ms, "final_eval_ms", f->eval_ms,
                             "export_ms", f->export_ms);
  json_t *seeds = json_pack("{s:I}", "torch_manual_seed", (json_int_t)t->cfg.seed);
  /* Processes change no bit (the ordered combination): environment, not config. */
  json_t *env = json_pack("{s:i, s:i, s:i, s:s?}", "world_size", t->cfg.world_size, "processes",
                          t->comm->size, "ranks_per_process", t->n_local, "mpi",
                          t->comm->library[0] ? t->comm->library : NULL);
  json_t *code = json_pack("{s:i, s:s, s:b}", "code_files", f->cs.n_files, "code_digest", f->cs.digest,
                           "code_matches_binary", f->cs.matches_binary);
  loader_state ls;
  loader_get_state(&t->loader, &ls);
  int rc = -1;
  if (env && t->gpu) json_object_set_new(env, "device", trainer_gpu_json(t));
  if (!cfg || !eval || !timing || !seeds || !code || !env) {
    pg_fail(err, "", -1, "out of memory");
    goto out;
  }
  /* Threads change no bit: recorded in predicate.environment, not config.
   * Data and tokenizer are identified by digest in predicate.data, so two
   * runs on the same files at different paths compare equal. */
  json_object_del(cfg, "threads");
  json_object_del(cfg, "data");
  json_object_del(cfg, "tokenizer");
  const char *data[1] = {t->cfg.data};
  manifest_inputs in;
  manifest_extras x;
  memset(&in, 0, sizeof in);
  memset(&x, 0, sizeof x);
  in.tokenizer_path = t->cfg.tokenizer;
  in.data_paths = data;
  in.n_data = 1;
  in.seed = t->cfg.seed;
  in.artifact_path = t->path_buf[PATH_ARTIFACT];
  in.total_steps = t->cfg.opt.iterations;
  in.threads = (unsigned)omp_get_max_threads();
  x.config = cfg;
  x.loss_recs = t->recs;
  x.n_loss_recs = t->n_recs;
  x.losses_in_memory = 1;
  x.derived_seeds = seeds;
  x.init = t->init;
  x.wall_clock_budget_s = t->cfg.budget_seconds;
  x.schedule = sched;
  x.evaluation = eval;
  x.code_bytes = (int64_t)f->cs.bytes;
  x.code_rule = CODE_SIZE_RULE;
  x.artifact_extra = code;
  x.tokens_consumed = (int64_t)ls.consumed;
  x.timing = timing;
  x.environment = env;
  char *text = NULL;
  size_t len = 0;
  if (manifest_create_ex(&in, &x, &text, &len, err) == 0)
    rc = file_write_atomic(t->path_buf[PATH_MANIFEST], text, len, 0644, err);
  free(text);
out:
  json_decref(cfg);
  json_decref(eval);
  json_decref(sched);
  json_decref(timing);
  json_decref(seeds);
  json_decref(code);
  json_decref(env);
  return rc;
}

/* ---- the end of the run ---- */

/* Code bytes first: the export accounts them with the model bytes. */
static int export_and_roundtrip(trainer *t, finish_info *f, pg_error *err) {
  artifact_info info;
  if (code_size_measure(&f->cs, err) != 0) return -1;
  if (!f->cs.matches_binary)
    train_log_printf(&t->log, "warning: the source tree at %s differs from this binary's sources; "
                              "code bytes counted from the tree", f->cs.root);
  double t0 = trainer_now_ms();
  if (export_artifact(t, f->cs.bytes, &info, err) != 0) return -1;
  f->export_ms = trainer_now_ms() - t0;
  f->model_bytes = info.acct.model_bytes;
  train_log_sizes(&t->log, info.acct.model_bytes, info.payload_bytes, info.raw_bytes, info.baseline_bytes,
                  f->cs.bytes);
  float *deq = malloc(t->l.n_params * sizeof(float));
  if (!deq) return pg_fail(err, "", -1, "out of memory");
  t0 = trainer_now_ms();
  /* From disk, as the official script reads final_model.int8.ptz back. */
  int rc = artifact_load(t->path_buf[PATH_ARTIFACT], &t->l, deq, err);
  if (rc == 0) rc = trainer_validate(t, deq, &f->val_loss, &f->val_bpb, err);
  f->eval_ms = trainer_now_ms() - t0;
  free(deq);
  if (rc == 0) train_log_final(&t->log, f->val_loss, f->val_bpb, f->eval_ms);
  return rc;
}

int trainer_finish(trainer *t, train_result *r, pg_error *err) {
  finish_info f;
  memset(&f, 0, sizeof f);
  /* The final checkpoint is written before (train_run: every process
   * takes part): resuming a finished run then redoes only the export and
   * its evaluation, without repeating their log lines. */
  if (export_and_roundtrip(t, &f, err) != 0) return -1;
  if (write_manifest(t, &f, err) != 0) return -1;
  r->val_loss = f.val_loss;
  r->val_bpb = f.val_bpb;
  r->code_bytes = f.cs.bytes;
  r->model_bytes = f.model_bytes;
  return 0;
}
