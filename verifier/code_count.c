/* The counted code of a submission; see code_count.h. */
#include "verifier/code_count.h"

#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "verifier/pysrc.h"

#define MAX_DEPTH 3 /* folder levels listed: top, and two below */

const char *code_state_name(code_state s) {
  return s == CODE_COUNTED ? "counted" : s == CODE_MAYBE ? "possibly loaded" : "not loaded";
}

static int ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && !strcmp(s + a - b, suf);
}

static const char *base_of(const char *p) {
  const char *b = strrchr(p, '/');
  return b ? b + 1 : p;
}

/* Files that can be code a run loads: Python, C/C++/CUDA sources and
 * headers, shared objects, compressed blobs of code. */
static int code_like(const char *rel) {
  static const char *ext[] = {".py", ".pyx", ".c",  ".cc", ".cpp", ".cxx", ".cu", ".cuh",
                              ".h",  ".hh",  ".hpp", ".so", ".lzma", ".xz",  ".zst", ".br",
                              ".zlib", ".bz2", ".b85"};
  for (size_t i = 0; i < sizeof ext / sizeof *ext; i++)
    if (ends_with(rel, ext[i])) return 1;
  return 0;
}

/* ---- the folder's files ---- */

typedef struct folder {
  code_file *f; /* rel and bytes only */
  size_t n;
  char **dirs;
  size_t n_dirs;
  const char **names; /* base names of code files and folders, sorted: the only
                         literals worth a closer look */
  size_t n_names;
} folder;

static void list_dir(folder *fd, const char *root, const char *sub, int depth) {
  char path[4096];
  snprintf(path, sizeof path, "%s%s%s", root, sub[0] ? "/" : "", sub);
  DIR *d = opendir(path);
  if (!d) return;
  struct dirent *de;
  while ((de = readdir(d)) && fd->n < CODE_MAX_FILES) {
    if (de->d_name[0] == '.') continue;
    char rel[2048], full[4096 + 2048];
    if (snprintf(rel, sizeof rel, "%s%s%s", sub, sub[0] ? "/" : "", de->d_name) >= (int)sizeof rel)
      continue;
    snprintf(full, sizeof full, "%s/%s", root, rel);
    struct stat st;
    if (lstat(full, &st)) continue;
    if (S_ISDIR(st.st_mode) && depth + 1 < MAX_DEPTH) {
      char **nd = realloc(fd->dirs, (fd->n_dirs + 1) * sizeof *nd);
      if (nd && (nd[fd->n_dirs] = strdup(rel))) fd->dirs = nd, fd->n_dirs++;
      else if (nd) fd->dirs = nd;
      list_dir(fd, root, rel, depth + 1);
    } else if (S_ISREG(st.st_mode)) {
      code_file *nf = realloc(fd->f, (fd->n + 1) * sizeof *nf);
      if (!nf) break;
      fd->f = nf;
      nf[fd->n] = (code_file){strdup(rel), (int64_t)st.st_size, CODE_COUNTED, ""};
      if (nf[fd->n].rel) fd->n++;
    }
  }
  closedir(d);
}

static int cmp_file(const void *a, const void *b) {
  return strcmp(((const code_file *)a)->rel, ((const code_file *)b)->rel);
}

