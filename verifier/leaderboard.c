/* pgolf leaderboard: the folders of a records/ tree, each checked in
 * process, and what the page shows of each (verifier/leaderboard.h). */
#include "verifier/leaderboard.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/grow.h"
#include "verifier/code_count.h"
#include "verifier/verify_report.h"
#include "verifier/welch.h"

int lb_codes_has(const char *list, const char *code) {
  size_t n = strlen(code);
  for (const char *p = list ? list : ""; n && (p = strstr(p, code)); p += n)
    if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n])) return 1;
  return 0;
}

const char *lb_kind_name(lb_kind k) {
  return k == LB_RECORD ? "10min" : k == LB_NONRECORD ? "nonrecord" : "other";
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names of the subfolders of dir (no dot entries, no links).
 * -1 (err) if dir cannot be read. */
static int subfolders(const char *dir, char ***out, size_t *n, pg_error *err) {
  DIR *d = opendir(dir);
  *out = NULL, *n = 0;
  if (!d) return pg_fail_errno(err, dir, "cannot read the folder");
  size_t cap = 0;
  struct dirent *de;
  int rc = 0;
  while (!rc && (de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    char p[8192];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
    if (lstat(p, &st) || !S_ISDIR(st.st_mode)) continue;
    if (*n >= LB_MAX_FOLDERS) rc = pg_fail(err, dir, -1, "more than %d folders", LB_MAX_FOLDERS);
    else if (PG_GROW(*out, cap, *n + 1, 64) || !((*out)[*n] = strdup(de->d_name)))
      rc = pg_fail(err, dir, -1, "out of memory");
    else (*n)++;
  }
  closedir(d);
  if (*n) qsort(*out, *n, sizeof **out, cmp_str);
  return rc;
}

static void free_names(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

/* YYYY-MM-DD at the start of s (digits and dashes only), into out. */
static int date_prefix(const char *s, char out[11]) {
  if (!s || strlen(s) < 10) return 0;
  for (int i = 0; i < 10; i++)
    if (i == 4 || i == 7 ? s[i] != '-' : !isdigit((unsigned char)s[i])) return 0;
  if (s[10] && isdigit((unsigned char)s[10])) return 0;
  memcpy(out, s, 10);
  out[10] = 0;
  return 1;
}

/* Distinct codes of one severity, comma-separated, in finding order. */
static char *codes_of(const finding_list *f, severity sev, int *count) {
  size_t cap = 1;
  for (size_t i = 0; i < f->n; i++) cap += strlen(f->v[i].code) + 1;
  char *s = calloc(cap, 1);
  *count = 0;
  if (!s) return NULL;
  for (size_t i = 0; i < f->n; i++) {
    if (f->v[i].sev != sev) continue;
    (*count)++;
    if (lb_codes_has(s, f->v[i].code)) continue;
    if (*s) strcat(s, ",");
    strcat(s, f->v[i].code);
  }
  return s;
}

/* ---- the sample ---- */


static double eval_seconds(const pg_log *l, const log_metric *m) {
  if (l->total_eval_s.line) return l->total_eval_s.v;
  /* The `_exact` twin carries no eval_time; its plain twin does. */
  for (size_t k = 0; isnan(m->eval_ms) && k < l->n_metrics; k++)
    if (l->metrics[k].kind == METRIC_FINAL && !isnan(l->metrics[k].eval_ms) &&
        !strcmp(l->metrics[k].base, m->base))
      m = &l->metrics[k];
  return m->eval_ms / 1000.0;
}

static const log_bytes *last_labelled(const log_bytes *v, size_t n) {
  const log_bytes *b = NULL;
  for (size_t i = 0; i < n; i++)
    if (v[i].label[0]) b = &v[i];
  return b;
}

/* The artifact of log li: the logged labelled total, else the labelled
 * model plus the counted code of the entry that wrote the log (the
 * smallest count when pgolf cannot tell which). NAN if neither. */
static double log_bytes_total(const submission *s, const code_count *cc, size_t li,
                              const char **from) {
  const pg_log *l = &s->logs[li].log;
  const log_bytes *t = last_labelled(l->totals, l->n_totals);
  if (t) return *from = "logged total", (double)t->bytes;
  const log_bytes *m = last_labelled(l->models, l->n_models);
  if (!m || !cc->n_sets) return NAN;
  const code_set *set = code_count_set_of_log(cc, li);
  if (!set) {
    set = &cc->sets[0];
    for (size_t i = 1; i < cc->n_sets; i++)
      if (cc->sets[i].counted < set->counted) set = &cc->sets[i];
  }
  *from = "model + counted code";
  return (double)(m->bytes + set->counted);
}

static double max_of(double a, double b) { return isnan(a) || b > a ? b : a; }

/* The budgets of the sample's runs: the largest artifact, training and
 * evaluation time among their logs. */
static void budgets(lb_entry *e, const submission *s, const code_count *cc, const sub_use *u,
                    size_t n) {
  e->bytes = e->train_s = e->eval_s = NAN;
  for (size_t i = 0; i < n; i++) {
    const sub_run *run = &s->runs[u[i].run];
    for (size_t k = 0; k < run->n_logs; k++) {
      size_t li = run->logs[k];
      if (s->logs[li].copy_of >= 0) continue;
      const char *from = NULL;
      double b = log_bytes_total(s, cc, li, &from);
      if (isfinite(b) && !(b <= e->bytes)) e->bytes = b, e->bytes_from = from;
      double ms, res, step;
      uint32_t line;
      if (!log_train_end(&s->logs[li].log, &ms, &res, &line, &step))
        e->train_s = max_of(e->train_s, ms / 1000.0);
    }
    double ev = eval_seconds(&s->logs[u[i].log].log, u[i].m);
    if (isfinite(ev)) e->eval_s = max_of(e->eval_s, ev);
  }
  const sub_json *j = submission_claims(s);
  if (isnan(e->bytes) && j && j->has_bytes_total)
    e->bytes = (double)j->bytes_total, e->bytes_from = "claimed bytes_total";
}

/* Mean and sd by summarize_sample, as `pgolf stats` computes them (so the
 * chain's numbers are its numbers), the range, and tokens per byte. */
static int summarize(lb_entry *e) {
  e->mean = e->sd = e->lo = e->hi = e->tpb = NAN;
  if (!e->n_values) return 0;
  double *v = malloc(e->n_values * sizeof *v), tpb = 0;
  size_t n_tpb = 0;
  if (!v) return -1;
  e->lo = e->hi = e->values[0].val_bpb;
  for (size_t i = 0; i < e->n_values; i++) {
    const lb_value *x = &e->values[i];
    v[i] = x->val_bpb;
    e->lo = fmin(e->lo, x->val_bpb), e->hi = fmax(e->hi, x->val_bpb);
    /* as verifier/stats_inputs.c: bits per byte over bits per token */
    if (isfinite(x->val_loss) && x->val_loss > 0 && x->val_bpb > 0)
      tpb += x->val_bpb * M_LN2 / x->val_loss, n_tpb++;
  }
  if (n_tpb == e->n_values) e->tpb = tpb / (double)n_tpb;
  sample_summary ss;
  pg_error ignored;
  if (e->n_values == 1) e->mean = v[0];
  else if (!summarize_sample(v, e->n_values, e->folder, &ss, &ignored)) e->mean = ss.mean, e->sd = ss.sd;
  free(v);
  return 0;
}

/* The sample (see leaderboard.h), its budgets and summary. */
static int sample(lb_entry *e, const submission *s, const code_count *cc) {
  sub_use *u = calloc(s->n_runs + 1, sizeof *u);
  if (!u) return -1;
  size_t n = submission_run_values(s, u, &e->sample_from);
  e->values = calloc(n + 1, sizeof *e->values);
  int rc = e->values ? 0 : -1;
  for (size_t i = 0; !rc && i < n; i++) {
    lb_value *v = &e->values[e->n_values];
    v->seed = s->runs[u[i].run].seed;
    v->val_bpb = u[i].m->val_bpb.v;
    v->val_loss = u[i].m->val_loss.v;
    v->line = u[i].m->line;
    if (!(v->file = strdup(s->logs[u[i].log].rel))) rc = -1;
    else e->n_values++;
  }
  if (!rc) budgets(e, s, cc, u, n);
  free(u);
  return rc ? rc : summarize(e);
}

/* ---- one folder ---- */

static void claims(lb_entry *e, const submission *s) {
  const sub_json *j = submission_claims(s);
  json_t *date = j ? json_object_get(j->root, "date") : NULL;
  json_t *name = j ? json_object_get(j->root, "name") : NULL;
  if (json_is_string(date) && date_prefix(json_string_value(date), e->date))
    e->date_source = "submission.json";
  else if (date_prefix(e->folder, e->date))
    e->date_source = "folder name";
  else
    e->date_source = "none";
  const char *nm = json_is_string(name) && *json_string_value(name) ? json_string_value(name)
                                                                   : e->folder;
  e->name = strdup(nm);
  if (j && j->has_val_bpb) e->has_claim = 1, e->claim = j->val_bpb, e->claim_key = j->val_bpb_key;
}

static int unreadable(lb_entry *e, const pg_error *err) {
  e->unreadable = 1;
  snprintf(e->error, sizeof e->error, "%s", err->msg);
  return (e->name = strdup(e->folder)) ? 0 : -1;
}

/* Check the folder (verify_folder: the static check; no record, no
 * audit inputs) and fill e. -1 only when memory runs out; a folder that
 * cannot be read is marked unreadable. */
static int load_entry(lb_entry *e) {
  verify_opts o = {.track = e->kind == LB_RECORD      ? TRACK_RECORD
                            : e->kind == LB_NONRECORD ? TRACK_NONRECORD
                                                      : -1};
  pg_error err;
  e->score = e->mean = e->sd = e->lo = e->hi = e->tpb = NAN;
  e->bytes = e->train_s = e->eval_s = NAN;
  e->date_source = "none";
  if (!(e->verify = calloc(1, sizeof *e->verify))) return -1;
  if (verify_folder(e->path, &o, e->verify, &err)) {
    free(e->verify);
    e->verify = NULL;
    return unreadable(e, &err);
  }
  const check_result *c = &e->verify->chk;
  e->error_codes = codes_of(&c->f, SEV_ERROR, &e->n_errors);
  e->warning_codes = codes_of(&c->f, SEV_WARNING, &e->n_warnings);
  claims(e, &c->s);
  for (size_t r = 0; r < c->s.n_runs; r++) {
    e->n_runs += sub_run_has_final(&c->s, &c->s.runs[r]) != 0;
    e->n_reruns += c->s.runs[r].n_trainings > 1;
  }
  int rc = sample(e, &c->s, &c->cc);
  e->score = e->has_claim ? e->claim : e->mean;
  if (!e->error_codes || !e->warning_codes || !e->name || c->f.oom) rc = -1;
  return rc;
}

/* ---- the walk ---- */

static lb_kind kind_of(const char *track_dir) {
  if (!strcmp(track_dir, LB_TRACK_RECORD_DIR)) return LB_RECORD;
  if (!strcmp(track_dir, LB_TRACK_NONRECORD_DIR)) return LB_NONRECORD;
  return LB_OTHER;
}

static int add_entry(leaderboard *lb, const char *dir, const char *track, const char *folder,
                     pg_error *err) {
  if (PG_GROW(lb->entries, lb->cap_entries, lb->n_entries + 1, 64))
    return pg_fail(err, dir, -1, "out of memory");
  lb_entry *e = &lb->entries[lb->n_entries];
  memset(e, 0, sizeof *e);
  size_t len = strlen(dir) + strlen(folder) + 2;
  e->path = malloc(len);
  e->folder = strdup(folder);
  e->track_dir = strdup(track);
  e->kind = kind_of(track);
  lb->n_entries++;
  if (!e->path || !e->folder || !e->track_dir) return pg_fail(err, dir, -1, "out of memory");
  snprintf(e->path, len, "%s/%s", dir, folder);
  if (load_entry(e)) return pg_fail(err, e->path, -1, "out of memory");
  return 0;
}

/* Every folder of the track folder dir, named track. */
static int walk_track(leaderboard *lb, const char *dir, const char *track, pg_error *err) {
  char **names;
  size_t n;
  if (subfolders(dir, &names, &n, err)) return -1;
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) rc = add_entry(lb, dir, track, names[i], err);
  free_names(names, n);
  return rc;
}

/* Record track in chain order first, then non-record, then the others,
 * each by folder name (the order the walk added them in). */
static int cmp_entries(const void *a, const void *b) {
  const lb_entry *x = a, *y = b;
  if (x->kind != y->kind) return (int)x->kind - (int)y->kind;
  if (x->kind == LB_RECORD) {
    int px = x->date[0] && isfinite(x->score), py = y->date[0] && isfinite(y->score);
    if (px != py) return py - px; /* placed ones first */
    if (px) {
      int c = strcmp(x->date, y->date);
      if (c) return c;
      if (x->score != y->score) return x->score > y->score ? -1 : 1; /* worst first */
    }
  }
  int c = strcmp(x->track_dir, y->track_dir);
  return c ? c : strcmp(x->folder, y->folder);
}

/* Each folder's page: "<folder>.html", or "<track>--<folder>.html" when
 * two tracks hold a folder of that name or the folder is named "index". */
static int name_pages(leaderboard *lb) {
  for (size_t i = 0; i < lb->n_entries; i++) {
    lb_entry *e = &lb->entries[i];
    int clash = !strcmp(e->folder, "index");
    for (size_t k = 0; k < lb->n_entries && !clash; k++)
      clash = k != i && !strcmp(lb->entries[k].folder, e->folder);
    size_t len = strlen(e->track_dir) + strlen(e->folder) + 8;
    if (!(e->page = malloc(len))) return -1;
    if (clash) snprintf(e->page, len, "%s--%s.html", e->track_dir, e->folder);
    else snprintf(e->page, len, "%s.html", e->folder);
  }
  return 0;
}

int leaderboard_load(const char *root, leaderboard *lb, pg_error *err) {
  memset(lb, 0, sizeof *lb);
  lb->median_sd = NAN;
  if (!(lb->root = strdup(root))) return pg_fail(err, root, -1, "out of memory");
  for (size_t n = strlen(lb->root); n > 1 && lb->root[n - 1] == '/'; n--) lb->root[n - 1] = 0;
  root = lb->root;
  char **tracks;
  size_t n;
  if (subfolders(root, &tracks, &n, err)) return -1;
  int rc = 0;
  /* RECORDS_DIR may itself be one track's folder. */
  const char *base = strrchr(root, '/');
  base = base && base[1] ? base + 1 : root;
  if (kind_of(base) != LB_OTHER) {
    rc = walk_track(lb, root, base, err);
  } else {
    for (size_t i = 0; i < n && !rc; i++) {
      char dir[8192];
      snprintf(dir, sizeof dir, "%s/%s", root, tracks[i]);
      rc = walk_track(lb, dir, tracks[i], err);
    }
  }
  free_names(tracks, n);
  if (rc) return -1;
  if (!lb->n_entries) return pg_fail(err, root, -1, "no submission folders (expected RECORDS_DIR/<track>/<folder>/)");
  qsort(lb->entries, lb->n_entries, sizeof *lb->entries, cmp_entries);
  if (name_pages(lb)) return pg_fail(err, root, -1, "out of memory");
  return leaderboard_chain(lb, err);
}

void leaderboard_free(leaderboard *lb) {
  for (size_t i = 0; i < lb->n_entries; i++) {
    lb_entry *e = &lb->entries[i];
    free(e->path), free(e->folder), free(e->track_dir), free(e->name), free(e->page);
    for (size_t k = 0; k < e->n_values; k++) free(e->values[k].file);
    free(e->values);
    free(e->error_codes), free(e->warning_codes);
    if (e->verify) verify_result_free(e->verify);
    free(e->verify);
    for (size_t k = 0; k < e->n_replays; k++) free(e->replays[k].path), free(e->replays[k].codes);
    free(e->replays);
  }
  free(lb->entries);
  free(lb->steps);
  for (size_t i = 0; i < lb->n_skipped_replays; i++) free(lb->skipped_replays[i]);
  free(lb->skipped_replays);
  free(lb->root);
  memset(lb, 0, sizeof *lb);
}
