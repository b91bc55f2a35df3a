/* Gathering a report (verifier/report_html.h) from its inputs. Each input
 * is recognised by its content, not its name: a run manifest (or a DSSE
 * envelope around one) through the manifest reader, a replay manifest by
 * kind "pgolf/replay/v1", a check result by its folder and findings. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/json_read.h"
#include "manifests/manifest.h"
#include "verifier/report_html.h"

const char *const REPORT_PALETTE[REPORT_PALETTE_N] = {
    "#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4",
    "#00a0b0", "#f032e6", "#9a6324", "#808000", "#000075"};

static report_run *new_run(report *r, report_kind kind, const char *source, pg_error *err) {
  if (PG_GROW(r->runs, r->cap_runs, r->n_runs + 1, 8))
    return pg_fail(err, source, -1, "out of memory"), NULL;
  report_run *x = &r->runs[r->n_runs++];
  memset(x, 0, sizeof *x);
  x->kind = kind;
  x->seed = -1;
  x->val_bpb = x->val_loss = x->train_s = x->eval_s = x->artifact_bytes = NAN;
  snprintf(x->source, sizeof x->source, "%s", source);
  return x;
}

static double num_at(json_t *o, const char *key) {
  json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
  return json_is_number(v) ? json_number_value(v) : NAN;
}

static char *dup_or_null(json_t *v) { return json_is_string(v) ? strdup(json_string_value(v)) : NULL; }

static int add_finding(report *r, const char *source, json_t *f, pg_error *err) {
  if (!json_is_object(f)) return 0;
  if (PG_GROW(r->findings, r->cap_findings, r->n_findings + 1, 16))
    return pg_fail(err, source, -1, "out of memory");
  report_finding *x = &r->findings[r->n_findings++];
  x->source = strdup(source);
  x->code = dup_or_null(json_object_get(f, "code"));
  x->severity = dup_or_null(json_object_get(f, "severity"));
  x->message = dup_or_null(json_object_get(f, "message"));
  x->file = dup_or_null(json_object_get(f, "file"));
  json_t *line = json_object_get(f, "line");
  x->line = json_is_integer(line) ? json_integer_value(line) : 0;
  return 0;
}

static int add_findings(report *r, const char *source, json_t *arr, pg_error *err) {
  size_t i;
  json_t *f;
  json_array_foreach(arr, i, f) if (add_finding(r, source, f, err)) return -1;
  return 0;
}

static int alloc_curve(report_run *x, size_t n, pg_error *err) {
  if (!n) return 0;
  x->steps = malloc(n * sizeof *x->steps);
  x->losses = malloc(n * sizeof *x->losses);
  if (!x->steps || !x->losses) return pg_fail(err, x->source, -1, "out of memory");
  x->n = n;
  return 0;
}

static float f32_of_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

/* ---- run manifests ---- */

static int add_manifest(report *r, const char *path, const manifest *m, pg_error *err) {
  report_run *x = new_run(r, REPORT_RUN, path, err);
  if (!x) return -1;
  x->seed = (int64_t)m->seed;
  snprintf(x->label, sizeof x->label, "run seed %llu", (unsigned long long)m->seed);
  x->val_bpb = num_at(m->evaluation, "val_bpb");
  x->val_loss = num_at(m->evaluation, "val_loss");
  x->train_s = num_at(m->timing, "train_ms") / 1000;
  x->eval_s = num_at(m->timing, "final_eval_ms") / 1000;
  json_t *art = json_object_get(json_object_get(m->root, "predicate"), "artifact");
  x->artifact_bytes = num_at(art, "total_bytes");
  if (isnan(x->artifact_bytes) && m->has_artifact) x->artifact_bytes = (double)m->artifact.bytes;
  if (alloc_curve(x, m->n_steps, err)) return -1;
  for (size_t i = 0; i < m->n_steps; i++) {
    x->steps[i] = (double)m->steps[i].step;
    x->losses[i] = f32_of_bits(m->steps[i].loss_bits);
  }
  return 0;
}

static int add_run_manifest(report *r, const char *path, pg_error *err) {
  manifest_doc d;
  if (manifest_load(path, &d, err)) return -1;
  int rc;
  if (d.is_envelope && !d.payload_ok) {
    *err = d.payload_err;
    rc = -1;
  } else {
    rc = add_manifest(r, path, &d.m, err);
  }
  manifest_doc_free(&d);
  return rc;
}

/* ---- replay manifests ---- */