static int cmp_cstr(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void index_names(folder *fd) {
  fd->names = malloc((fd->n + fd->n_dirs + 1) * sizeof *fd->names);
  if (!fd->names) return;
  for (size_t i = 0; i < fd->n; i++)
    if (code_like(fd->f[i].rel)) fd->names[fd->n_names++] = base_of(fd->f[i].rel);
  for (size_t i = 0; i < fd->n_dirs; i++) fd->names[fd->n_names++] = base_of(fd->dirs[i]);
  qsort(fd->names, fd->n_names, sizeof *fd->names, cmp_cstr);
}

static int named_in_folder(const folder *fd, const char *base) {
  return fd->names && bsearch(&base, fd->names, fd->n_names, sizeof *fd->names, cmp_cstr) != NULL;
}

static void folder_free(folder *fd) {
  free(fd->names);
  for (size_t i = 0; i < fd->n; i++) free(fd->f[i].rel);
  for (size_t i = 0; i < fd->n_dirs; i++) free(fd->dirs[i]);
  free(fd->f);
  free(fd->dirs);
}

static const code_file *folder_find(const folder *fd, const char *rel) {
  for (size_t i = 0; i < fd->n; i++)
    if (!strcmp(fd->f[i].rel, rel)) return &fd->f[i];
  return NULL;
}

/* ---- one entry's closure ---- */

typedef struct walker {
  const submission *s;
  const folder *fd;
  code_count *cc;
  code_set *set;
  unsigned char scanned[CODE_MAX_FILES];
  size_t budget; /* literal matches and conditions left to examine: a bound on
                    the work a hostile script can cause */
  int oom;
} walker;

#define CODE_WORK_BUDGET 4096

static void why_fmt(char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why_fmt(char *why, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, CODE_WHY_MAX, fmt, ap);
  va_end(ap);
  /* Reasons quote script text cut to a length; keep them ASCII so a cut
   * never splits a UTF-8 character (JSON output needs valid UTF-8). */
  for (char *p = why; *p; p++)
    if ((unsigned char)*p >= 0x80 || (unsigned char)*p < 0x20) *p = '?';
}

/* Add (or strengthen) a file of the set. Returns its index or -1. */
static long set_add(walker *w, const code_file *f, code_state st, const char *why) {
  code_set *set = w->set;
  for (size_t i = 0; i < set->n; i++) {
    if (strcmp(set->files[i].rel, f->rel)) continue;
    if (st < set->files[i].state) {
      set->files[i].state = st;
      snprintf(set->files[i].why, CODE_WHY_MAX, "%s", why);
    }
    return (long)i;
  }
  if (set->n >= CODE_MAX_FILES) return -1;
  code_file *nf = realloc(set->files, (set->n + 1) * sizeof *nf);
  char *rel = strdup(f->rel);
  if (!nf || !rel) {
    if (nf) set->files = nf;
    free(rel);
    w->oom = 1;
    return -1;
  }
  set->files = nf;
  nf[set->n] = (code_file){rel, f->bytes, st, ""};
  snprintf(nf[set->n].why, CODE_WHY_MAX, "%s", why);
  return (long)set->n++;
}

static void problem(code_count *cc, const char *rel, const char *msg) {
  for (size_t i = 0; i < cc->n_problems; i++)
    if (!strcmp(cc->problems[i].rel, rel)) return;
  code_problem *np = realloc(cc->problems, (cc->n_problems + 1) * sizeof *np);
  if (!np) return;
  cc->problems = np;
  np[cc->n_problems].rel = strdup(rel);
  snprintf(np[cc->n_problems].msg, sizeof np->msg, "%s", msg);
  if (np[cc->n_problems].rel) cc->n_problems++;
}

/* ---- import statements ---- */

static int ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* A dotted name at p; returns its length. */
static size_t dotted(const char *p) {
  size_t k = 0;
  while (ident_char(p[k]) || (p[k] == '.' && k && ident_char(p[k + 1]))) k++;
  return k;
}

size_t code_import_targets(const char *stmt,
                           void (*fn)(const char *module, int level, const char *name, void *ctx),
                           void *ctx) {
  char mod[256], name[256];
  size_t count = 0;
  if (!strncmp(stmt, "import ", 7)) {
    const char *p = stmt + 7;
    for (;;) {
      size_t k = dotted(p);
      if (!k || k >= sizeof mod) break;
      memcpy(mod, p, k);
      mod[k] = 0;
      fn(mod, 0, NULL, ctx);
      count++;
      p += k;
      if (!strncmp(p, " as ", 4)) p += 4 + dotted(p + 4);
      if (*p != ',') break;
      p++;
    }
  } else if (!strncmp(stmt, "from", 4) && (stmt[4] == ' ' || stmt[4] == '.')) {
    /* Normalized text: "from m import x", "from.m import x", "from..import x". */
    const char *p = stmt + 4;
    int level = 0;
    if (*p == ' ') p++;
    while (*p == '.') level++, p++;
    if (*p == ' ') p++;
    size_t k = 0;
    if (!(level && !strncmp(p, "import", 6) && !ident_char(p[6]))) k = dotted(p);
    if (k >= sizeof mod) return 0;
    memcpy(mod, p, k);
    mod[k] = 0;
    p += k;
    if (*p == ' ') p++;
    if (strncmp(p, "import", 6) || ident_char(p[6])) return 0;
    p += 6;
    while (*p == ' ' || *p == '(') p++;
    for (;;) {
      size_t m = dotted(p);
      if (!m || m >= sizeof name) break;
      memcpy(name, p, m);
      name[m] = 0;
      fn(mod, level, name, ctx);
      count++;
      p += m;
      if (!strncmp(p, " as ", 4)) p += 4 + dotted(p + 4);
      if (*p != ',') break;
      p++;
      while (*p == ' ') p++;
    }
    if (*p == '*') fn(mod, level, "*", ctx), count++;
  }
  return count;
}

/* ---- conditions ---- */

/* A statement that reads the environment: `name = ...environ.get("VAR", default)`. */
typedef struct env_read {
  char name[64]; /* the assigned name (without "self."), "" if none */
  char var[128], def[128];
  uint32_t line;
} env_read;

typedef struct scan {
  walker *w;
  const char *rel;       /* the file being scanned */
  const char *label;     /* how messages name it: "train_gpt.py" or "train_gpt.py (decoded)" */
  const py_src *src;
  const py_stmt *stmt;   /* the import statement being resolved */
  env_read *by_name, *by_var; /* the file's environment reads, sorted two ways */
  size_t n_env;
} scan;

/* Value text after the first argument of the call whose '(' follows
 * text[at]: a literal's body or a bare number/name, into out. */
static void default_arg(const char *t, size_t n, size_t after_first, char *out, size_t cap) {
  out[0] = 0;
  size_t i = after_first;
  while (i < n && t[i] == ' ') i++;
  if (i >= n || t[i] != ',') return;
  i++;
  while (i < n && t[i] == ' ') i++;
  py_str s;
  size_t pos = i;
  if (i < n && (t[i] == '"' || t[i] == '\'') && pysrc_next_string(t, n, &pos, &s)) {
    snprintf(out, cap, "%.*s", (int)s.len, s.body);
    return;
  }
  size_t k = i;
  while (k < n && (ident_char(t[k]) || t[k] == '.' || t[k] == '-')) k++;
  snprintf(out, cap, "%.*s", (int)(k - i), t + i);
}

/* In text[0..n): the env var an environ/getenv call reads (its first
 * literal) and the default given. Returns 1 if there is such a call. */
static int env_call(const char *t, size_t n, char *var, size_t vcap, char *def, size_t dcap) {
  const char *p = strstr(t, "environ");
  const char *g = strstr(t, "getenv");
  if (!p || (g && g < p)) p = g;
  if (!p) return 0;
  size_t pos = (size_t)(p - t);
  py_str s;
  if (!pysrc_next_string(t, n, &pos, &s) || !s.len || s.len >= vcap) return 0;
  snprintf(var, vcap, "%.*s", (int)s.len, s.body);
  default_arg(t, n, s.end, def, dcap);
  if (strchr(t + s.end, ']') == t + s.end) def[0] = 0; /* os.environ["X"]: no default */
  return 1;
}

static int cmp_env_name(const void *a, const void *b) {
  return strcmp(((const env_read *)a)->name, ((const env_read *)b)->name);
}
static int cmp_env_var(const void *a, const void *b) {
  return strcmp(((const env_read *)a)->var, ((const env_read *)b)->var);
}

/* Index the file's environment reads once, so that conditions are looked
 * up, not searched for. */
static void index_env(scan *sc) {
  const py_src *src = sc->src;
  size_t n = 0;
  for (size_t i = 0; i < src->n; i++)
    n += strstr(src->v[i].text, "environ") || strstr(src->v[i].text, "getenv");
  sc->by_name = calloc(n + 1, sizeof *sc->by_name);
  sc->by_var = calloc(n + 1, sizeof *sc->by_var);
  if (!sc->by_name || !sc->by_var) return;
  for (size_t i = 0; i < src->n; i++) {
    env_read e = {"", "", "", src->v[i].line};
    if (!env_call(src->v[i].text, src->v[i].len, e.var, sizeof e.var, e.def, sizeof e.def)) continue;
    const char *t = src->v[i].text, *a = !strncmp(t, "self.", 5) ? t + 5 : t;
    size_t k = 0;
    while (ident_char(a[k])) k++;
    if (k && k < sizeof e.name && (a[k] == '=' || a[k] == ':') && a[k + 1] != '=')
      snprintf(e.name, sizeof e.name, "%.*s", (int)k, a);
    sc->by_name[sc->n_env] = sc->by_var[sc->n_env] = e;
    sc->n_env++;
  }
  /* Stable order for equal keys: the first read in the file wins. */
  if (sc->n_env) {
    qsort(sc->by_name, sc->n_env, sizeof *sc->by_name, cmp_env_name);
    qsort(sc->by_var, sc->n_env, sizeof *sc->by_var, cmp_env_var);
  }
}

/* The first entry equal to key in a sorted run. */
static const env_read *first_eq(const env_read *v, size_t n, const env_read *key,
                                int (*cmp)(const void *, const void *)) {
  const env_read *hit = bsearch(key, v, n, sizeof *v, cmp);
  if (!hit) return NULL;
  const env_read *best = hit;
  for (const env_read *p = hit; p > v && !cmp(p - 1, key);) best = --p;
  for (const env_read *p = hit; p < v + n && !cmp(p, key); p++)
    if (p->line < best->line) best = p;
  return best;
}

/* The env var an attribute or name is read from: an assignment to it in
 * the same file that reads the environment (`x=bool(int(os.environ.get(
 * "X","0")))`, `self.x = ...`), else a read of the upper-cased name. */
static int env_of_name(const scan *sc, const char *name, char *var, size_t vcap, char *def,
                       size_t dcap, uint32_t *line) {
  if (!sc->by_name || strlen(name) >= 64) return 0;
  env_read key = {"", "", "", 0};
  snprintf(key.name, sizeof key.name, "%.63s", name);
  const env_read *e = first_eq(sc->by_name, sc->n_env, &key, cmp_env_name);
  if (!e) {
    for (size_t j = 0; name[j]; j++) key.var[j] = (char)toupper((unsigned char)name[j]);
    e = first_eq(sc->by_var, sc->n_env, &key, cmp_env_var);
  }
  if (!e) return 0;
  snprintf(var, vcap, "%s", e->var);
  snprintf(def, dcap, "%s", e->def);
  *line = e->line;
  return 1;
}

/* The value the documented run gives VAR (or attribute attr): the README,
 * else the logs' hyperparameters, else the script's default. Returns 1
 * with *value and a reason, 0 if unknown. */
static int run_value(const scan *sc, const char *var, const char *attr, const char *def,
                     int has_def, uint32_t def_line, char *value, size_t cap, char *why,
                     size_t wcap) {
  const readme_run *r = &sc->w->cc->run;
  const run_item *hit = NULL;
  for (size_t i = 0; i < r->n_env; i++)
    if (!strcmp(r->env[i].word, var) && (!hit || run_value_truthy(r->env[i].value))) hit = &r->env[i];
  if (hit) {
    snprintf(value, cap, "%s", hit->value);
    snprintf(why, wcap, "%.60s=%.40s in %.100s", var, hit->value, hit->where);
    return 1;
  }
  const submission *s = sc->w->s;
  for (size_t i = 0; attr && i < s->n_logs; i++) {
    const log_kv *kv = log_hparam(&s->logs[i].log, attr);
    if (!kv) continue;
    snprintf(value, cap, "%s", kv->value);
    snprintf(why, wcap, "%.60s: %.40s in %.100s:%u", attr, kv->value, s->logs[i].rel, kv->line);
    return 1;
  }
  if (has_def) {
    snprintf(value, cap, "%s", def);
    snprintf(why, wcap, "%.60s is not set by the README; the default is '%.40s' (%.100s:%u)", var, def,
             sc->label, def_line);
    return 1;
  }
  return 0;
}

static void strip_parens(char *c) {
  size_t n = strlen(c);
  while (n >= 2 && c[0] == '(' && c[n - 1] == ')') {
    memmove(c, c + 1, n - 2);
    n -= 2;
    c[n] = 0;
  }
}

/* Unwrap int(...), bool(...), float(...), str(...). */
static void strip_casts(char *c) {
  static const char *casts[] = {"int(", "bool(", "float(", "str("};
  for (int again = 1; again;) {
    again = 0;
    for (size_t i = 0; i < 4; i++) {
      size_t k = strlen(casts[i]), n = strlen(c);
      if (n > k && !strncmp(c, casts[i], k) && c[n - 1] == ')') {
        memmove(c, c + k, n - k - 1);
        c[n - k - 1] = 0;
        again = 1;
      }
    }
  }
}

/* Is the condition on for the documented run? 1 on, 0 off, -1 unknown;
 * why says how it was decided. */
static int eval_cond(const scan *sc, const char *cond_in, char *why, size_t wcap) {
  char c[512];
  snprintf(c, sizeof c, "%s", cond_in);
  int neg = 0;
  for (;;) {
    strip_parens(c);
    if (strncmp(c, "not ", 4)) break;
    memmove(c, c + 4, strlen(c + 4) + 1);
    neg ^= 1;
  }
  if (strstr(c, "__name__") && strstr(c, "__main__")) {
    snprintf(why, wcap, "the script runs as __main__");
    return neg ? 0 : 1;
  }
  /* An equality against a literal: `X=="1"`, `X!='0'`. */
  char lit[128] = "";
  int cmp = 0;
  char *eq = strstr(c, "==");
  char *ne = strstr(c, "!=");
  char *op = eq ? eq : ne;
  if (op) {
    size_t pos = (size_t)(op - c) + 2;
    py_str s;
    size_t n = strlen(c);
    if (pos < n && (c[pos] == '"' || c[pos] == '\'') && pysrc_next_string(c, n, &pos, &s) && pos == n)
      snprintf(lit, sizeof lit, "%.*s", (int)s.len, s.body);
    else if (pos < n && isdigit((unsigned char)c[pos]) && strspn(c + pos, "0123456789.") == n - pos)
      snprintf(lit, sizeof lit, "%s", c + pos);
    else
      return -1;
    cmp = op == eq ? 1 : 2;
    *op = 0;
  }
  if (strstr(c, " and ") || strstr(c, " or ")) return -1;
  strip_casts(c);
  char var[128], def[128], attr[128] = "";
  int has_def = 0;
  uint32_t def_line = sc->stmt->line;
  if (env_call(c, strlen(c), var, sizeof var, def, sizeof def)) {
    has_def = 1; /* os.environ.get("X") without a default is None: false */
  } else {
    size_t k = dotted(c);
    if (!k || c[k]) return -1;
    const char *last = strrchr(c, '.');
    snprintf(attr, sizeof attr, "%.127s", last ? last + 1 : c);
    if (!env_of_name(sc, attr, var, sizeof var, def, sizeof def, &def_line)) return -1;
    has_def = 1;
  }
  char value[RUN_WORD_MAX], how[300];
  if (!run_value(sc, var, attr[0] ? attr : NULL, def, has_def, def_line, value, sizeof value, how,
                 sizeof how))
    return -1;
  int on;
  if (cmp) {
    char v[RUN_WORD_MAX];
    snprintf(v, sizeof v, "%s", value);
    on = (strcmp(v, lit) == 0) == (cmp == 1);
  } else {
    on = run_value_truthy(value);
  }
  snprintf(why, wcap, "%s", how);
  return neg ? !on : on;
}

/* The condition a block header tests, with the header's keyword. */
static int header_cond(const py_stmt *h, const char **kw, const char **cond) {
  *kw = pysrc_keyword(h);
  if (!strcmp(*kw, "if") || !strcmp(*kw, "while")) *cond = h->text + strlen(*kw) + 1;
  else if (!strcmp(*kw, "elif")) *cond = h->text + 5;
  else return 0;
  return 1;
}

/* Is statement k loaded by the documented run? Walks its enclosing
 * headers; `else` takes the negation of a lone `if` before it. why holds
 * CODE_WHY_MAX bytes. */
static code_state guard_state(const scan *sc, size_t k, char *why) {
  const py_src *src = sc->src;
  why[0] = 0;
  code_state st = CODE_COUNTED;
  for (int32_t p = src->v[k].parent; p >= 0; p = src->v[p].parent) {
    const py_stmt *h = &src->v[p];
    const char *kw, *cond;
    int on;
    char how[300] = "";
    if (header_cond(h, &kw, &cond)) {
      on = eval_cond(sc, cond, how, sizeof how);
    } else if (!strcmp(kw, "else")) {
      /* The if/elif chain right before this else, at the same depth. */
      int32_t q = p - 1;
      while (q >= 0 && src->v[q].depth > h->depth) q--;
      const char *qkw = q >= 0 ? pysrc_keyword(&src->v[q]) : "";
      if (q >= 0 && src->v[q].header && !strcmp(qkw, "if") && header_cond(&src->v[q], &kw, &cond)) {
        on = eval_cond(sc, cond, how, sizeof how);
        if (on >= 0) on = !on;
      } else {
        on = -1;
      }
    } else {
      continue; /* def, class, try, with, for: not a flag */
    }
    char at[300] = "";
    if (h->line != src->v[k].line) snprintf(at, sizeof at, " at %.200s:%u", sc->label, h->line);
    if (on == 0) {
      why_fmt(why, "under `%.80s`%s, off for the documented run (%.200s)", h->text, at, how);
      return CODE_NOT_LOADED;
    }
    if (on < 0) {
      why_fmt(why, "under `%.80s`%s, which pgolf cannot decide", h->text, at);
      st = CODE_MAYBE;
    } else if (st == CODE_COUNTED && !why[0]) {
      why_fmt(why, "under `%.80s`%s, on for the documented run (%.200s)", h->text, at, how);
    }
  }
  return st;
}

/* ---- resolving and scanning ---- */

typedef struct import_ctx {
  scan *sc;
  size_t k; /* statement index */
} import_ctx;

/* A module path (dots to slashes) from base: "base/mod.py" or
 * "base/mod/__init__.py" when shipped. */
static const code_file *module_file(const folder *fd, const char *base, const char *mod) {
  char path[1024], m[512];
  snprintf(m, sizeof m, "%s", mod);
  for (char *p = m; *p; p++)
    if (*p == '.') *p = '/';
  const char *fmt[] = {"%s%s%s.py", "%s%s%s/__init__.py"};
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof path, fmt[i], base, base[0] ? "/" : "", m);
    const code_file *f = folder_find(fd, path);
    if (f) return f;
  }
  return NULL;
}

