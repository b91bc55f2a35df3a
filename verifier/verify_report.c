/* Building a verify result (verifier/verify_report.h): the static check,
 * the audits of the score dumps, the significance step, and the replays
 * added after. The renderings are in verify_render.c. */
#include "verifier/verify_report.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/challenge.h"
#include "common/json_read.h"
#include "manifests/score_dump.h"

#define DUMP_SCAN_DEPTH 4

const char *verify_status_name(verify_status s) {
  return s == VERIFY_PASS ? "pass" : s == VERIFY_FAIL ? "fail" : "not run";
}

verify_status verify_verdict(const verify_result *r) {
  for (int i = 0; i < VERIFY_N_STEPS; i++)
    if (r->steps[i].status == VERIFY_FAIL) return VERIFY_FAIL;
  return VERIFY_PASS;
}

static void step_set(verify_result *r, int step, verify_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void step_set(verify_result *r, int step, verify_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  r->steps[step].status = st;
  vsnprintf(r->steps[step].detail, sizeof r->steps[step].detail, fmt, ap);
  va_end(ap);
}

/* Findings into the report, under source (a folder, a dump, a manifest). */
static int report_findings(verify_result *r, const char *source, const finding_list *f,
                           json_t *summary, pg_error *err) {
  json_t *j = findings_json(source, f, summary);
  if (!j) return pg_fail(err, source, -1, "out of memory");
  int rc = report_add_json(&r->rep, source, j, err);
  json_decref(j);
  return rc;
}

/* ---- the check and the significance steps ---- */

static void check_step(verify_result *r) {
  size_t errors = 0, warnings = 0;
  const char *first = NULL;
  for (size_t i = 0; i < r->chk.f.n; i++) {
    const finding *x = &r->chk.f.v[i];
    if (!strcmp(x->code, "SIGNIFICANCE")) continue;
    if (x->sev == SEV_ERROR && !errors++) first = x->code;
    warnings += x->sev == SEV_WARNING;
  }
  if (errors)
    step_set(r, VERIFY_CHECK, VERIFY_FAIL, "%zu error%s (first %s), %zu warning%s", errors,
             errors == 1 ? "" : "s", first, warnings, warnings == 1 ? "" : "s");
  else
    step_set(r, VERIFY_CHECK, VERIFY_PASS, "no errors, %zu warning%s; %zu log%s", warnings,
             warnings == 1 ? "" : "s", r->chk.s.n_logs, r->chk.s.n_logs == 1 ? "" : "s");
}

static void significance_step(verify_result *r) {
  if (!r->opts.against) {
    step_set(r, VERIFY_SIGNIFICANCE, VERIFY_NOT_RUN, "no record given (--against RECORD)");
    return;
  }
  const check_sig *c = &r->chk.sig;
  const finding *w = NULL;
  for (size_t i = 0; i < r->chk.f.n; i++)
    if (!strcmp(r->chk.f.v[i].code, "SIGNIFICANCE")) w = &r->chk.f.v[i];
  if (!c->computed) {
    step_set(r, VERIFY_SIGNIFICANCE, VERIFY_NOT_RUN, "%s", w ? w->message : "not computed");
    return;
  }
  const significance *s = &c->sig;
  char readme[160];
  if (s->have_readme)
    snprintf(readme, sizeof readme, "%s (p = %.4g)", s->readme_pass ? "met" : "not met",
             s->readme.p_margin);
  else
    snprintf(readme, sizeof readme, "unknown (no tokens per byte)");
  step_set(r, VERIFY_SIGNIFICANCE, s->practice_pass ? VERIFY_PASS : VERIFY_FAIL,
           "mean %.8f (n=%zu) vs %.8f (n=%zu): README rule (%g nats, p < %g) %s; practice "
           "(p < %g) %s (p = %.4g)",
           c->s_new.mean, c->s_new.n, c->s_rec.mean, c->s_rec.n, CHALLENGE_MARGIN_NATS,
           CHALLENGE_ALPHA, readme, CHALLENGE_PRACTICE_ALPHA,
           s->practice_pass ? "accepted" : "rejected", s->practice.p_margin);
}

/* ---- audits ---- */

/* The tokenizer for the audits: the one given, else the folder's only
 * *.model; NULL (why says) when neither. */
static const char *audit_tokenizer(const verify_result *r, char *buf, size_t cap, char *why,
                                   size_t why_cap) {
  if (r->opts.tokenizer) return r->opts.tokenizer;
  if (r->chk.s.n_tokenizers == 1) {
    snprintf(buf, cap, "%s/%s", r->folder, r->chk.s.tokenizers[0].rel);
    return buf;
  }
  snprintf(why, why_cap, "no tokenizer: the folder ships %s *.model; pass --tokenizer MODEL",
           r->chk.s.n_tokenizers ? "several" : "no");
  return NULL;
}

static void audit_step(verify_result *r) {
  size_t pass = 0, fail = 0, not_run = 0;
  const verify_audit *first_fail = NULL, *first_skip = NULL;
  for (size_t i = 0; i < r->n_audits; i++) {
    const verify_audit *a = &r->audits[i];
    if (a->status == VERIFY_PASS) pass++;
    else if (a->status == VERIFY_FAIL && !fail++) first_fail = a;
    else if (a->status == VERIFY_NOT_RUN && !not_run++) first_skip = a;
  }
  if (!r->n_audits) {
    step_set(r, VERIFY_AUDIT, VERIFY_NOT_RUN,
             "no score dump (a file beginning with PGSD) in the folder%s",
             r->n_replays ? " or among the replays' files" : "");
    return;
  }
  char more[64] = "";
  if (r->audits_left_out)
    snprintf(more, sizeof more, "; %zu more not audited (limit %d)", r->audits_left_out,
             VERIFY_MAX_AUDITS);
  if (fail)
    step_set(r, VERIFY_AUDIT, VERIFY_FAIL, "%zu of %zu dump%s fail%s (first %s)%s", fail,
             r->n_audits, r->n_audits == 1 ? "" : "s", fail == 1 ? "s" : "", first_fail->path,
             more);
  else if (not_run)
    step_set(r, VERIFY_AUDIT, VERIFY_NOT_RUN, "%zu of %zu dump%s not audited: %s: %s%s", not_run,
             r->n_audits, r->n_audits == 1 ? "" : "s", first_skip->path, first_skip->reason, more);
  else
    step_set(r, VERIFY_AUDIT, r->audits_left_out ? VERIFY_NOT_RUN : VERIFY_PASS,
             "%zu dump%s, every condition passes or has nothing to check%s", pass,
             pass == 1 ? "" : "s", more);
}

/* Audit the dump at path (shown as shown) and record the outcome. */
static int audit_one(verify_result *r, const char *path, const char *shown, pg_error *err) {
  if (r->n_audits == VERIFY_MAX_AUDITS) return r->audits_left_out++, 0;
  verify_audit *a = &r->audits[r->n_audits++];
  memset(a, 0, sizeof *a);
  snprintf(a->path, sizeof a->path, "%s", shown);
  a->status = VERIFY_NOT_RUN;
  char tok_buf[PATH_MAX];
  const char *tok = audit_tokenizer(r, tok_buf, sizeof tok_buf, a->reason, sizeof a->reason);
  if (!tok) return 0;
  if (!r->opts.val) {
    snprintf(a->reason, sizeof a->reason, "no validation split: pass --val DIR");
    return 0;
  }
  const char *val[1] = {r->opts.val};
  audit_request rq = {path, tok, NULL, NULL, val, 1, 0};
  audit_loaded l;
  pg_error why;
  if (audit_load(&rq, &l, &why)) {
    /* Input the audit cannot read is reported, never passed over. */
    snprintf(a->reason, sizeof a->reason, "cannot audit: %.200s%s%.280s", why.file,
             why.file[0] ? ": " : "", why.msg);
    audit_loaded_free(&l);
    return 0;
  }
  audit_input in = audit_make_input(&rq, &l);
  a->status = audit_run(&in, a->out) ? VERIFY_FAIL : VERIFY_PASS;
  audit_loaded_free(&l);
  finding_list f = {0};
  audit_to_findings(shown, a->out, &f);
  int rc = f.n ? report_findings(r, shown, &f, NULL, err) : 0;
  findings_free(&f);
  return rc;
}

/* Does the file begin with the score dump's magic? */
static int is_dump(const char *path) {
  char magic[4];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, magic, sizeof magic);
  close(fd);
  return n == 4 && !memcmp(magic, SCORE_DUMP_MAGIC, 4);
}

