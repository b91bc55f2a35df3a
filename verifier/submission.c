/* Reading a submission folder: what is there, and every log parsed. */
#include "verifier/submission.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "common/grow.h"
#include "common/sha256.h"
#include "verifier/log_parts.h"

/* How far down deep_logs looks for logs (the folder itself is depth 0). */
#define DEEP_LOG_DEPTH 3

const char *sub_track_name(sub_track t) { return t == TRACK_RECORD ? "10min" : "nonrecord"; }

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static const char *base_name(const char *rel) {
  const char *b = strrchr(rel, '/');
  return b ? b + 1 : rel;
}

typedef struct entry {
  char *rel;
  int64_t size;
} entry;

static int cmp_entry(const void *a, const void *b) {
  return strcmp(((const entry *)a)->rel, ((const entry *)b)->rel);
}

/* Regular files from depth `depth` down to max_depth (0: the folder's
 * own), symlinks and dot-entries skipped. */
static int list_files(const char *dir, const char *sub, entry **out, size_t *n, size_t *cap,
                      int depth, int max_depth, pg_error *err) {
  char path[4096];
  snprintf(path, sizeof path, "%s%s%s", dir, sub ? "/" : "", sub ? sub : "");
  DIR *d = opendir(path);
  if (!d) return depth ? 0 : pg_fail_errno(err, dir, "cannot open the folder");
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    if (*n >= SUB_MAX_ENTRIES) break;
    char rel[1024], full[4096 + 1024];
    if (snprintf(rel, sizeof rel, "%s%s%s", sub ? sub : "", sub ? "/" : "", de->d_name) >=
        (int)sizeof rel)
      continue;
    snprintf(full, sizeof full, "%s/%s", dir, rel);
    struct stat st;
    if (lstat(full, &st)) continue;
    if (S_ISDIR(st.st_mode) && depth < max_depth) {
      list_files(dir, rel, out, n, cap, depth + 1, max_depth, err);
      continue;
    }
    if (!S_ISREG(st.st_mode)) continue;
    if (PG_GROW(*out, *cap, *n + 1, 64)) break;
    char *r = strdup(rel);
    if (!r) break;
    (*out)[(*n)++] = (entry){r, (int64_t)st.st_size};
  }
  closedir(d);
  return 0;
}

static int push_file(sub_file **v, size_t *n, const entry *e) {
  sub_file *nv = realloc(*v, (*n + 1) * sizeof *nv);
  if (!nv) return -1;
  *v = nv;
  char *r = strdup(e->rel);
  if (!r) return -1;
  (*v)[(*n)++] = (sub_file){r, e->size, 0};
  return 0;
}

/* A folder of rel's path (innermost first) named for a seed: "42",
 * "seed_1338", "seed42" (seeds/42/train.log, runs/seed_1338/wd_0/train.log);
 * -1 if none. */
static int64_t seed_from_folders(const char *rel) {
  const char *end = strrchr(rel, '/');
  while (end) {
    const char *start = end;
    while (start > rel && start[-1] != '/') start--;
    const char *p = start;
    if (!strncmp(p, "seed", 4)) {
      p += 4;
      while (*p == '_' || *p == '-') p++;
    }
    size_t k = strspn(p, "0123456789");
    if (k && k <= 18 && p + k == end) return strtoll(p, NULL, 10);
    end = start > rel ? start - 1 : NULL;
  }
  return -1;
}

/* The seed a file's own name gives (see seed_from_name), -1 if none. */
static int64_t seed_of_file(const char *rel) {
  const char *b = base_name(rel), *p = b;
  while ((p = strstr(p, "seed"))) {
    p += 4;
    while (*p == '_' || *p == '-' || *p == '=') p++;
    if (isdigit((unsigned char)*p) && strspn(p, "0123456789") <= 18) return strtoll(p, NULL, 10);
  }
  const char *dot = strrchr(b, '.');
  if (!dot) return -1;
  const char *d = dot;
  while (d > b && isdigit((unsigned char)d[-1])) d--;
  if (d == dot || dot - d > 18 || d == b || (d[-1] != '_' && d[-1] != '-')) return -1;
  return strtoll(d, NULL, 10);
}

