/* Reading the per-seed values of `pgolf stats` (stats_inputs.h). */
#include "verifier/stats_inputs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/grow.h"

#include "manifests/manifest.h"
#include "verifier/submission.h"
#include "verifier/value_list.h"

static int push(stats_set *s, double v, double val_loss, double val_bpb, const char *where,
                pg_error *err) {
  if (!isfinite(v)) return pg_fail(err, where, -1, "the value is not a finite number");
  if (PG_GROW(s->v, s->cap, s->n + 1, 8)) return pg_fail(err, where, -1, "out of memory");
  s->v[s->n++] = v;
  /* val_bpb = val_loss / ln 2 * tokens / bytes, so tokens per byte is
   * bits per byte over bits per token. */
  if (isfinite(val_loss) && isfinite(val_bpb) && val_loss > 0 && val_bpb > 0)
    s->tpb_sum += val_bpb * M_LN2 / val_loss, s->n_tpb++;
  return 0;
}

static double number_at(json_t *o, const char *key) {
  json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
  return json_is_number(v) ? json_number_value(v) : NAN;
}

static int add_manifest(stats_set *s, const char *path, int nats, pg_error *err) {
  manifest_doc d;
  if (manifest_load(path, &d, err)) return -1;
  int rc;
  if (d.is_envelope && !d.payload_ok) {
    *err = d.payload_err;
    rc = -1;
  } else {
    double loss = number_at(d.m.evaluation, "val_loss"), bpb = number_at(d.m.evaluation, "val_bpb");
    double v = nats ? loss : bpb;
    rc = isfinite(v) ? push(s, v, loss, bpb, path, err)
                     : pg_fail(err, path, -1, "predicate.evaluation.%s: missing or not a number",
                               nats ? "val_loss" : "val_bpb");
  }
  manifest_doc_free(&d);
  return rc;
}

/* A folder gives one value per run (submission_run_values): a seed's
 * training and its evaluations, copies and reruns of it count once, however
 * many files hold them. */
static int add_folder(stats_set *s, const char *dir, int nats, pg_error *err) {
  submission sub;
  finding_list f = {0};
  if (submission_load(dir, -1, &sub, &f, err)) {
    findings_free(&f);
    return -1;
  }
  int rc = 0;
  sub_use *v = calloc(sub.n_runs + 1, sizeof *v);
  const char *from;
  size_t n = v ? submission_run_values(&sub, v, &from) : 0;
  if (!v) rc = pg_fail(err, dir, -1, "out of memory");
  else if (!n) rc = pg_fail(err, dir, -1, "no training log with a final val_loss/val_bpb line");
  for (size_t i = 0; i < n && !rc; i++) {
    char where[PG_ERR_PATH];
    snprintf(where, sizeof where, "%s/%s", sub.dir, sub.logs[v[i].log].rel);
    const log_metric *m = v[i].m;
    rc = push(s, nats ? m->val_loss.v : m->val_bpb.v, m->val_loss.v, m->val_bpb.v, where, err);
  }
  free(v);
  submission_free(&sub);
  findings_free(&f);
  return rc;
}

int stats_set_add(stats_set *s, const char *arg, const char *option, int nats, pg_error *err) {
  struct stat st;
  if (stat(arg, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return add_folder(s, arg, nats, err);
    return add_manifest(s, arg, nats, err);
  }
  double *v;
  size_t n;
  if (parse_value_list(arg, option, &v, &n, err)) {
    /* Something path-like that does not exist is a missing file, not bad numbers. */
    if (strchr(arg, '/') || strstr(arg, ".json"))
      return pg_fail(err, arg, -1, "no such manifest or submission folder (%s)", option);
    return -1;
  }
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) rc = push(s, v[i], NAN, NAN, option, err);
  free(v);
  return rc;
}

double stats_set_tpb(const stats_set *s) {
  return s->n && s->n_tpb == s->n ? s->tpb_sum / (double)s->n_tpb : NAN;
}

void stats_set_free(stats_set *s) {
  free(s->v);
  memset(s, 0, sizeof *s);
}