static int replay_curve(report_run *x, json_t *losses, pg_error *err) {
  if (!json_is_array(losses)) return 0;
  if (alloc_curve(x, json_array_size(losses), err)) return -1;
  size_t i, k = 0;
  json_t *l;
  json_array_foreach(losses, i, l) {
    double s = num_at(l, "step"), v = num_at(l, "loss");
    if (isnan(s)) continue;
    x->steps[k] = s, x->losses[k] = v, k++;
  }
  x->n = k;
  return 0;
}

/* hardware.samples.samples rows [t_ms, gpu, util_gpu, util_mem, mem, power_mw,
 * sm_mhz, throttle] (kernels/nvml.h), one row per GPU per instant: the
 * mean over the GPUs of one instant. */
static int replay_samples(report_run *x, json_t *hw, pg_error *err) {
  json_t *name = json_object_get(json_array_get(json_object_get(hw, "gpus"), 0), "name");
  if (json_is_string(name)) snprintf(x->hw_name, sizeof x->hw_name, "%s", json_string_value(name));
  json_t *rows = json_object_get(json_object_get(hw, "samples"), "samples");
  size_t n = json_array_size(rows);
  if (!n) return 0;
  x->hw_t = malloc(n * sizeof *x->hw_t);
  x->hw_util = malloc(n * sizeof *x->hw_util);
  x->hw_power = malloc(n * sizeof *x->hw_power);
  if (!x->hw_t || !x->hw_util || !x->hw_power) return pg_fail(err, x->source, -1, "out of memory");
  size_t k = 0, at = 0;
  double t_prev = NAN, util = 0, power = 0;
  for (size_t i = 0; i <= n; i++) {
    json_t *row = i < n ? json_array_get(rows, i) : NULL;
    double t = row ? json_number_value(json_array_get(row, 0)) : NAN;
    if (i > at && (i == n || t != t_prev)) { /* close the instant [at, i) */
      double g = (double)(i - at);
      x->hw_t[k] = t_prev / 1000, x->hw_util[k] = util / g, x->hw_power[k] = power / g / 1000;
      k++, at = i, util = power = 0;
    }
    if (!row) break;
    t_prev = t;
    util += json_number_value(json_array_get(row, 2));
    power += json_number_value(json_array_get(row, 5));
  }
  x->n_hw = k;
  return 0;
}

static int add_replay(report *r, const char *path, json_t *j, pg_error *err) {
  report_run *x = new_run(r, REPORT_REPLAY, path, err);
  if (!x) return -1;
  json_t *seed = json_object_get(json_object_get(j, "record"), "seed");
  if (json_is_integer(seed)) x->seed = json_integer_value(seed);
  if (x->seed >= 0) snprintf(x->label, sizeof x->label, "replay seed %lld", (long long)x->seed);
  else snprintf(x->label, sizeof x->label, "replay");
  json_t *v = json_object_get(j, "verdict");
  if (json_is_string(v)) snprintf(x->verdict, sizeof x->verdict, "%s", json_string_value(v));
  json_t *res = json_object_get(j, "result");
  x->val_bpb = num_at(res, "val_bpb");
  x->val_loss = num_at(res, "val_loss");
  json_t *t = json_object_get(j, "timings");
  x->train_s = num_at(t, "train_ms") / 1000;
  x->eval_s = num_at(t, "eval_ms") / 1000;
  x->artifact_bytes = num_at(json_object_get(j, "accounting"), "total_bytes");
  if (replay_curve(x, json_object_get(j, "losses"), err)) return -1;
  if (replay_samples(x, json_object_get(j, "hardware"), err)) return -1;
  return add_findings(r, path, json_object_get(j, "findings"), err);
}

/* ---- check results ---- */

static int add_check_logs(report *r, const char *source, json_t *logs, pg_error *err) {
  size_t i;
  json_t *l;
  json_array_foreach(logs, i, l) {
    report_run *x = new_run(r, REPORT_CHECK_LOG, source, err);
    if (!x) return -1;
    json_t *seed = json_object_get(l, "seed"), *file = json_object_get(l, "file");
    if (json_is_integer(seed)) x->seed = json_integer_value(seed);
    snprintf(x->label, sizeof x->label, "%s", json_is_string(file) ? json_string_value(file) : "log");
    x->val_bpb = num_at(l, "val_bpb");
    x->train_s = num_at(l, "train_ms") / 1000;
  }
  return 0;
}

static int add_check_one(report *r, const char *path, json_t *c, pg_error *err) {
  json_t *folder = json_object_get(c, "folder"), *findings = json_object_get(c, "findings");
  if (!json_is_string(folder) || !json_is_array(findings))
    return pg_fail(err, path, -1, "a check result needs \"folder\" and \"findings\"");
  char source[PG_ERR_PATH];
  snprintf(source, sizeof source, "%s", json_string_value(folder));
  if (add_findings(r, source, findings, err)) return -1;
  json_t *logs = json_object_get(json_object_get(c, "summary"), "logs");
  return json_is_array(logs) ? add_check_logs(r, source, logs, err) : 0;
}

