#include "common/challenge.h"
#include "verifier/replay_run.h"

#include <jansson.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/cli.h"
#include "common/fileio.h"
#include "common/json_read.h"
#include "manifests/manifest.h"
#include "common/sha256.h"
#include "trainer/train.h"

/* Data and tokenizer: the options, else where predicate.data recorded
 * them (the directory of the train shards; the tokenizer's path). The
 * digests are checked by `pgolf manifest verify`; the replay's own
 * manifest records what it read, and any difference shows in the chain. */
static int data_and_tokenizer(const manifest *m, const replay_run_opts *o, train_config *cfg,
                              const char *name, pg_error *err) {
  if (o->data) {
    snprintf(cfg->data, sizeof cfg->data, "%s", o->data);
  } else if (!cfg->data[0]) {
    for (size_t i = 0; i < m->n_shards && !cfg->data[0]; i++) {
      const char *path = m->shards[i].path, *slash = path ? strrchr(path, '/') : NULL;
      if (!path || strcmp(m->shards[i].split ? m->shards[i].split : "", "train")) continue;
      if (slash) snprintf(cfg->data, sizeof cfg->data, "%.*s", (int)(slash - path), path);
      else snprintf(cfg->data, sizeof cfg->data, ".");
    }
    if (!cfg->data[0])
      return pg_fail(err, name, -1, "predicate.data.shards records no train shard; give --data");
  }
  if (o->tokenizer) {
    snprintf(cfg->tokenizer, sizeof cfg->tokenizer, "%s", o->tokenizer);
  } else if (!cfg->tokenizer[0]) {
    if (!m->tokenizer.path)
      return pg_fail(err, name, -1, "predicate.data.tokenizer records no path; give --tokenizer");
    snprintf(cfg->tokenizer, sizeof cfg->tokenizer, "%s", m->tokenizer.path);
  }
  return 0;
}