static void dir_of(const char *rel, char *out, size_t cap) {
  const char *b = strrchr(rel, '/');
  snprintf(out, cap, "%.*s", b ? (int)(b - rel) : 0, rel);
}

static void on_import(const char *module, int level, const char *name, void *vctx) {
  import_ctx *ic = vctx;
  scan *sc = ic->sc;
  walker *w = sc->w;
  char base[1024];
  if (level) {
    dir_of(sc->rel, base, sizeof base);
    for (int up = 1; up < level; up++) {
      char b2[1024];
      dir_of(base, b2, sizeof b2);
      snprintf(base, sizeof base, "%s", b2);
    }
  } else {
    dir_of(w->set->files[0].rel, base, sizeof base); /* sys.path[0]: the entry's folder */
  }
  const code_file *hits[2] = {NULL, NULL};
  if (module[0]) hits[0] = module_file(w->fd, base, module);
  if (name && strcmp(name, "*")) { /* from package import submodule */
    char sub[600];
    snprintf(sub, sizeof sub, "%s%s%s", module, module[0] ? "." : "", name);
    hits[1] = module_file(w->fd, base, sub);
  }
  for (int h = 0; h < 2; h++) {
    if (!hits[h] || !strcmp(hits[h]->rel, sc->rel)) continue;
    char why[CODE_WHY_MAX], guard[CODE_WHY_MAX] = "";
    code_state st = CODE_MAYBE;
    if (w->budget) {
      w->budget--;
      st = guard_state(sc, ic->k, guard);
    } else {
      why_fmt(guard, "(more conditional imports than pgolf examines)");
    }
    why_fmt(why, "imported by %s:%u%s%s", sc->label, sc->stmt->line, guard[0] ? " " : "", guard);
    set_add(w, hits[h], st, why);
  }
}

