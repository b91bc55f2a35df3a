/* The finding list and its two renderings (JSON and a table). */
#include "verifier/findings.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

const char *severity_name(severity s) { return s == SEV_ERROR ? "error" : "warning"; }

void findings_add(finding_list *f, const char *code, severity sev, const char *file,
                  uint32_t line, const char *fmt, ...) {
  if (PG_GROW(f->v, f->cap, f->n + 1, 16)) {
    f->oom = 1;
    return;
  }
  char *msg = NULL;
  va_list ap;
  va_start(ap, fmt);
  int rc = vasprintf(&msg, fmt, ap);
  va_end(ap);
  char *fc = file ? strdup(file) : NULL;
  if (rc < 0 || (file && !fc)) {
    if (rc >= 0) free(msg);
    free(fc);
    f->oom = 1;
    return;
  }
  f->v[f->n++] = (finding){code, sev, msg, fc, line, NULL, NULL, 0};
}

/* The grouped message: head, then "detail (file:line)" per file. */
static char *group_message(const finding *x) {
  size_t cap = strlen(x->head) + 64;
  for (size_t i = 0; i < x->n_locs && i < FINDINGS_GROUP_SHOWN; i++)
    cap += strlen(x->locs[i].file) + strlen(x->locs[i].detail) + 24;
  char *m = malloc(cap);
  if (!m) return NULL;
  size_t n = (size_t)snprintf(m, cap, "%s: ", x->head);
  for (size_t i = 0; i < x->n_locs && i < FINDINGS_GROUP_SHOWN; i++) {
    const finding_loc *l = &x->locs[i];
    int d = l->detail[0] != 0;
    n += (size_t)snprintf(m + n, cap - n, "%s%s%s%s", i ? "; " : "", l->detail, d ? " (" : "",
                          l->file);
    if (l->line) n += (size_t)snprintf(m + n, cap - n, ":%u", l->line);
    if (d) n += (size_t)snprintf(m + n, cap - n, ")");
  }
  if (x->n_locs > FINDINGS_GROUP_SHOWN)
    snprintf(m + n, cap - n, "; and %zu more", x->n_locs - FINDINGS_GROUP_SHOWN);
  return m;
}

static finding *group_of(finding_list *f, const char *code, severity sev, const char *head) {
  for (size_t i = 0; i < f->n; i++) {
    finding *x = &f->v[i];
    if (x->head && x->sev == sev && !strcmp(x->code, code) && !strcmp(x->head, head)) return x;
  }
  findings_add(f, code, sev, NULL, 0, "%s", head);
  if (f->oom || !f->n) return NULL;
  finding *x = &f->v[f->n - 1];
  x->head = strdup(head);
  if (!x->head) f->oom = 1;
  return x->head ? x : NULL;
}

void findings_group(finding_list *f, const char *code, severity sev, const char *head,
                    const char *file, uint32_t line, const char *fmt, ...) {
  finding *x = group_of(f, code, sev, head);
  if (!x) return;
  for (size_t i = 0; i < x->n_locs; i++) /* each file once */
    if (!strcmp(x->locs[i].file, file ? file : "-") && x->locs[i].line == line) return;
  char *detail = NULL;
  va_list ap;
  va_start(ap, fmt);
  int rc = vasprintf(&detail, fmt, ap);
  va_end(ap);
  finding_loc *v = realloc(x->locs, (x->n_locs + 1) * sizeof *v);
  char *fc = strdup(file ? file : "-");
  if (rc < 0 || !v || !fc) {
    if (rc >= 0) free(detail);
    if (v) x->locs = v;
    free(fc);
    f->oom = 1;
    return;
  }
  x->locs = v;
  x->locs[x->n_locs++] = (finding_loc){fc, line, detail};
  if (x->n_locs == 1) {
    x->file = strdup(fc);
    x->line = line;
    if (!x->file) f->oom = 1;
  }
  char *m = group_message(x);
  if (!m) {
    f->oom = 1;
    return;
  }
  free(x->message);
  x->message = m;
}

/* A stable sort by severity: insertion sort keeps the found order, and
 * lists are short (tens of findings). */
void findings_sort(finding_list *f) {
  for (size_t i = 1; i < f->n; i++) {
    finding x = f->v[i];
    size_t j = i;
    while (j > 0 && f->v[j - 1].sev > x.sev) {
      f->v[j] = f->v[j - 1];
      j--;
    }
    f->v[j] = x;
  }
}