/* Audit every dump under dir (rel: its path as shown), in name order. */
static int audit_tree(verify_result *r, const char *dir, const char *rel, int depth,
                      pg_error *err) {
  if (depth > DUMP_SCAN_DEPTH) return 0;
  struct dirent **ents;
  int n = scandir(dir, &ents, NULL, alphasort);
  if (n < 0) return 0; /* the check already said what it could not read */
  int rc = 0;
  for (int i = 0; i < n; i++) {
    const char *name = ents[i]->d_name;
    char p[PATH_MAX], q[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    snprintf(q, sizeof q, "%s%s%s", rel, *rel ? "/" : "", name);
    struct stat st;
    if (!rc && name[0] != '.' && lstat(p, &st) == 0) {
      if (S_ISDIR(st.st_mode)) rc = audit_tree(r, p, q, depth + 1, err);
      else if (S_ISREG(st.st_mode) && is_dump(p)) rc = audit_one(r, p, q, err);
    }
    free(ents[i]);
  }
  free(ents);
  return rc;
}

/* ---- the folder ---- */

int verify_folder(const char *dir, const verify_opts *opts, verify_result *r, pg_error *err) {
  memset(r, 0, sizeof *r);
  snprintf(r->folder, sizeof r->folder, "%s", dir);
  r->opts = *opts;
  if (check_folder(dir, opts->track, opts->against, &r->chk, err)) return -1;
  check_step(r);
  significance_step(r);
  step_set(r, VERIFY_REPLAY, VERIFY_NOT_RUN, "not asked (--replay -- CMD...)");
  int rc = report_findings(r, dir, &r->chk.f, check_result_summary(&r->chk), err) ||
           audit_tree(r, dir, "", 0, err);
  if (!rc)
    rc = report_significance_compute(&r->rep, NULL, 0, CHALLENGE_MARGIN_NATS, 0, 0,
                                     CHALLENGE_ALPHA, err);
  if (rc) {
    verify_result_free(r);
    return -1;
  }
  if (r->rep.sig.have_new)
    snprintf(r->rep.sig.note, sizeof r->rep.sig.note,
             "the test against the record is the significance step above");
  audit_step(r);
  return 0;
}

/* ---- replays ---- */

static void replay_step(verify_result *r, const char *extra) {
  if (r->n_replays_failed)
    step_set(r, VERIFY_REPLAY, VERIFY_FAIL, "%zu of %zu replay%s fail%s%s", r->n_replays_failed,
             r->n_replays, r->n_replays == 1 ? "" : "s", r->n_replays_failed == 1 ? "s" : "",
             extra);
  else
    step_set(r, VERIFY_REPLAY, VERIFY_PASS, "%zu replay%s pass%s%s", r->n_replays,
             r->n_replays == 1 ? "" : "s", r->n_replays == 1 ? "es" : "", extra);
}

/* The score dumps among a replay's produced files, in its scratch copy
 * (OUT/scratch-seedS beside the manifest). */
static int audit_produced(verify_result *r, const char *manifest_path, json_t *m, pg_error *err) {
  json_t *seed = json_object_get(json_object_get(m, "record"), "seed");
  json_t *produced = json_object_get(m, "produced"), *f;
  if (!json_is_integer(seed) || !json_is_array(produced)) return 0;
  char out_dir[PATH_MAX];
  snprintf(out_dir, sizeof out_dir, "%s", manifest_path);
  char *slash = strrchr(out_dir, '/');
  if (slash) *slash = 0;
  else snprintf(out_dir, sizeof out_dir, ".");
  size_t i;
  json_array_foreach(produced, i, f) {
    json_t *rel = json_object_get(f, "path");
    if (!json_is_string(rel)) continue;
    char p[2 * PATH_MAX + 2], shown[PATH_MAX];
    snprintf(shown, sizeof shown, "scratch-seed%lld/%s", (long long)json_integer_value(seed),
             json_string_value(rel));
    snprintf(p, sizeof p, "%s/%s", out_dir, shown);
    if (is_dump(p) && audit_one(r, p, shown, err)) return -1;
  }
  return 0;
}

int verify_add_replay_json(verify_result *r, const char *manifest_path, json_t *m,
                           pg_error *err) {
  json_t *kind = json_object_get(m, "kind");
  if (!json_is_string(kind) || strcmp(json_string_value(kind), "pgolf/replay/v1"))
    return pg_fail(err, manifest_path, -1, "not a replay manifest (kind pgolf/replay/v1)");
  if (report_add_json(&r->rep, manifest_path, m, err)) return -1;
  json_t *v = json_object_get(m, "verdict");
  r->n_replays++;
  r->n_replays_failed += !json_is_string(v) || strcmp(json_string_value(v), "pass");
  replay_step(r, "");
  int rc = audit_produced(r, manifest_path, m, err);
  audit_step(r);
  return rc;
}

typedef int (*json_adder)(verify_result *r, const char *path, json_t *j, pg_error *err);

/* Read the JSON document at path and give it to add. */
static int add_file(verify_result *r, const char *path, json_adder add, pg_error *err) {
  json_t *j;
  if (json_read_file(path, REPORT_MAX_INPUT_BYTES, &j, err)) return -1;
  int rc = add(r, path, j, err);
  json_decref(j);
  return rc;
}

int verify_add_replay(verify_result *r, const char *manifest_path, pg_error *err) {
  return add_file(r, manifest_path, verify_add_replay_json, err);
}

/* A number of the summary, NAN when absent (the message shows "nan"). */
static double num(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

int verify_add_fresh_json(verify_result *r, const char *summary_path, json_t *s, pg_error *err) {
  json_t *rep = json_object_get(s, "reproduction");
  const char *verdict = json_string_value(json_object_get(rep, "verdict"));
  char extra[300] = "; no reproduction test (no claimed per-seed result, or no replayed val_bpb)";
  if (verdict)
    snprintf(extra, sizeof extra, "; reproduction test: %.64s (claimed mean %.8f, replayed %.8f)",
             verdict, num(rep, "claimed_mean"), num(rep, "replayed_mean"));
  replay_step(r, extra);
  if (!verdict || strcmp(verdict, "REPRODUCTION_GAP")) return 0;
  finding_list f = {0};
  findings_add(&f, "REPRODUCTION_GAP", SEV_ERROR, NULL, 0,
               "the claimed per-seed results beat the replays with fresh seeds beyond the "
               "seeds' noise (p = %.4g): claimed mean %.8f, replayed mean %.8f",
               num(rep, "p"), num(rep, "claimed_mean"), num(rep, "replayed_mean"));
  int rc = report_findings(r, summary_path, &f, NULL, err);
  findings_free(&f);
  r->steps[VERIFY_REPLAY].status = VERIFY_FAIL;
  return rc;
}

int verify_add_fresh(verify_result *r, const char *summary_path, pg_error *err) {
  return add_file(r, summary_path, verify_add_fresh_json, err);
}

void verify_result_free(verify_result *r) {
  check_result_free(&r->chk);
  report_free(&r->rep);
}