/* "train_seed42.log", "seed_1337.txt", "log_seed-7.txt" -> the number;
 * else a number that ends the name after '_' or '-' ("ternary_log_42.txt",
 * "train_42.log"; not "train_v3.txt"); else a folder's (seed_from_folders). */
static int64_t seed_from_name(const char *rel) {
  int64_t by_file = seed_of_file(rel);
  return by_file >= 0 ? by_file : seed_from_folders(rel);
}

static int is_log_name(const char *rel) {
  const char *b = base_name(rel);
  if (!ends_with(b, ".log") && !ends_with(b, ".txt")) return 0;
  return strncmp(b, "requirements", 12) != 0 && strncmp(b, "README", 6) != 0;
}

/* One run's part of a log file (all of it, for most files). */
typedef struct parsed_part {
  pg_log log;
  uint8_t digest[SHA256_LEN]; /* of the part's bytes */
  size_t off, len;
  int64_t name_seed; /* the seed the file name gives the part; NAME_SEED_FILE: the file's */
} parsed_part;

#define NAME_SEED_FILE (-2)

/* A log parsed ahead, in parallel with the others (logs are independent
 * and parsing is all of check's time). */
typedef struct parsed_log {
  parsed_part *parts; /* one, or one per run the file holds */
  size_t n;
  pg_error err;
  int rc;
} parsed_log;

/* The offset of line `line` in t[0..len), counting from off, which starts
 * line `at`. */
static size_t line_offset(const char *t, size_t len, size_t off, uint32_t at, uint32_t line) {
  for (; at < line && off < len; at++) {
    const char *nl = memchr(t + off, '\n', len - off);
    off = nl ? (size_t)(nl - t) + 1 : len;
  }
  return off;
}

/* Parse the parts of a file of several runs (verifier/log_parts.h). */
static int parse_parts(const char *path, const char *t, size_t len, const log_part *v, size_t n,
                       parsed_log *p) {
  p->parts = calloc(n, sizeof *p->parts);
  if (!p->parts) return pg_fail(&p->err, path, -1, "out of memory while parsing the log");
  size_t off = 0;
  uint32_t at = 1;
  for (size_t i = 0; i < n; i++) {
    parsed_part *q = &p->parts[i];
    off = line_offset(t, len, off, at, v[i].first_line);
    size_t end = i + 1 < n ? line_offset(t, len, off, v[i].first_line, v[i + 1].first_line) : len;
    at = v[i].first_line;
    q->off = off, q->len = end - off, q->name_seed = v[i].name_seed;
    sha256_buf((const uint8_t *)t + off, end - off, q->digest);
    p->n = i + 1;
    if (log_parse_part(t + off, end - off, v[i].first_line, path, &q->log, &p->err)) return -1;
  }
  return 0;
}

/* Read, hash (to find byte-identical copies) and parse one log, and its
 * runs apart where it holds several. */
static void parse_one(const char *path, parsed_log *p) {
  uint8_t *buf;
  size_t len;
  pg_log whole;
  memset(p, 0, sizeof *p);
  p->rc = file_read_all(path, LOG_MAX_BYTES, &buf, &len, &p->err);
  if (p->rc) return;
  p->rc = log_parse((const char *)buf, len, path, &whole, &p->err);
  if (p->rc) {
    free(buf);
    return;
  }
  log_part v[LOG_MAX_PARTS];
  size_t n = log_parts(&whole, base_name(path), v);
  if (n > 1) {
    log_free(&whole);
    p->rc = parse_parts(path, (const char *)buf, len, v, n, p);
  } else if (!(p->parts = calloc(1, sizeof *p->parts))) {
    log_free(&whole);
    p->rc = pg_fail(&p->err, path, -1, "out of memory while parsing the log");
  } else {
    p->parts[0] = (parsed_part){whole, {0}, 0, len, NAME_SEED_FILE};
    sha256_buf(buf, len, p->parts[0].digest);
    p->n = 1;
  }
  free(buf);
}

static void free_parsed(parsed_log *p) {
  for (size_t i = 0; i < p->n; i++) log_free(&p->parts[i].log);
  free(p->parts);
  memset(p, 0, sizeof *p);
}

/* One part of a log (all of it, for most files) as a log of the folder,
 * or as one of its other logs where it holds no result. */