/* A statement that loads, runs or builds a file it names: it opens,
 * exec's or compiles something, builds a path, or starts a compiler. A
 * name in a message or a metadata constant (`SOURCE = "prep.py"`) is not
 * a load. */
static int load_statement(const char *t) {
  static const char *calls[] = {
      "open(",     "exec(",       "compile(",       "read_text(",  "read_bytes(",
      "path.join(", "with_name(", "joinpath(",      "Path(",       ".replace(",
      "load(",     "load_inline(", "CDLL(",         "import_module(", "spec_from_file_location(",
      "subprocess", "system(",    "Popen(",         "check_call(", "check_output(",
      "sources=",  "run_path("};
  for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
    if (strstr(t, calls[i])) return 1;
  return 0;
}

/* The literal is an operand of the path operator: `dir / "x.c"`. */
static int path_operand(const char *t, size_t len, const py_str *s) {
  return (s->at > 0 && t[s->at - 1] == '/') || (s->end < len && t[s->end] == '/');
}

/* String literals naming shipped code files or a folder of them, in a
 * statement that loads what it names. */
static void named_files(scan *sc, const py_stmt *t) {
  walker *w = sc->w;
  size_t pos = 0;
  py_str s;
  int loads = load_statement(t->text);
  while (pysrc_next_string(t->text, t->len, &pos, &s)) {
    if (!s.len || s.len > 255 || memchr(s.body, ' ', s.len)) continue;
    if (!loads && !path_operand(t->text, t->len, &s)) continue;
    char lit[256];
    snprintf(lit, sizeof lit, "%.*s", (int)s.len, s.body);
    const char *lb = base_of(lit);
    if (!lb[0] || !strcmp(lb, ".") || !strcmp(lb, "..") || !named_in_folder(w->fd, lb)) continue;
    if (!w->budget) return;
    w->budget--;
    int is_dir = 0;
    for (size_t d = 0; d < w->fd->n_dirs; d++)
      is_dir |= !strcmp(w->fd->dirs[d], lit) || !strcmp(base_of(w->fd->dirs[d]), lb);
    for (size_t i = 0; i < w->fd->n; i++) {
      const code_file *f = &w->fd->f[i];
      if (!code_like(f->rel) || !strcmp(f->rel, sc->rel)) continue;
      char fdir[1024];
      dir_of(f->rel, fdir, sizeof fdir);
      int by_name = !strcmp(base_of(f->rel), lb) || !strcmp(f->rel, lit);
      int by_dir = is_dir && fdir[0] && (!strcmp(fdir, lit) || !strcmp(base_of(fdir), lb));
      if (!by_name && !by_dir) continue;
      char why[CODE_WHY_MAX];
      why_fmt(why, "%s \"%s\" at %s:%u", by_name ? "named" : "in the folder named", lit, sc->label,
              t->line);
      set_add(w, f, CODE_COUNTED, why);
    }
  }
}

