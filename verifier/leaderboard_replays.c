/* --replays DIR: replay manifests (pgolf replay, kind pgolf/replay/v1;
 * verifier/replay_manifest.c) joined to the leaderboard's folders by the
 * folder each names, and the reproduction test of each replayed folder
 * (verifier/reproduction.h): its sample (the claimed per-seed results)
 * against every replayed val_bpb. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/challenge.h"
#include "common/fileio.h"
#include "common/grow.h"
#include "common/json_read.h"
#include "verifier/leaderboard.h"
#include "verifier/verify_report.h"

#define LB_REPLAY_MAX_BYTES ((size_t)256 << 20)
#define LB_REPLAY_MAX_DEPTH 8

static double num_at(json_t *o, const char *key) {
  json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
  return json_is_number(v) ? json_number_value(v) : NAN;
}

/* "A,B" from the error findings of a replay. */
static char *error_codes(json_t *findings) {
  size_t i, len = 1;
  json_t *f;
  json_array_foreach(findings, i, f) {
    json_t *c = json_object_get(f, "code");
    if (json_is_string(c)) len += strlen(json_string_value(c)) + 1;
  }
  char *s = calloc(len, 1);
  if (!s) return NULL;
  json_array_foreach(findings, i, f) {
    json_t *c = json_object_get(f, "code"), *sev = json_object_get(f, "severity");
    if (!json_is_string(c) || !json_is_string(sev) || strcmp(json_string_value(sev), "error")) continue;
    if (lb_codes_has(s, json_string_value(c))) continue;
    if (*s) strcat(s, ",");
    strcat(s, json_string_value(c));
  }
  return s;
}

int lb_replay_parse(const char *text, size_t len, const char *name, lb_replay *r, char **folder,
                    pg_error *err) {
  json_t *j;
  pg_error ignored;
  *folder = NULL;
  if (json_read_buf((const uint8_t *)text, len, name, &j, &ignored)) return 0;
  json_t *kind = json_is_object(j) ? json_object_get(j, "kind") : NULL;
  if (!json_is_string(kind) || strcmp(json_string_value(kind), "pgolf/replay/v1")) {
    json_decref(j);
    return 0;
  }
  json_t *rec = json_object_get(j, "record"), *dir = json_object_get(rec, "folder");
  json_t *seed = json_object_get(rec, "seed"), *verdict = json_object_get(j, "verdict");
  json_t *findings = json_object_get(j, "findings"), *res = json_object_get(j, "result");
  int rc = -1;
  if (!json_is_string(dir) || !*json_string_value(dir))
    pg_fail(err, name, -1, "a replay manifest without record.folder");
  else if (!json_is_integer(seed) || json_integer_value(seed) < 0)
    pg_fail(err, name, -1, "a replay manifest without a non-negative integer record.seed");
  else if (!json_is_string(verdict) || !*json_string_value(verdict) || !json_is_array(findings))
    pg_fail(err, name, -1, "a replay manifest without a verdict and findings");
  else if (!json_is_null(res) && !json_is_object(res))
    pg_fail(err, name, -1, "a replay manifest whose result is neither null nor an object");
  else {
    r->seed = json_integer_value(seed);
    r->val_bpb = num_at(res, "val_bpb");
    snprintf(r->verdict, sizeof r->verdict, "%s", json_string_value(verdict));
    r->codes = error_codes(findings);
    *folder = strdup(json_string_value(dir));
    rc = r->codes && *folder ? 1 : pg_fail(err, name, -1, "out of memory");
    if (rc < 0) free(r->codes), free(*folder), r->codes = NULL, *folder = NULL;
  }
  json_decref(j);
  return rc;
}

/* The last component of path (trailing slashes dropped) into base, the
 * one before it into parent ("" if none). */
static void split_tail(const char *path, char *parent, char *base, size_t cap) {
  char p[4096];
  snprintf(p, sizeof p, "%s", path);
  size_t n = strlen(p);
  while (n > 1 && p[n - 1] == '/') p[--n] = 0;
  char *b = strrchr(p, '/');
  snprintf(base, cap, "%s", b ? b + 1 : p);
  parent[0] = 0;
  if (!b) return;
  *b = 0;
  char *a = strrchr(p, '/');
  snprintf(parent, cap, "%s", a ? a + 1 : p);
}

/* The entry a replay's folder names: the same track and folder name, else
 * the only folder of that name. */
static lb_entry *entry_for(leaderboard *lb, const char *folder) {
  char parent[4096], base[4096];
  split_tail(folder, parent, base, sizeof base);
  lb_entry *only = NULL;
  size_t n = 0;
  for (size_t i = 0; i < lb->n_entries; i++) {
    lb_entry *e = &lb->entries[i];
    if (strcmp(e->folder, base)) continue;
    if (!strcmp(e->track_dir, parent)) return e;
    only = e, n++;
  }
  return n == 1 ? only : NULL;
}

static int skip(leaderboard *lb, const char *path, pg_error *err) {
  if (PG_GROW(lb->skipped_replays, lb->cap_skipped_replays, lb->n_skipped_replays + 1, 8) ||
      !(lb->skipped_replays[lb->n_skipped_replays] = strdup(path)))
    return pg_fail(err, path, -1, "out of memory");
  lb->n_skipped_replays++;
  return 0;
}