static void add_part(submission *s, const entry *e, parsed_part *q, uint32_t part, uint32_t n,
                     int64_t before, finding_list *f) {
  sub_log lg = {0};
  lg.log = q->log;
  const pg_log *l = &lg.log;
  if (!l->n_train && !l->n_val && !l->n_metrics && !l->stop.line) {
    uint32_t fig = l->figure_line;
    log_free(&lg.log);
    if (n > 1) return; /* not reached: log_parts splits a file where its results are */
    if (push_file(&s->other_logs, &s->n_other_logs, e)) {
      f->oom = 1;
      return;
    }
    s->other_logs[s->n_other_logs - 1].figure_line = fig;
    return;
  }
  lg.rel = strdup(e->rel);
  lg.part = part, lg.n_parts = n, lg.off = q->off, lg.len = q->len;
  lg.name_seed = q->name_seed == NAME_SEED_FILE ? seed_from_name(e->rel) : q->name_seed;
  double ms, res, step;
  uint32_t at;
  lg.trains = l->n_train || log_train_end(l, &ms, &res, &at, &step) == 0;
  /* A training log's printed seed is its run's; an evaluation's printed
   * seed is often the evaluating process's, and its file name tells whose
   * artifact it scored (eval_seed1337.log printing seed 42). */
  if (l->seed.line && (lg.trains || lg.name_seed < 0)) {
    lg.seed = (int64_t)l->seed.v;
    lg.seed_line = l->seed.line;
  } else {
    lg.seed = lg.name_seed;
  }
  if (lg.seed < 0) lg.seed = before; /* a part that names no seed goes on with the run before it */
  memcpy(lg.digest, q->digest, sizeof lg.digest);
  lg.copy_of = -1;
  sub_log *v = realloc(s->logs, (s->n_logs + 1) * sizeof *v);
  if (!v || !lg.rel) {
    free(lg.rel);
    log_free(&lg.log);
    f->oom = 1;
    return;
  }
  s->logs = v;
  s->logs[s->n_logs++] = lg;
}

/* Every part of a parsed log as a log of the folder; the parsed log is
 * emptied. */
static void add_log(submission *s, const entry *e, parsed_log *p, finding_list *f) {
  if (p->rc) {
    findings_add(f, "LOG_UNREADABLE", SEV_ERROR, e->rel, 0, "%s", p->err.msg);
    free_parsed(p);
    return;
  }
  int64_t before = -1; /* the seed of the file's part before */
  for (size_t i = 0; i < p->n; i++) {
    size_t had = s->n_logs;
    add_part(s, e, &p->parts[i], (uint32_t)i, (uint32_t)p->n, before, f);
    if (s->n_logs > had) before = s->logs[had].seed;
  }
  free(p->parts);
  memset(p, 0, sizeof *p);
}

static void add_json(submission *s, const entry *e, finding_list *f) {
  char full[8192];
  snprintf(full, sizeof full, "%s/%s", s->dir, e->rel);
  sub_json j;
  uint8_t *buf;
  size_t len;
  pg_error err;
  if (file_read_all(full, SUB_MAX_JSON_BYTES, &buf, &len, &err)) {
    findings_add(f, "JSON_INVALID", SEV_ERROR, e->rel, 0, "%s", err.msg);
    return;
  }
  submission_json_parse((const char *)buf, len, e->rel, &j, f);
  free(buf);
  sub_json *v = realloc(s->json, (s->n_json + 1) * sizeof *v);
  if (!v) {
    sub_json_free(&j);
    f->oom = 1;
    return;
  }
  s->json = v;
  s->json[s->n_json++] = j;
}

#define README_HEAD_LINES 12

/* Whether line (lower case) declares a non-record submission: the title
 * says so, or the line starts with it ("Non-record submission exploring",
 * "**Status:** non-record") or says "this is a non-record ...". A mention
 * of another submission ("PR #461, which was accepted as a non-record
 * submission") does not. */
static int declares_nonrecord(const char *line, int title) {
  static const char *words[] = {"non-record", "non record", "nonrecord", "unlimited compute",
                                "unlimited-compute"};
  int has = 0;
  for (size_t i = 0; i < sizeof words / sizeof *words && !has; i++)
    has = strstr(line, words[i]) != NULL;
  if (!has) return 0;
  if (title) return 1;
  while (*line && strchr(" \t*_>#-[", *line)) line++;
  static const char *starts[] = {"non-record", "non record", "status:", "track:"};
  for (size_t i = 0; i < sizeof starts / sizeof *starts; i++)
    if (!strncmp(line, starts[i], strlen(starts[i]))) return 1;
  return strstr(line, "this is a non-record") || strstr(line, "contains a non-record") ||
         strstr(line, ". non-record submission");
}