static void scan_source(walker *w, const char *rel, const char *label, const char *text, size_t len) {
  py_src src;
  pg_error err;
  if (pysrc_parse(text, len, rel, &src, &err)) {
    problem(w->cc, rel, err.msg);
    return;
  }
  scan sc = {w, rel, label, &src, NULL, NULL, NULL, 0};
  index_env(&sc);
  for (size_t k = 0; k < src.n && !w->oom; k++) {
    const py_stmt *t = &src.v[k];
    if (t->docstring) continue;
    sc.stmt = t;
    const char *kw = pysrc_keyword(t);
    if (!strcmp(kw, "import") || !strcmp(kw, "from")) {
      import_ctx ic = {&sc, k};
      code_import_targets(t->text, on_import, &ic);
    }
    named_files(&sc, t);
  }
  free(sc.by_name);
  free(sc.by_var);
  pysrc_free(&src);
}

/* Read and scan a Python file of the set, once. */
static void scan_file(walker *w, size_t idx) {
  if (idx >= CODE_MAX_FILES || w->scanned[idx]) return;
  w->scanned[idx] = 1;
  char rel[2048];
  snprintf(rel, sizeof rel, "%s", w->set->files[idx].rel);
  char path[4096 + 2048];
  snprintf(path, sizeof path, "%s/%s", w->s->dir, rel);
  uint8_t *buf;
  size_t len;
  pg_error err;
  if (file_read_all(path, CODE_MAX_SOURCE_BYTES, &buf, &len, &err)) {
    problem(w->cc, rel, err.msg);
    return;
  }
  code_wrapper wrap;
  if (code_unwrap((const char *)buf, len, rel, &wrap, &err)) {
    char msg[600];
    pg_error_format(&err, msg, sizeof msg);
    problem(w->cc, rel, msg);
    scan_source(w, rel, rel, (const char *)buf, len);
  } else if (wrap.found) {
    char label[2100];
    snprintf(label, sizeof label, "%s (decoded)", rel);
    scan_source(w, rel, label, wrap.text, wrap.len);
    scan_source(w, rel, rel, (const char *)buf, len); /* the wrapper's own lines */
    if (idx == 0 && !w->set->wrap.found) w->set->wrap = wrap;
    else code_wrapper_free(&wrap);
  } else {
    scan_source(w, rel, rel, (const char *)buf, len);
  }
  free(buf);
}

