/* The replay manifest: what ran, where, on what, what it printed and
 * produced, when, and the verdict. Timings are in milliseconds on the
 * replay's clock (0 = process start); null where an event never happened.
 *
 *   {kind: "pgolf/replay/v1", verdict, record{folder, seed, command[]},
 *    environment{pgolf_version, source_digest, compiler, kernel, cpus, bwrap},
 *    budgets{train_s, eval_s, grace_s, hard_limit_s, tolerance_bpb},
 *    code{tree_sha256, entry, entry_bytes, files[{path, bytes, sha256}]},
 *    data{dir, files[{name, bytes, sha256}]}, tokenizer{path, bytes, sha256},
 *    log{source, lines, sha256}, losses[{step, loss, line, ms}],
 *    timings{process_start_ms, first_train_step_ms, end_of_training_ms,
 *            end_of_evaluation_ms, exit_ms, killed_at_ms, train_ms, train_logged_ms,
 *            validation_pauses_ms, eval_ms},
 *    produced[{path, bytes, sha256, created_ms, written_ms}],
 *    artifact{path, bytes, sha256} | null,
 *    accounting{code_bytes, artifact_bytes, total_bytes, limit},
 *    result{prefix, val_loss, val_bpb, line} | null, claim{val_bpb, source} | null,
 *    exit{exited, status, signal, killed}, findings[{code, severity, message, file, line}]} */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/challenge.h"
#include "common/grow.h"
#include "common/version.h"
#include "common/hash_pool.h"
#include "verifier/replay_external.h"

/* Whole milliseconds: the budgets are seconds, and integers print exactly. */
static json_t *ms_or_null(double ms) { return isfinite(ms) ? json_integer((json_int_t)llround(ms)) : json_null(); }

static json_t *hex_digest(const uint8_t d[SHA256_LEN]) {
  char hex[SHA256_HEX_LEN + 1];
  sha256_hex(d, hex);
  return json_string(hex);
}