/* The challenge README: "We also accept non-record submissions to an
 * unlimited compute track ... Just note as such in your README file."
 * 1 when one of the first README_HEAD_LINES lines of dir/README.md does. */
static int readme_says_nonrecord(const char *dir) {
  char path[4096], line[1024];
  snprintf(path, sizeof path, "%s/README.md", dir);
  FILE *fp = fopen(path, "rb");
  if (!fp) return 0;
  int found = 0, seen_title = 0;
  for (unsigned n = 1; n <= README_HEAD_LINES && !found && fgets(line, sizeof line, fp); n++) {
    if (!strchr(line, '\n')) { /* a longer line: its head is judged, the rest skipped */
      int c;
      while ((c = fgetc(fp)) != EOF && c != '\n') {
      }
    }
    for (char *c = line; *c; c++) *c = (char)tolower((unsigned char)*c);
    int title = !seen_title && line[0] == '#';
    seen_title |= line[0] == '#';
    found = declares_nonrecord(line, title);
  }
  fclose(fp);
  return found;
}

/* The track: --track, else non-record where the README declares it (the
 * written way; many such folders keep the "track": "10min_16mb" of the
 * JSON they copied), else submission.json "track", else the folder path
 * (records/track_10min_16mb/... or track_non_record_16mb/...), else the
 * record track, whose rules are the stricter. */
static void infer_track(submission *s, int forced) {
  if (forced >= 0) {
    s->track = (sub_track)forced;
    s->track_source = "--track";
    return;
  }
  if (readme_says_nonrecord(s->dir)) {
    s->track = TRACK_NONRECORD;
    s->track_source = "README.md";
    return;
  }
  const sub_json *j = submission_claims(s);
  if (j && j->has_track) {
    s->track = strstr(j->track, "non") || strstr(j->track, "unlimited") ? TRACK_NONRECORD
                                                                       : TRACK_RECORD;
    s->track_source = "submission.json";
    return;
  }
  char *real = realpath(s->dir, NULL);
  const char *p = real ? real : s->dir;
  if (strstr(p, "track_non_record") || strstr(p, "non_record")) {
    s->track = TRACK_NONRECORD;
    s->track_source = "folder path";
  } else if (strstr(p, "track_10min")) {
    s->track = TRACK_RECORD;
    s->track_source = "folder path";
  } else {
    s->track = TRACK_RECORD;
    s->track_source = "default";
  }
  free(real);
}

/* Where no .log or .txt lies at the top or one folder down (not even one
 * in a shape pgolf does not read: that is the folder's own), the logs two
 * or three folders down (seeds/42/train.log, PR #1655;
 * runs/seed_1338/wd_0/train.log, PR #98) are the folder's logs. Only then:
 * a folder with logs of its own may keep other experiments' further down
 * (PR #2004's unread train.log beside logs/<run>/train_*.txt). Files
 * named for no seed take the seed a folder of their path names.
 *
 * Beside logs of the folder's own, only evaluations are read from down
 * there (evals_only): logs that train nothing, whose path names a seed
 * (PR #2018's token_only_fast_evals/seed42/run_tokenonly_fast.log, which
 * holds the score claimed for seed 42). They join that seed's run as an
 * eval_seed42.log beside train_seed42.log does; another experiment's
 * training further down stays out. */
static int evaluation_only(const parsed_log *p) {
  if (p->rc || !p->n) return 0;
  for (size_t i = 0; i < p->n; i++) {
    const pg_log *l = &p->parts[i].log;
    if (l->n_train || l->n_val || l->stop.line || !l->n_metrics) return 0;
  }
  return 1;
}