/* Python files are scanned from this work list, not recursively: a chain
 * of imports is as long as the folder allows. Scan every loadable Python file of the set not scanned yet, until none
 * is left (scanning adds files). */
static void scan_all(walker *w) {
  for (int more = 1; more && !w->oom;) {
    more = 0;
    for (size_t j = 0; j < w->set->n && j < CODE_MAX_FILES; j++) {
      const code_file *f = &w->set->files[j];
      if (w->scanned[j] || f->state == CODE_NOT_LOADED || !ends_with(f->rel, ".py")) continue;
      scan_file(w, j);
      more = 1;
    }
  }
}

/* ---- entries ---- */

/* The shipped file a command names: its path as written, else its base
 * name anywhere in the folder (top level first). */
static const code_file *shipped(const folder *fd, const char *word) {
  const char *w = !strncmp(word, "./", 2) ? word + 2 : word;
  const code_file *f = folder_find(fd, w);
  if (f) return f;
  f = folder_find(fd, base_of(w));
  if (f) return f;
  for (size_t i = 0; i < fd->n; i++)
    if (!strcmp(base_of(fd->f[i].rel), base_of(w))) return &fd->f[i];
  return NULL;
}

static int add_set(code_count *cc, const code_file *entry, const char *why) {
  for (size_t i = 0; i < cc->n_sets; i++)
    if (!strcmp(cc->sets[i].files[0].rel, entry->rel)) return 0;
  if (cc->n_sets >= CODE_MAX_SETS) return 0;
  code_set *ns = realloc(cc->sets, (cc->n_sets + 1) * sizeof *ns);
  if (!ns) return -1;
  cc->sets = ns;
  code_set *set = &ns[cc->n_sets];
  memset(set, 0, sizeof *set);
  set->files = calloc(1, sizeof *set->files);
  if (!set->files || !(set->files[0].rel = strdup(entry->rel))) {
    free(set->files);
    return -1;
  }
  set->files[0].bytes = entry->bytes;
  set->files[0].state = CODE_COUNTED;
  snprintf(set->files[0].why, CODE_WHY_MAX, "%s", why);
  set->n = 1;
  cc->n_sets++;
  return 0;
}