/* The folder a --fresh-seeds summary (pgolf replay's replay-fresh.json:
 * {"record", "salt", "runs", ...}) names, or NULL if the text is not one. */
static char *fresh_folder(const uint8_t *buf, size_t len, const char *path) {
  json_t *j;
  pg_error ignored;
  if (json_read_buf(buf, len, path, &j, &ignored)) return NULL;
  json_t *rec = json_object_get(j, "record");
  char *folder = json_is_string(rec) && json_is_string(json_object_get(j, "salt")) &&
                         json_is_array(json_object_get(j, "runs"))
                     ? strdup(json_string_value(rec))
                     : NULL;
  json_decref(j);
  return folder;
}

/* A --fresh-seeds summary goes to its folder's page (verify_add_fresh);
 * the leaderboard's own reproduction test uses the replays themselves. */
static int add_fresh(leaderboard *lb, const uint8_t *buf, size_t len, const char *path,
                     pg_error *err) {
  char *folder = fresh_folder(buf, len, path);
  lb_entry *e = folder ? entry_for(lb, folder) : NULL;
  free(folder);
  if (!e || !e->verify) return skip(lb, path, err);
  return verify_add_fresh(e->verify, path, err);
}

static int add_file(leaderboard *lb, const char *path, pg_error *err) {
  uint8_t *buf;
  size_t len;
  if (file_read_all(path, LB_REPLAY_MAX_BYTES, &buf, &len, err)) return -1;
  lb_replay r = {.seed = -1, .val_bpb = NAN, .claimed = NAN};
  char *folder;
  int got = lb_replay_parse((const char *)buf, len, path, &r, &folder, err);
  if (got == 0) got = add_fresh(lb, buf, len, path, err) ? -1 : 2;
  free(buf);
  if (got < 0) return -1;
  if (got == 2) return 0;
  lb_entry *e = entry_for(lb, folder);
  free(folder);
  if (!e) {
    free(r.codes);
    return skip(lb, path, err);
  }
  /* The replay on the folder's page too. */
  if (e->verify && verify_add_replay(e->verify, path, err)) {
    free(r.codes);
    return -1;
  }
  for (size_t i = 0; i < e->n_values; i++)
    if (e->values[i].seed == r.seed) r.claimed = e->values[i].val_bpb;
  size_t cap = e->n_replays;
  if (PG_GROW(e->replays, cap, e->n_replays + 1, 4) || !(r.path = strdup(path))) {
    free(r.codes);
    return pg_fail(err, path, -1, "out of memory");
  }
  e->replays[e->n_replays++] = r;
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.json under dir, in name order, depth first. */
static int walk(leaderboard *lb, const char *dir, int depth, pg_error *err) {
  if (depth > LB_REPLAY_MAX_DEPTH) return 0;
  DIR *d = opendir(dir);
  if (!d) return pg_fail_errno(err, dir, "cannot read the folder");
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;
  int rc = 0;
  while (!rc && (de = readdir(d)))
    if (de->d_name[0] != '.' &&
        (PG_GROW(names, cap, n + 1, 32) || !(names[n++] = strdup(de->d_name))))
      rc = pg_fail(err, dir, -1, "out of memory");
  closedir(d);
  if (!rc && n) qsort(names, n, sizeof *names, cmp_str);
  for (size_t i = 0; i < n && !rc; i++) {
    char p[8192];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    size_t len = strlen(names[i]);
    if (lstat(p, &st)) continue;
    if (S_ISDIR(st.st_mode)) rc = walk(lb, p, depth + 1, err);
    else if (S_ISREG(st.st_mode) && len > 5 && !strcmp(names[i] + len - 5, ".json"))
      rc = add_file(lb, p, err);
  }
  for (size_t i = 0; i < n; i++) free(names[i]);
  free(names);
  return rc;
}

/* The reproduction test of e: its sample against its replays' results. */
static int reproduce(lb_entry *e, pg_error *err) {
  double *claimed = malloc((e->n_values + 1) * sizeof *claimed);
  double *got = malloc((e->n_replays + 1) * sizeof *got);
  size_t n_got = 0;
  int rc = claimed && got ? 0 : pg_fail(err, e->path, -1, "out of memory");
  for (size_t i = 0; i < e->n_values && !rc; i++) claimed[i] = e->values[i].val_bpb;
  for (size_t i = 0; i < e->n_replays && !rc; i++)
    if (isfinite(e->replays[i].val_bpb)) got[n_got++] = e->replays[i].val_bpb;
  if (!rc && e->n_values && n_got) {
    pg_error local;
    e->repro_tested = reproduction_test(claimed, e->n_values, got, n_got, CHALLENGE_ALPHA,
                                        &e->repro, &local) == 0;
  }
  free(claimed);
  free(got);
  return rc;
}

int leaderboard_add_replays(leaderboard *lb, const char *dir, pg_error *err) {
  struct stat st;
  if (stat(dir, &st) || !S_ISDIR(st.st_mode))
    return pg_fail(err, dir, -1, "--replays: not a folder");
  if (walk(lb, dir, 0, err)) return -1;
  for (size_t i = 0; i < lb->n_entries; i++)
    if (lb->entries[i].n_replays && reproduce(&lb->entries[i], err)) return -1;
  return 0;
}