static int add_check(report *r, const char *path, json_t *j, pg_error *err) {
  if (json_is_object(j)) return add_check_one(r, path, j, err);
  size_t i;
  json_t *c;
  json_array_foreach(j, i, c) if (add_check_one(r, path, c, err)) return -1;
  return 0;
}

int report_add_input(report *r, const char *path, pg_error *err) {
  json_t *j;
  if (json_read_file(path, REPORT_MAX_INPUT_BYTES, &j, err)) return -1;
  int rc = report_add_json(r, path, j, err);
  json_decref(j);
  return rc;
}

int report_add_json(report *r, const char *path, json_t *j, pg_error *err) {
  int rc;
  json_t *kind = json_is_object(j) ? json_object_get(j, "kind") : NULL;
  if (json_is_object(j) && (json_object_get(j, "_type") || json_object_get(j, "payloadType")))
    rc = add_run_manifest(r, path, err);
  else if (json_is_string(kind) && !strcmp(json_string_value(kind), "pgolf/replay/v1"))
    rc = add_replay(r, path, j, err);
  else if (json_is_array(j) || (json_is_object(j) && json_object_get(j, "findings")))
    rc = add_check(r, path, j, err);
  else
    rc = pg_fail(err, path, -1,
                 "neither a run manifest, a replay manifest (kind pgolf/replay/v1) nor a "
                 "check result (pgolf check --json)");
  return rc;
}

/* ---- significance ---- */

int report_significance_compute(report *r, const double *record, size_t n_record,
                                double margin_nats, double tokens_per_byte, int have_tpb,
                                double alpha, pg_error *err) {
  report_significance *s = &r->sig;
  memset(s, 0, sizeof *s);
  s->margin_nats = margin_nats, s->alpha = alpha;
  double *v = malloc((r->n_runs + 1) * sizeof *v), tpb_sum = 0;
  size_t n = 0, n_tpb = 0;
  if (!v) return pg_fail(err, "", -1, "out of memory");
  /* The training runs given as manifests; without any, the logs of the
   * checked folders. Replays re-run those and would count a seed twice. */
  report_kind use = REPORT_CHECK_LOG;
  for (size_t i = 0; i < r->n_runs; i++)
    if (r->runs[i].kind == REPORT_RUN) use = REPORT_RUN;
  for (size_t i = 0; i < r->n_runs; i++) {
    const report_run *x = &r->runs[i];
    if (x->kind != use || !isfinite(x->val_bpb)) continue;
    v[n++] = x->val_bpb;
    if (isfinite(x->val_loss) && x->val_bpb > 0) tpb_sum += x->val_loss / (x->val_bpb * M_LN2), n_tpb++;
  }
  s->tokens_per_byte = have_tpb ? tokens_per_byte : (n_tpb == n && n ? tpb_sum / (double)n_tpb : NAN);
  s->have_tpb = isfinite(s->tokens_per_byte);
  pg_error local;
  if (n >= 2 && summarize_sample(v, n, "runs", &s->new_s, &local) == 0) s->have_new = 1;
  free(v);
  if (!s->have_new) {
    snprintf(s->note, sizeof s->note, "fewer than 2 training runs with a val_bpb");
    return 0;
  }
  if (!record) {
    snprintf(s->note, sizeof s->note, "no record given (pgolf report --record V1,V2,...)");
    return 0;
  }
  if (summarize_sample(record, n_record, "--record", &s->rec_s, err)) return -1;
  s->have_record = 1;
  if (margin_nats != 0 && !s->have_tpb) {
    snprintf(s->note, sizeof s->note,
             "no tokens per byte (the runs lack val_loss): pass --tokens-per-byte");
    return 0;
  }
  double margin = margin_nats == 0 ? 0 : margin_nats * s->tokens_per_byte / M_LN2;
  if (welch_margin_test(s->new_s, s->rec_s, margin, alpha, &s->t, err)) return -1;
  s->have_test = 1;
  return 0;
}

void report_free(report *r) {
  for (size_t i = 0; i < r->n_runs; i++) {
    free(r->runs[i].steps), free(r->runs[i].losses);
    free(r->runs[i].hw_t), free(r->runs[i].hw_util), free(r->runs[i].hw_power);
  }
  for (size_t i = 0; i < r->n_findings; i++) {
    report_finding *f = &r->findings[i];
    free(f->source), free(f->code), free(f->severity), free(f->message), free(f->file);
  }
  free(r->runs);
  free(r->findings);
  memset(r, 0, sizeof *r);
}