static int choose_entries(code_count *cc, const folder *fd) {
  const code_file *top = folder_find(fd, "train_gpt.py");
  const readme_run *r = &cc->run;
  int rc = 0;
  if (top) rc |= add_set(cc, top, "entry script: train_gpt.py, the challenge's script");
  for (int pass = 0; pass < 2 && !rc; pass++) {
    /* pass 0: torchrun launches; pass 1 (only if nothing yet): python ones */
    if (pass == 1 && cc->n_sets) break;
    for (size_t i = 0; i < r->n_launch; i++) {
      if (pass == 0 && !r->launch[i].torchrun) continue;
      const code_file *f = shipped(fd, r->launch[i].word);
      if (!f || !ends_with(f->rel, ".py")) continue;
      char why[CODE_WHY_MAX];
      why_fmt(why, "entry script: launched by %s at %s", pass ? "python" : "torchrun",
              r->launch[i].where);
      rc |= add_set(cc, f, why);
    }
  }
  snprintf(cc->entry_rule, sizeof cc->entry_rule, "%s",
           cc->n_sets ? "train_gpt.py and the scripts the README launches"
                      : "no entry script identified: every top-level .py is counted");
  if (!cc->n_sets)
    for (size_t i = 0; i < fd->n && !rc; i++)
      if (ends_with(fd->f[i].rel, ".py") && !strchr(fd->f[i].rel, '/'))
        rc |= add_set(cc, &fd->f[i], "counted: no entry script identified (no train_gpt.py, no launch in README.md)");
  return rc;
}