static void deep_logs(submission *s, finding_list *f, int evals_only) {
  entry *e = NULL;
  size_t n = 0, cap = 0;
  pg_error err;
  list_files(s->dir, NULL, &e, &n, &cap, 0, DEEP_LOG_DEPTH, &err);
  if (n) qsort(e, n, sizeof *e, cmp_entry); /* e is NULL in a folder of folders */
  for (size_t i = 0; i < n; i++) {
    const char *rel = e[i].rel;
    size_t slashes = 0;
    for (const char *c = rel; *c; c++) slashes += *c == '/';
    if (slashes >= 2 && is_log_name(rel) && !f->oom) {
      char full[8192];
      parsed_log p;
      snprintf(full, sizeof full, "%s/%s", s->dir, rel);
      parse_one(full, &p);
      if (!evals_only || (evaluation_only(&p) && seed_from_name(rel) >= 0))
        add_log(s, &e[i], &p, f);
      else
        free_parsed(&p);
    }
    free(e[i].rel);
  }
  free(e);
}

int submission_load(const char *dir, int forced_track, submission *s, finding_list *f,
                    pg_error *err) {
  memset(s, 0, sizeof *s);
  struct stat st;
  if (stat(dir, &st)) return pg_fail_errno(err, dir, "cannot read the folder");
  if (!S_ISDIR(st.st_mode)) return pg_fail(err, dir, -1, "not a folder");
  s->dir = strdup(dir);
  if (!s->dir) return pg_fail(err, dir, -1, "out of memory");
  entry *e = NULL;
  size_t n = 0, cap = 0;
  if (list_files(dir, NULL, &e, &n, &cap, 0, 1, err)) {
    free(e);
    free(s->dir);
    s->dir = NULL;
    return -1;
  }
  if (n) qsort(e, n, sizeof *e, cmp_entry); /* e is NULL in a folder of folders */
  parsed_log *pl = calloc(n + 1, sizeof *pl);
  if (!pl) f->oom = 1;
#pragma omp parallel for schedule(dynamic)
  for (size_t i = 0; i < (pl ? n : 0); i++) {
    if (!is_log_name(e[i].rel)) continue;
    char full[8192];
    snprintf(full, sizeof full, "%s/%s", dir, e[i].rel);
    parse_one(full, &pl[i]);
  }
  for (size_t i = 0; i < n; i++) {
    const char *rel = e[i].rel, *b = base_name(rel);
    int top = strchr(rel, '/') == NULL;
    if (top && strcmp(b, "README.md") == 0) s->has_readme = 1;
    else if (top && !s->readme_alt && strncasecmp(b, "readme", 6) == 0) s->readme_alt = strdup(b);
    if (top && strcmp(b, "train_gpt.py") == 0) s->entry = (sub_file){strdup(rel), e[i].size, 0};
    if (ends_with(b, ".py")) push_file(&s->code, &s->n_code, &e[i]);
    if (ends_with(b, ".model")) push_file(&s->tokenizers, &s->n_tokenizers, &e[i]);
    if (top && strncmp(b, "submission", 10) == 0 && ends_with(b, ".json")) add_json(s, &e[i], f);
    if (pl && is_log_name(rel)) add_log(s, &e[i], &pl[i], f);
    free(e[i].rel);
  }
  for (size_t i = 0; pl && i < n; i++) free_parsed(&pl[i]);
  free(pl);
  free(e);
  if (!s->n_logs && !s->n_other_logs)
    deep_logs(s, f, 0);
  else if (s->n_logs)
    deep_logs(s, f, 1);
  infer_track(s, forced_track);
  submission_link(s, f);
  return 0;
}

const sub_json *submission_claims(const submission *s) {
  for (size_t i = 0; i < s->n_json; i++)
    if (s->json[i].root) return &s->json[i];
  return NULL;
}

static void free_files(sub_file *v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i].rel);
  free(v);
}

void submission_free(submission *s) {
  submission_runs_free(s);
  free(s->dir);
  free(s->entry.rel);
  free_files(s->code, s->n_code);
  free_files(s->tokenizers, s->n_tokenizers);
  free(s->readme_alt);
  free_files(s->other_logs, s->n_other_logs);
  for (size_t i = 0; i < s->n_logs; i++) {
    free(s->logs[i].rel);
    log_free(&s->logs[i].log);
  }
  free(s->logs);
  for (size_t i = 0; i < s->n_json; i++) sub_json_free(&s->json[i]);
  free(s->json);
  memset(s, 0, sizeof *s);
}