static json_t *file_json(const replay_file *f, int timed) {
  json_t *o = json_object();
  json_object_set_new(o, "path", json_string(f->rel));
  json_object_set_new(o, "bytes", json_integer((json_int_t)f->bytes));
  json_object_set_new(o, "sha256", hex_digest(f->sha256));
  if (timed) {
    json_object_set_new(o, "created_ms", ms_or_null(f->created_ms));
    json_object_set_new(o, "written_ms", ms_or_null(f->written_ms));
  }
  return o;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file directly in the data folder, hashed in parallel. */
static json_t *data_json(const char *dir) {
  json_t *o = json_object(), *files = json_array();
  json_object_set_new(o, "dir", json_string(dir));
  json_object_set_new(o, "files", files);
  DIR *d = opendir(dir);
  if (!d) return json_object_set_new(o, "error", json_string("cannot open")), o;
  char **paths = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < HASH_POOL_MAX_JOBS * 64) {
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    if (e->d_name[0] == '.' || stat(p, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (PG_GROW(paths, cap, n + 1, 64)) break;
    if (!(paths[n] = strdup(p))) break;
    n++;
  }
  closedir(d);
  qsort(paths, n, sizeof *paths, cmp_str);
  hash_result *res = n ? calloc(n, sizeof *res) : NULL;
  if (res) hash_pool_run((const char *const *)paths, n, 0, res);
  for (size_t i = 0; i < n; i++) {
    json_t *f = json_object();
    json_object_set_new(f, "name", json_string(strrchr(paths[i], '/') + 1));
    if (res && !res[i].failed) {
      json_object_set_new(f, "bytes", json_integer((json_int_t)res[i].size));
      json_object_set_new(f, "sha256", hex_digest(res[i].digest));
    } else
      json_object_set_new(f, "error", json_string(res ? res[i].err.msg : "out of memory"));
    json_array_append_new(files, f);
    free(paths[i]);
  }
  free(res);
  free(paths);
  return o;
}

static json_t *tokenizer_json(const char *path) {
  json_t *o = json_object();
  uint8_t d[SHA256_LEN];
  uint64_t size;
  pg_error e;
  json_object_set_new(o, "path", json_string(path));
  if (sha256_file(path, d, &size, &e) == 0) {
    json_object_set_new(o, "bytes", json_integer((json_int_t)size));
    json_object_set_new(o, "sha256", hex_digest(d));
  } else
    json_object_set_new(o, "error", json_string(e.msg));
  return o;
}

static json_t *environment_json(const char *bwrap) {
  json_t *o = json_object();
  struct utsname u;
  json_object_set_new(o, "pgolf_version", json_string(PGOLF_VERSION));
  json_object_set_new(o, "source_digest", json_string(pgolf_source_digest()));
  json_object_set_new(o, "compiler", json_string(pgolf_compiler()));
  if (uname(&u) == 0) {
    char k[600];
    snprintf(k, sizeof k, "%s %s %s", u.sysname, u.release, u.machine);
    json_object_set_new(o, "kernel", json_string(k));
  }
  json_object_set_new(o, "cpus", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
  json_object_set_new(o, "bwrap", json_string(bwrap));
  return o;
}

static json_t *losses_json(const replay_run *r) {
  const replay_stream *s = *r->log_rel && r->log.n_lines ? &r->log : &r->out;
  json_t *a = json_array();
  for (size_t i = 0; i < r->parsed.n_train; i++) {
    const log_train_step *t = &r->parsed.train[i];
    json_t *o = json_object();
    json_object_set_new(o, "step", json_integer(t->step));
    json_object_set_new(o, "loss", json_real(t->loss.v));
    json_object_set_new(o, "line", json_integer(t->line));
    json_object_set_new(o, "ms", ms_or_null(replay_stream_line_ms(s, t->line)));
    json_array_append_new(a, o);
  }
  return a;
}

static json_t *timings_json(const replay_run *r, const replay_timings *t) {
  json_t *o = json_object();
  json_object_set_new(o, "process_start_ms", json_integer(0));
  json_object_set_new(o, "first_train_step_ms", ms_or_null(t->first_step_ms));
  json_object_set_new(o, "end_of_training_ms", ms_or_null(t->end_train_ms));
  json_object_set_new(o, "end_of_evaluation_ms", ms_or_null(t->end_eval_ms));
  json_object_set_new(o, "exit_ms", ms_or_null(r->exit_ms));
  json_object_set_new(o, "killed_at_ms", ms_or_null(r->killed ? r->killed_ms : NAN));
  json_object_set_new(o, "train_ms", ms_or_null(t->train_external_ms));
  json_object_set_new(o, "train_logged_ms", ms_or_null(t->train_logged_ms));
  json_object_set_new(o, "validation_pauses_ms", ms_or_null(t->val_pause_ms));
  json_object_set_new(o, "eval_ms", ms_or_null(t->eval_external_ms));
  return o;
}

static json_t *strings_json(char *const *v) {
  json_t *a = json_array();
  for (size_t i = 0; v && v[i]; i++) json_array_append_new(a, json_string(v[i]));
  return a;
}

static json_t *head_json(const replay_ext_opts *o, const char *bwrap, const replay_run *r) {
  json_t *m = json_object(), *rec = json_object(), *b = json_object(), *code = json_object();
  json_object_set_new(m, "kind", json_string("pgolf/replay/v1"));
  json_object_set_new(m, "verdict", json_null());
  json_object_set_new(rec, "folder", json_string(o->record_dir));
  json_object_set_new(rec, "seed", json_integer((json_int_t)o->seed));
  json_object_set_new(rec, "run_id", json_string(r->run_id));
  json_object_set_new(rec, "command", strings_json(o->cmd));
  json_object_set_new(m, "record", rec);
  json_object_set_new(m, "environment", environment_json(bwrap));
  json_object_set_new(b, "train_s", json_real(o->budget_train_s));
  json_object_set_new(b, "eval_s", json_real(o->budget_eval_s));
  json_object_set_new(b, "grace_s", json_real(o->grace_s));
  json_object_set_new(b, "hard_limit_s", json_real(r->limit_ms / 1e3));
  json_object_set_new(b, "tolerance_bpb", json_real(o->tolerance_bpb));
  json_object_set_new(m, "budgets", b);
  json_t *files = json_array();
  for (size_t i = 0; i < r->code.n; i++) json_array_append_new(files, file_json(&r->code.v[i], 0));
  json_object_set_new(code, "tree_sha256", hex_digest(r->code_tree));
  json_object_set_new(code, "files", files);
  json_object_set_new(m, "code", code);
  json_object_set_new(m, "data", o->data_dir ? data_json(o->data_dir) : json_null());
  json_object_set_new(m, "tokenizer", o->tokenizer ? tokenizer_json(o->tokenizer) : json_null());
  return m;
}

json_t *replay_manifest_json(const replay_ext_opts *o, const char *bwrap, const replay_run *r,
                             const replay_timings *t, const replay_verdict_in *v,
                             const finding_list *f) {
  json_t *m = head_json(o, bwrap, r);
  json_t *code = json_object_get(m, "code");
  json_object_set_new(code, "entry", v->code_file ? json_string(v->code_file) : json_null());
  json_object_set_new(code, "entry_bytes", json_integer(v->code_bytes));

  const replay_stream *s = *r->log_rel && r->log.n_lines ? &r->log : &r->out;
  json_t *log = json_object();
  uint8_t d[SHA256_LEN];
  sha256_buf(s->text ? s->text : "", s->len, d);
  json_object_set_new(log, "source", json_string(s == &r->log ? r->log_rel : "stdout"));
  json_object_set_new(log, "lines", json_integer((json_int_t)s->n_lines));
  json_object_set_new(log, "sha256", hex_digest(d));
  json_object_set_new(m, "log", log);
  json_object_set_new(m, "losses", losses_json(r));
  json_object_set_new(m, "timings", timings_json(r, t));

  json_t *produced = json_array();
  for (size_t i = 0; i < r->produced.n; i++)
    json_array_append_new(produced, file_json(&r->produced.v[i], 1));
  json_object_set_new(m, "produced", produced);
  json_object_set_new(m, "artifact", v->artifact ? file_json(v->artifact, 1) : json_null());

  json_t *acc = json_object();
  int64_t art = v->artifact ? (int64_t)v->artifact->bytes : -1;
  json_object_set_new(acc, "code_bytes", json_integer(v->code_bytes));
  json_object_set_new(acc, "artifact_bytes", json_integer(art));
  json_object_set_new(acc, "total_bytes",
                      art >= 0 ? json_integer(art + (v->code_bytes > 0 ? v->code_bytes : 0)) : json_null());
  json_object_set_new(acc, "limit", json_integer(CHALLENGE_SIZE_LIMIT_BYTES));
  json_object_set_new(m, "accounting", acc);

  json_t *res = json_null();
  if (v->final) {
    res = json_object();
    json_object_set_new(res, "prefix", json_string(v->final->prefix));
    double loss = v->final->val_loss.v; /* NaN: a score line without val_loss */
    json_object_set_new(res, "val_loss", isfinite(loss) ? json_real(loss) : json_null());
    json_object_set_new(res, "val_bpb", json_real(v->final->val_bpb.v));
    json_object_set_new(res, "line", json_integer(v->final->line));
  }
  json_object_set_new(m, "result", res);
  json_t *claim = json_null();
  if (isfinite(v->claim_bpb)) {
    claim = json_object();
    json_object_set_new(claim, "val_bpb", json_real(v->claim_bpb));
    json_object_set_new(claim, "source", json_string(v->claim_source));
  }
  json_object_set_new(m, "claim", claim);

  json_t *ex = json_object();
  json_object_set_new(ex, "exited", json_boolean(r->exited));
  json_object_set_new(ex, "status", r->exited ? json_integer(r->status) : json_null());
  json_object_set_new(ex, "signal", r->signaled ? json_integer(r->status) : json_null());
  json_object_set_new(ex, "killed_at_limit", json_boolean(r->killed));
  json_object_set_new(m, "exit", ex);
  json_t *shared = findings_json(o->record_dir, f, NULL); /* the same shape `pgolf check` prints */
  json_object_set(m, "findings", json_object_get(shared, "findings"));
  json_decref(shared);
  json_object_set_new(m, "verdict", json_string(findings_count(f, SEV_ERROR) ? "fail" : "pass"));
  return m;
}