/* Sources the README's compiler lines build belong to every set. */
static void add_builds(walker *w) {
  const readme_run *r = &w->cc->run;
  for (size_t i = 0; i < r->n_build; i++) {
    const code_file *f = shipped(w->fd, r->build[i].word);
    if (!f) continue;
    char why[CODE_WHY_MAX];
    why_fmt(why, "compiled by %s", r->build[i].where);
    set_add(w, f, CODE_COUNTED, why);
  }
}

static void totals(code_set *set) {
  set->counted = set->maybe = 0;
  for (size_t i = 0; i < set->n; i++) {
    if (set->files[i].state == CODE_COUNTED) set->counted += set->files[i].bytes;
    if (set->files[i].state == CODE_MAYBE) set->maybe += set->files[i].bytes;
  }
}

static void find_unused(code_count *cc, const folder *fd) {
  for (size_t i = 0; i < fd->n; i++) {
    const code_file *f = &fd->f[i];
    if (!code_like(f->rel)) continue;
    int used = 0;
    for (size_t k = 0; k < cc->n_sets && !used; k++)
      for (size_t j = 0; j < cc->sets[k].n && !used; j++)
        used = !strcmp(cc->sets[k].files[j].rel, f->rel);
    if (used) continue;
    code_file *nu = realloc(cc->unused, (cc->n_unused + 1) * sizeof *nu);
    if (!nu) return;
    cc->unused = nu;
    nu[cc->n_unused] = (code_file){strdup(f->rel), f->bytes, CODE_NOT_LOADED, ""};
    snprintf(nu[cc->n_unused].why, CODE_WHY_MAX,
             "no entry script imports, names or builds it");
    if (nu[cc->n_unused].rel) cc->n_unused++;
  }
}

int code_count_build(const submission *s, code_count *out, pg_error *err) {
  memset(out, 0, sizeof *out);
  folder fd = {0};
  list_dir(&fd, s->dir, "", 0);
  if (fd.n) qsort(fd.f, fd.n, sizeof *fd.f, cmp_file);
  index_names(&fd);
  readme_run_read(s->dir, &out->run);
  int rc = choose_entries(out, &fd);
  for (size_t i = 0; i < out->n_sets && !rc; i++) {
    walker *w = calloc(1, sizeof *w);
    if (!w) {
      rc = -1;
      break;
    }
    *w = (walker){.s = s, .fd = &fd, .cc = out, .set = &out->sets[i], .budget = CODE_WORK_BUDGET};
    scan_all(w);
    add_builds(w);
    rc = w->oom ? -1 : 0;
    free(w);
    totals(&out->sets[i]);
  }
  if (!rc) find_unused(out, &fd);
  folder_free(&fd);
  if (!rc && s->n_logs) {
    out->logs = calloc(s->n_logs, sizeof *out->logs);
    rc = out->logs ? log_code_match_all(s, out, out->logs) : -1;
    out->n_logs = s->n_logs;
  }
  if (rc) {
    code_count_free(out);
    return pg_fail(err, s->dir, -1, "out of memory while counting the code");
  }
  return 0;
}

static void files_free(code_file *v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i].rel);
  free(v);
}

void code_count_free(code_count *c) {
  for (size_t i = 0; i < c->n_sets; i++) {
    files_free(c->sets[i].files, c->sets[i].n);
    code_wrapper_free(&c->sets[i].wrap);
  }
  free(c->sets);
  files_free(c->unused, c->n_unused);
  for (size_t i = 0; i < c->n_problems; i++) free(c->problems[i].rel);
  free(c->problems);
  readme_run_free(&c->run);
  free(c->logs);
  memset(c, 0, sizeof *c);
}

int code_set_counts(const code_set *set, const char *rel) {
  for (size_t i = 0; i < set->n; i++)
    if (set->files[i].state == CODE_COUNTED && !strcmp(set->files[i].rel, rel)) return 1;
  return 0;
}

int code_count_counts(const code_count *c, const char *rel) {
  for (size_t i = 0; i < c->n_sets; i++)
    if (code_set_counts(&c->sets[i], rel)) return 1;
  return 0;
}

const code_set *code_count_set_of_log(const code_count *c, size_t i) {
  if (!c || i >= c->n_logs) return NULL;
  const log_code_result *r = &c->logs[i];
  if (r->cls == LC_NONE || r->cls == LC_OTHER || !r->script[0]) return NULL;
  for (size_t k = 0; k < c->n_sets; k++)
    for (size_t j = 0; j < c->sets[k].n; j++)
      if (!strcmp(c->sets[k].files[j].rel, r->script) && c->sets[k].files[j].state == CODE_COUNTED)
        return &c->sets[k];
  return NULL;
}