size_t findings_count(const finding_list *f, severity sev) {
  size_t n = 0;
  for (size_t i = 0; i < f->n; i++) n += f->v[i].sev == sev;
  return n + (sev == SEV_ERROR && f->oom);
}

int findings_has(const finding_list *f, const char *code) {
  for (size_t i = 0; i < f->n; i++)
    if (strcmp(f->v[i].code, code) == 0) return 1;
  return 0;
}

void findings_free(finding_list *f) {
  for (size_t i = 0; i < f->n; i++) {
    finding *x = &f->v[i];
    free(x->message);
    free(x->file);
    free(x->head);
    for (size_t k = 0; k < x->n_locs; k++) {
      free(x->locs[k].file);
      free(x->locs[k].detail);
    }
    free(x->locs);
  }
  free(f->v);
  memset(f, 0, sizeof *f);
}

json_t *findings_json(const char *folder, const finding_list *f, json_t *summary) {
  json_t *arr = json_array();
  for (size_t i = 0; i < f->n; i++) {
    const finding *x = &f->v[i];
    json_t *o = json_object();
    json_object_set_new(o, "code", json_string(x->code));
    json_object_set_new(o, "severity", json_string(severity_name(x->sev)));
    json_object_set_new(o, "message", json_string(x->message));
    json_object_set_new(o, "file", x->file ? json_string(x->file) : json_null());
    json_object_set_new(o, "line", x->line ? json_integer(x->line) : json_null());
    if (x->n_locs) {
      json_t *files = json_array();
      for (size_t k = 0; k < x->n_locs; k++) {
        json_t *l = json_object();
        json_object_set_new(l, "file", json_string(x->locs[k].file));
        json_object_set_new(l, "line", x->locs[k].line ? json_integer(x->locs[k].line) : json_null());
        json_array_append_new(files, l);
      }
      json_object_set_new(o, "files", files);
    }
    json_array_append_new(arr, o);
  }
  if (f->oom) {
    json_t *o = json_object();
    json_object_set_new(o, "code", json_string("OUT_OF_MEMORY"));
    json_object_set_new(o, "severity", json_string("error"));
    json_object_set_new(o, "message", json_string("findings were lost: out of memory"));
    json_object_set_new(o, "file", json_null());
    json_object_set_new(o, "line", json_null());
    json_array_append_new(arr, o);
  }
  json_t *j = json_object();
  json_object_set_new(j, "folder", json_string(folder));
  json_object_set_new(j, "verdict",
                      json_string(findings_count(f, SEV_ERROR) ? "fail" : "pass"));
  json_object_set_new(j, "findings", arr);
  json_object_set_new(j, "summary", summary ? summary : json_object());
  return j;
}

void findings_print_table(FILE *out, const char *folder, const finding_list *f) {
  size_t ne = findings_count(f, SEV_ERROR), nw = findings_count(f, SEV_WARNING);
  fprintf(out, "%s: %s (%zu error%s, %zu warning%s)\n", folder, ne ? "FAIL" : "PASS", ne,
          ne == 1 ? "" : "s", nw, nw == 1 ? "" : "s");
  if (!f->n && !f->oom) return;
  int wcode = 4, wloc = 4;
  char loc[600];
  for (size_t i = 0; i < f->n; i++) {
    int c = (int)strlen(f->v[i].code);
    if (c > wcode) wcode = c;
    int l = snprintf(loc, sizeof loc, "%s%s%.0u", f->v[i].file ? f->v[i].file : "-",
                     f->v[i].line ? ":" : "", f->v[i].line);
    if (l > wloc) wloc = l < 60 ? l : 60;
  }
  fprintf(out, "  %-8s %-*s %-*s %s\n", "SEVERITY", wcode, "CODE", wloc, "FILE", "MESSAGE");
  for (size_t i = 0; i < f->n; i++) {
    const finding *x = &f->v[i];
    snprintf(loc, sizeof loc, "%s%s%.0u", x->file ? x->file : "-", x->line ? ":" : "", x->line);
    fprintf(out, "  %-8s %-*s %-*s %s\n", severity_name(x->sev), wcode, x->code, wloc, loc,
            x->message);
  }
  if (f->oom) fprintf(out, "  %-8s %-*s %-*s %s\n", "error", wcode, "OUT_OF_MEMORY", wloc, "-",
                      "findings were lost: out of memory");
}