/* The run's configuration as the manifest records it, with overrides. */
static int config_from_manifest(const manifest *m, const replay_run_opts *o, train_config *cfg,
                                const char *name, pg_error *err) {
  if (!json_is_object(m->config))
    return pg_fail(err, name, -1, "predicate.config: expected the training configuration");
  memset(cfg, 0, sizeof *cfg);
  if (train_config_preset("tiny", cfg, err)) return -1;
  if (train_config_apply_json(cfg, m->config, name, err)) return -1;
  cfg->seed = m->seed;
  cfg->threads = o->threads;
  if (data_and_tokenizer(m, o, cfg, name, err)) return -1;
  /* A budgeted run was planned once, before training; the replay runs
   * exactly the steps that plan chose and judges the clock itself. */
  if (m->total_steps >= 0) {
    if (cfg->budget_seconds <= 0 && m->total_steps != (int64_t)cfg->opt.iterations)
      return pg_fail(err, name, -1,
                     "predicate.schedule.total_steps %lld disagrees with config iterations %lld",
                     (long long)m->total_steps, (long long)cfg->opt.iterations);
    cfg->opt.iterations = m->total_steps;
  }
  cfg->budget_seconds = 0;
  return train_config_check(cfg, err);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The first step whose loss differs, or a differing count or head; when
 * the replay ran on something else (env_differs), the message says so. */
static void compare_chains(const manifest *a, const manifest *b, int env_differs,
                           finding_list *f) {
  const char *why = env_differs ? " (the replay ran on another device or cuBLASLt algorithms: "
                                  "see REPLAY_ENVIRONMENT)"
                                : "";
  size_t n = a->n_steps < b->n_steps ? a->n_steps : b->n_steps;
  for (size_t i = 0; i < n; i++) {
    const manifest_step *x = &a->steps[i], *y = &b->steps[i];
    if (x->step == y->step && x->loss_bits == y->loss_bits) continue;
    char dx[64], dy[64];
    manifest_f32_text(x->loss_bits, dx, sizeof dx);
    manifest_f32_text(y->loss_bits, dy, sizeof dy);
    findings_add(f, "CHAIN_MISMATCH", SEV_ERROR, NULL, 0,
                 "first differing step %llu: recorded loss 0x%08x (%s), replay 0x%08x (%s)%s",
                 (unsigned long long)x->step, (unsigned)x->loss_bits, dx, (unsigned)y->loss_bits,
                 dy, why);
    return;
  }
  if (a->n_steps != b->n_steps) {
    findings_add(f, "CHAIN_MISMATCH", SEV_ERROR, NULL, 0,
                 "the manifest records %zu steps, the replay ran %zu", a->n_steps, b->n_steps);
    return;
  }
  if (memcmp(a->head, b->head, SHA256_LEN)) {
    char ha[SHA256_HEX_LEN + 1], hb[SHA256_HEX_LEN + 1];
    sha256_hex(a->head, ha);
    sha256_hex(b->head, hb);
    findings_add(f, "CHAIN_MISMATCH", SEV_ERROR, NULL, 0,
                 "every step agrees but the chain heads differ: %s vs %s", ha, hb);
  }
}

static void compare_artifacts(const manifest *a, const manifest *b, finding_list *f) {
  if (!a->has_artifact) return;
  if (!b->has_artifact) {
    findings_add(f, "ARTIFACT_MISMATCH", SEV_ERROR, NULL, 0, "the replay wrote no artifact");
    return;
  }
  if (a->artifact.bytes != b->artifact.bytes ||
      memcmp(a->artifact.sha256, b->artifact.sha256, SHA256_LEN)) {
    char ha[SHA256_HEX_LEN + 1], hb[SHA256_HEX_LEN + 1];
    sha256_hex(a->artifact.sha256, ha);
    sha256_hex(b->artifact.sha256, hb);
    findings_add(f, "ARTIFACT_MISMATCH", SEV_ERROR, NULL, 0,
                 "artifact differs: recorded %llu bytes sha256 %s, replay %llu bytes sha256 %s",
                 (unsigned long long)a->artifact.bytes, ha, (unsigned long long)b->artifact.bytes,
                 hb);
  }
}

/* The final metric compares as the bit patterns the trainer records. */
static void compare_metric(const manifest *a, const manifest *b, const char *key,
                           finding_list *f) {
  const char *x = json_string_value(json_object_get(a->evaluation, key));
  const char *y = json_string_value(json_object_get(b->evaluation, key));
  if (!x) return; /* the original records no such metric */
  if (!y || strcmp(x, y))
    findings_add(f, "METRIC_MISMATCH", SEV_ERROR, NULL, 0,
                 "predicate.evaluation.%s: recorded %s, replay %s", key, x, y ? y : "(none)");
}

/* Budgets on this process's monotonic clock, with the official one-step
 * tolerance for training (the cap is checked after each step). */
static void check_budgets(const replay_run_opts *o, const train_result *r, double total_ms,
                          finding_list *f) {
  double step_ms = r->steps ? r->train_ms / (double)r->steps : 0.0;
  if (r->train_ms > o->budget_train_s * 1e3 + step_ms)
    findings_add(f, "TRAIN_OVER_BUDGET", SEV_ERROR, NULL, 0,
                 "training took %.0f ms on the replay's clock, over %.0f ms plus one step (%.0f ms)",
                 r->train_ms, o->budget_train_s * 1e3, step_ms);
  double eval_ms = total_ms - r->train_ms;
  if (eval_ms > o->budget_eval_s * 1e3)
    findings_add(f, "EVAL_OVER_BUDGET", SEV_ERROR, NULL, 0,
                 "everything after training (export and evaluation) took %.0f ms, over %.0f ms",
                 eval_ms, o->budget_eval_s * 1e3);
}

static json_t *replay_json(const replay_run_opts *o, const manifest *orig, const char *out_dir,
                           const train_result *r, double total_ms, const finding_list *f) {
  char head[SHA256_HEX_LEN + 1], orig_head[SHA256_HEX_LEN + 1];
  sha256_hex(r->chain, head);
  sha256_hex(orig->head, orig_head);
  json_t *summary = json_pack(
      "{s:s,s:s,s:{s:s,s:I},s:{s:s,s:s,s:I},s:i,s:{s:f,s:f,s:f},s:{s:f,s:f}}", "type",
      "pgolf/replay/v1", "mode", "pgolf-run", "original", "manifest", o->manifest_path,
      "steps", (json_int_t)orig->n_steps, "replay", "out_dir", out_dir, "chain", head, "steps",
      (json_int_t)r->steps, "threads", o->threads, "timing_ms", "train", r->train_ms,
      "after_train", total_ms - r->train_ms, "total", total_ms, "budgets_s", "train",
      o->budget_train_s, "eval", o->budget_eval_s);
  json_object_set_new(json_object_get(summary, "original"), "chain", json_string(orig_head));
  return findings_json(o->manifest_path, f, summary);
}

static void default_paths(const char *manifest_path, char *out_dir, size_t cap_dir,
                          char *replay_path, size_t cap) {
  size_t n = strlen(manifest_path);
  int json_suffix = n > 5 && !strcmp(manifest_path + n - 5, ".json");
  int stem = (int)(json_suffix ? n - 5 : n);
  snprintf(replay_path, cap, "%.*s.replay.json", stem, manifest_path);
  if (out_dir) snprintf(out_dir, cap_dir, "%.*s.replay.d", stem, manifest_path);
}

static int run_and_compare(const replay_run_opts *o, const manifest *orig, const char *out_dir,
                           finding_list *f, json_t **out_json, pg_error *err) {
  train_options to = {0};
  if (config_from_manifest(orig, o, &to.cfg, o->manifest_path, err)) return -1;
  to.out_dir = out_dir;
  to.quiet = o->quiet;
  const json_t *rec_dev = json_object_get(orig->environment, "device");
  const char *kind = json_string_value(json_object_get(rec_dev, "kind"));
  to.device_cuda = o->device ? !strcmp(o->device, "cuda") : kind && !strcmp(kind, "cuda");
  if (o->threads > 0) omp_set_num_threads(o->threads);
  train_result r;
  double t0 = now_ms();
  if (train_run(&to, &r, err)) return -1;
  double total_ms = now_ms() - t0;
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", out_dir, TRAIN_MANIFEST_NAME);
  manifest_doc rep;
  if (manifest_load(path, &rep, err)) return -1;
  int env_differs = replay_compare_device(rec_dev, json_object_get(rep.m.environment, "device"), f);
  compare_chains(orig, &rep.m, env_differs, f);
  compare_artifacts(orig, &rep.m, f);
  compare_metric(orig, &rep.m, "val_loss_bits", f);
  compare_metric(orig, &rep.m, "val_bpb_bits", f);
  check_budgets(o, &r, total_ms, f);
  manifest_doc_free(&rep);
  *out_json = replay_json(o, orig, out_dir, &r, total_ms, f);
  return 0;
}

int replay_pgolf_run(const replay_run_opts *o, finding_list *f, char *replay_path, size_t cap,
                     pg_error *err) {
  manifest_doc doc;
  if (manifest_load(o->manifest_path, &doc, err)) return -1;
  if (doc.is_envelope && !doc.payload_ok) {
    *err = doc.payload_err;
    manifest_doc_free(&doc);
    return -1;
  }
  /* A manifest whose own chain is broken is not worth re-running. */
  verify_report vr = {0};
  manifest_verify_chain(&doc.m, o->manifest_path, &vr);
  for (size_t i = 0; i < vr.n; i++)
    if (vr.items[i].failed)
      findings_add(f, "MANIFEST_INVALID", SEV_ERROR, NULL, 0, "%s", vr.items[i].e.msg);
  verify_report_free(&vr);
  char out_dir[4096];
  default_paths(o->manifest_path, o->out_dir ? NULL : out_dir, sizeof out_dir, replay_path, cap);
  if (o->out_dir) snprintf(out_dir, sizeof out_dir, "%s", o->out_dir);
  json_t *j = NULL;
  int rc = findings_count(f, SEV_ERROR) ? 0 : run_and_compare(o, &doc.m, out_dir, f, &j, err);
  if (!rc && !j) j = replay_json(o, &doc.m, out_dir, &(train_result){0}, 0.0, f);
  if (!rc) {
    char *text;
    size_t len;
    rc = json_write_pretty(j, &text, &len, err);
    if (!rc) {
      rc = file_write_atomic(replay_path, text, len, 0644, err);
      free(text);
    }
  }
  json_decref(j);
  manifest_doc_free(&doc);
  return rc;
}

static const char RUN_USAGE[] =
    "pgolf replay MANIFEST [--threads N] [--out DIR] [--data DIR]\n"
    "             [--tokenizer MODEL] [--budget-train S] [--budget-eval S]\n"
    "             [--device cpu|cuda] [--json] [--quiet]";
static const char RUN_ABOUT[] =
    "Re-runs a pgolf training run with the configuration, seed and step count its\n"
    "manifest records, compares the loss chain step by step (naming the first step\n"
    "that differs), the artifact bytes and the final metric bit for bit, and checks\n"
    "the budgets on this process's clock. The replay manifest goes beside the\n"
    "original as NAME.replay.json. A run recorded on a GPU re-runs on this\n"
    "machine's GPU (one process, whatever the run's count); every difference\n"
    "from the recorded device, driver, cuBLASLt version and per-product\n"
    "algorithm is a REPLAY_ENVIRONMENT warning, since the bits are a contract\n"
    "only where they all agree.";
static const char RUN_FOOTER[] =
    "Exit 0 identical, 1 findings, 2 input error.\n"
    "(External submissions: pgolf replay --record DIR --seed S -- CMD ...)";

/* CLI_OK, CLI_HELP (printed) or CLI_ERROR (in err). */
static int parse_run_opts(int argc, char **argv, replay_run_opts *o, int *json, pg_error *err) {
  *o = (replay_run_opts){.budget_train_s = CHALLENGE_TRAIN_LIMIT_S,
                         .budget_eval_s = CHALLENGE_EVAL_LIMIT_S};
  cli_args manifests;
  const cli_option opts[] = {
      CLI_UNSIGNED("threads", 0, &o->threads, "N", 1, 1024,
                   "OpenMP threads (the results do not depend on it)"),
      CLI_STRING("out", 0, &o->out_dir, "DIR",
                 "where the re-run writes (default: MANIFEST minus .json,\n"
                 "plus .replay.d)"),
      CLI_STRING("data", 0, &o->data, "DIR", "the data (default: where the manifest says)"),
      CLI_STRING("tokenizer", 0, &o->tokenizer, "MODEL",
                 "the tokenizer (default: where the manifest says)"),
      CLI_DOUBLE("budget-train", 0, &o->budget_train_s, "S",
                 "training budget in seconds (default " CHALLENGE_TIME_LIMIT_TEXT ")"),
      CLI_DOUBLE("budget-eval", 0, &o->budget_eval_s, "S",
                 "evaluation budget in seconds (default " CHALLENGE_TIME_LIMIT_TEXT ")"),
      CLI_FLAG("json", 0, json, "print the replay manifest"),
      CLI_FLAG("quiet", 0, &o->quiet, "no training log lines"),
      CLI_STRING("device", 0, &o->device, "cpu|cuda",
                 "where to re-run (default: the device the run recorded)"),
      CLI_ARGS(&manifests, "MANIFEST", NULL),
      CLI_END};
  const cli_command cmd = {.name = "replay",
                           .usage = RUN_USAGE,
                           .about = RUN_ABOUT,
                           .options = opts,
                           .footer = RUN_FOOTER};
  int r = cli_parse(&cmd, argc, argv, err);
  if (r != CLI_OK) return r;
  if (!(o->budget_train_s > 0))
    return cli_fail(err, &cmd, "--budget-train needs a positive number of seconds, got %g",
                    o->budget_train_s);
  if (!(o->budget_eval_s > 0))
    return cli_fail(err, &cmd, "--budget-eval needs a positive number of seconds, got %g",
                    o->budget_eval_s);
  if (o->device && strcmp(o->device, "cpu") && strcmp(o->device, "cuda"))
    return cli_fail(err, &cmd, "--device wants cpu or cuda, got '%s'", o->device);
  if (manifests.n != 1) return cli_fail(err, &cmd, "expected exactly one MANIFEST");
  o->manifest_path = manifests.v[0];
  return CLI_OK;
}

int replay_run_main(int argc, char **argv) {
  replay_run_opts o;
  int json = 0;
  pg_error err;
  int pr = parse_run_opts(argc, argv, &o, &json, &err);
  if (pr != CLI_OK) return cli_status(pr, &err);
  finding_list f = {0};
  char replay_path[4096];
  if (replay_pgolf_run(&o, &f, replay_path, sizeof replay_path, &err)) {
    pg_error_print(&err);
    findings_free(&f);
    return PG_EXIT_USAGE;
  }
  findings_sort(&f);
  if (json) {
    uint8_t *text;
    size_t len;
    if (!file_read_all(replay_path, 64u << 20, &text, &len, &err)) {
      fwrite(text, 1, len, stdout);
      free(text);
    }
  } else {
    char title[4200];
    snprintf(title, sizeof title, "replay of %s", o.manifest_path);
    findings_print_table(stdout, title, &f);
    printf("replay manifest: %s\n", replay_path);
  }
  int code = findings_count(&f, SEV_ERROR) ? PG_EXIT_CHECK_FAILED : PG_EXIT_OK;
  findings_free(&f);
  return code;
}
