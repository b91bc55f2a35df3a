/* Comparing a log's copy of a script with the shipped scripts; see
 * log_code.h. */
#include "verifier/log_code.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "verifier/code_count.h"
#include "verifier/inert_stmt.h"
#include "verifier/log_parse.h"
#include "verifier/pysrc.h"
#include "verifier/seq_diff.h"
#include "verifier/shipped_text.h"

const char *log_code_class_name(log_code_class c) {
  static const char *n[] = {"none", "same", "layout", "partial", "config", "defaults", "code", "other"};
  return c <= LC_OTHER ? n[c] : "?";
}

/* A script as compared: its raw text and its statements' hashes
 * (docstrings left out: they never change what runs). */
typedef struct cand {
  const char *name;
  int decoded;
  const char *text;
  size_t len;
  py_src src;
  size_t *idx; /* statement indices kept */
  uint64_t *h;
  uint64_t *sorted;
  size_t n;
} cand;

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int cand_prepare(cand *c, const char *name, int decoded, const char *text, size_t len) {
  memset(c, 0, sizeof *c);
  c->name = name;
  c->decoded = decoded;
  c->text = text;
  c->len = len;
  pg_error err;
  if (pysrc_parse(text, len, name, &c->src, &err)) return -1;
  c->idx = malloc((c->src.n + 1) * sizeof *c->idx);
  c->h = malloc((c->src.n + 1) * sizeof *c->h);
  c->sorted = malloc((c->src.n + 1) * sizeof *c->sorted);
  if (!c->idx || !c->h || !c->sorted) return -1;
  for (size_t i = 0; i < c->src.n; i++) {
    if (c->src.v[i].docstring) continue;
    c->idx[c->n] = i;
    c->h[c->n] = seq_hash(c->src.v[i].text, c->src.v[i].len);
    c->n++;
  }
  memcpy(c->sorted, c->h, c->n * sizeof *c->h);
  qsort(c->sorted, c->n, sizeof *c->sorted, cmp_u64);
  return 0;
}

static void cand_free(cand *c) {
  pysrc_free(&c->src);
  free(c->idx);
  free(c->h);
  free(c->sorted);
}

/* Statements the two share as multisets of hashes: an upper bound on the
 * aligned count, cheap enough to skip hopeless diffs. */
static size_t overlap(const cand *a, const cand *b) {
  size_t i = 0, j = 0, n = 0;
  while (i < a->n && j < b->n) {
    if (a->sorted[i] == b->sorted[j]) n++, i++, j++;
    else if (a->sorted[i] < b->sorted[j]) i++;
    else j++;
  }
  return n;
}

/* ---- the log's copy ---- */

static int starts_script(const char *s, size_t n) {
  static const char *w[] = {"import ", "from ", "#", "\"", "'", "def ", "class ", "@", "r\"\"\""};
  for (size_t i = 0; i < sizeof w / sizeof *w; i++)
    if (n >= strlen(w[i]) && !memcmp(s, w[i], strlen(w[i]))) return 1;
  return 0;
}

/* Lines [first, last] of the log, prefixes (log_prefix_len) removed when
 * the copy has them, from the first line a script can start with; *start is that
 * line. NULL when there is none. */
static char *extract(const char *log, size_t len, uint32_t first, uint32_t last, uint32_t *start,
                     size_t *out_len) {
  char *buf = malloc(len + 2); /* a last line without a newline gets one */
  if (!buf) return NULL;
  size_t k = 0;
  uint32_t line = 0;
  int stamped = -1, begun = 0;
  for (size_t off = 0; off < len && line < last;) {
    const char *nl = memchr(log + off, '\n', len - off);
    size_t n = nl ? (size_t)(nl - (log + off)) : len - off;
    const char *s = log + off;
    off += n + 1;
    if (++line < first) continue;
    if (stamped < 0) stamped = log_prefix_len(s, n) > 0;
    size_t t = stamped ? log_prefix_len(s, n) : 0;
    s += t, n -= t;
    if (!begun) {
      if (!starts_script(s, n)) continue;
      begun = 1;
      *start = line;
    }
    memcpy(buf + k, s, n);
    k += n;
    buf[k++] = '\n';
  }
  if (!begun) {
    free(buf);
    return NULL;
  }
  buf[k] = 0;
  *out_len = k;
  return buf;
}

/* Same physical lines up to trailing blanks and trailing empty lines. */
static int same_lines(const char *a, size_t na, const char *b, size_t nb) {
  size_t i = 0, j = 0;
  for (;;) {
    size_t ea = i, eb = j;
    while (ea < na && a[ea] != '\n') ea++;
    while (eb < nb && b[eb] != '\n') eb++;
    size_t la = ea - i, lb = eb - j;
    while (la && strchr(" \t\r", a[i + la - 1])) la--;
    while (lb && strchr(" \t\r", b[j + lb - 1])) lb--;
    if (i >= na || j >= nb) {
      /* One side ended: the rest of the other must be blank. */
      const char *r = i >= na ? b + j : a + i;
      size_t rn = i >= na ? nb - j : na - i;
      for (size_t q = 0; q < rn; q++)
        if (!strchr(" \t\r\n", r[q])) return 0;
      return 1;
    }
    if (la != lb || memcmp(a + i, b + j, la)) return 0;
    i = ea < na ? ea + 1 : na; /* a last line without a newline ends at the end */
    j = eb < nb ? eb + 1 : nb;
  }
}

/* ---- classifying differences ---- */

/* An assignment whose value reads the environment; *var is the variable. */
static int env_assign(const py_stmt *t, char *var, size_t cap) {
  const char *p = strstr(t->text, "environ");
  const char *g = strstr(t->text, "getenv");
  if (!p || (g && g < p)) p = g;
  size_t len, last, value;
  if (!p || !pysrc_assignment(t, &len, &last, &value)) return 0;
  size_t pos = (size_t)(p - t->text);
  py_str s;
  if (!pysrc_next_string(t->text, t->len, &pos, &s) || !s.len) return 0;
  snprintf(var, cap, "%.*s", (int)(s.len < cap ? s.len : cap - 1), s.body);
  return 1;
}

static void ascii(char *s) {
  for (; *s; s++)
    if ((unsigned char)*s >= 0x80 || (unsigned char)*s < 0x20) *s = '?';
}

typedef struct cmp_ctx {
  int (*env_set)(const char *var, const char *shipped_default, void *ctx);
  void *ctx;
  const pg_log *printed; /* the log's lines, for the values it prints; may be NULL */
} cmp_ctx;

/* Per-run variables, whose defaults differ from run to run by design, and
 * the logging cadence (the official loop pauses its clock to validate, so
 * how often it prints changes no number of the run). */
static int per_run(const char *var) {
  static const char *v[] = {"SEED", "RUN_ID", "LOGFILE", "VAL_LOSS_EVERY", "TRAIN_LOG_EVERY"};
  for (size_t i = 0; i < sizeof v / sizeof *v; i++)
    if (!strcmp(var, v[i])) return 1;
  return 0;
}

/* Whether a value as printed or written (b) is the Python literal a
 * (quotes stripped): numbers by value (0.020 is 0.02, 393_216 is 393216),
 * else as text. */
static int same_value(const char *a, const char *b) {
  char d[RUN_WORD_MAX];
  size_t n = strlen(a), k = 0;
  if (n >= 2 && (a[0] == '"' || a[0] == '\'') && a[n - 1] == a[0]) {
    snprintf(d, sizeof d, "%.*s", (int)(n - 2), a + 1);
  } else { /* a number literal's digit separators go (393_216) */
    for (size_t i = 0; i < n && k < sizeof d - 1; i++)
      if (a[i] != '_' || !i || !isdigit((unsigned char)a[i - 1])) d[k++] = a[i];
    d[k] = 0;
  }
  if (!d[0] || !b[0]) return 0;
  char *ea, *eb;
  double x = strtod(d, &ea), y = strtod(b, &eb);
  if (ea != d && !*ea && eb != b && !*eb) return x == y;
  return !strcmp(d, b);
}

/* The statement's text without the default of its environment read
 * (`os.environ.get('X','1')` -> `os.environ.get('X')`), into out; the
 * variable into var, the default's text into dflt. 0 if it reads no
 * environment variable. */
static int without_default(const py_stmt *t, char *out, size_t cap, char *var, size_t vcap,
                           char *dflt, size_t dcap) {
  const char *p = strstr(t->text, "environ");
  const char *g = strstr(t->text, "getenv");
  if (!p || (g && g < p)) p = g;
  if (!p) return 0;
  size_t pos = (size_t)(p - t->text);
  py_str s;
  if (!pysrc_next_string(t->text, t->len, &pos, &s) || !s.len) return 0;
  snprintf(var, vcap, "%.*s", (int)(s.len < vcap ? s.len : vcap - 1), s.body);
  size_t e = s.end, depth = 0;
  dflt[0] = 0;
  if (e < t->len && t->text[e] == ',') { /* skip the default up to the call's ')' */
    size_t q = e;
    for (; q < t->len; q++) {
      char c = t->text[q];
      if (c == '"' || c == '\'') {
        size_t r = q;
        py_str x;
        if (!pysrc_next_string(t->text, t->len, &r, &x)) break;
        q = r - 1;
        continue;
      }
      if (c == '(' || c == '[') depth++;
      if ((c == ')' || c == ']') && depth-- == 0) break;
    }
    snprintf(out, cap, "%.*s%s", (int)e, t->text, t->text + q);
    snprintf(dflt, dcap, "%.*s", (int)(q - e - 1 < dcap ? q - e - 1 : dcap - 1), t->text + e + 1);
  } else {
    snprintf(out, cap, "%s", t->text);
  }
  return 1;
}

/* A statement pair that differs only in an environment read's default;
 * the variable into var, a's default (the shipped one) into dflt. */
static int default_only(const py_stmt *a, const py_stmt *b, char *var, size_t vcap, char *dflt,
                        size_t dcap) {
  char ta[1024], tb[1024], vb[128], db[128];
  if (a->len >= sizeof ta || b->len >= sizeof tb) return 0;
  return without_default(a, ta, sizeof ta, var, vcap, dflt, dcap) &&
         without_default(b, tb, sizeof tb, vb, sizeof vb, db, sizeof db) && !strcmp(var, vb) &&
         !strcmp(ta, tb) && a->depth == b->depth;
}

/* Whether the log prints hyperparameter var (lower case, as the scripts'
 * `matrix_lr:0.02`) with the value text dflt (a Python literal, quotes
 * stripped): then the run used the shipped default whatever its own copy
 * defaulted to, and the shipped script run as is repeats it. */
static int printed_as(const pg_log *printed, const char *var, const char *dflt) {
  char key[128];
  size_t i = 0;
  for (; var[i] && i < sizeof key - 1; i++) key[i] = (char)tolower((unsigned char)var[i]);
  key[i] = 0;
  const log_kv *kv = printed ? log_hparam(printed, key) : NULL;
  return kv && kv->value && same_value(dflt, kv->value);
}

static void note_unset(const char *var, const char *dflt, const cmp_ctx *cc, char *unset,
                       size_t cap) {
  if (per_run(var) || (cc->env_set && cc->env_set(var, dflt, cc->ctx))) return;
  if (printed_as(cc->printed, var, dflt)) return;
  size_t used = strlen(unset);
  if (!strstr(unset, var) && used + strlen(var) + 3 < cap)
    snprintf(unset + used, cap - used, "%s%s", used ? ", " : "", var);
}

/* 1 if the hunk only changes how the environment is read: statements
 * that differ only in a default (an `if` header too), or assignments from
 * the environment added or removed. A changed default the README leaves
 * unset goes into *unset (appended). */
static int config_hunk(const cand *a, const cand *b, const diff_hunk *h, const cmp_ctx *cc,
                       char *unset, size_t cap) {
  if (h->a1 - h->a0 == h->b1 - h->b0) {
    int all = 1;
    char var[128], dflt[128];
    for (size_t i = 0; i < h->a1 - h->a0 && all; i++)
      all = default_only(&a->src.v[a->idx[h->a0 + i]], &b->src.v[b->idx[h->b0 + i]], var,
                         sizeof var, dflt, sizeof dflt);
    if (all) {
      for (size_t i = 0; i < h->a1 - h->a0; i++) {
        default_only(&a->src.v[a->idx[h->a0 + i]], &b->src.v[b->idx[h->b0 + i]], var, sizeof var,
                     dflt, sizeof dflt);
        note_unset(var, dflt, cc, unset, cap);
      }
      return 1;
    }
  }
  char va[32][128], vb[32][128];
  size_t na = 0, nb = 0;
  for (size_t i = h->a0; i < h->a1; i++) {
    if (!env_assign(&a->src.v[a->idx[i]], na < 32 ? va[na] : va[31], sizeof va[0])) return 0;
    if (na < 32) na++;
  }
  for (size_t i = h->b0; i < h->b1; i++) {
    if (!env_assign(&b->src.v[b->idx[i]], nb < 32 ? vb[nb] : vb[31], sizeof vb[0])) return 0;
    if (nb < 32) nb++;
  }
  for (size_t i = 0; i < na; i++)
    for (size_t j = 0; j < nb; j++) {
      if (strcmp(va[i], vb[j]) || per_run(va[i]) ||
          (cc->env_set && cc->env_set(va[i], NULL, cc->ctx)))
        continue;
      size_t used = strlen(unset);
      if (!strstr(unset, va[i]) && used + strlen(va[i]) + 3 < cap)
        snprintf(unset + used, cap - used, "%s%s", used ? ", " : "", va[i]);
    }
  return 1;
}

/* A line the run printed, not Python: `key:value` words with no call,
 * quote or bracket (`train_loader:dataset:x train_shards:80`,
 * `model_params:17424332`). Output printed while the source was being
 * written interleaves with the copy. */
static int output_line(const py_stmt *t) {
  const char *p = t->text;
  size_t k = 0;
  while (isalnum((unsigned char)p[k]) || p[k] == '_') k++;
  if (!k || p[k] != ':' || !p[k + 1] || p[k + 1] == '=') return 0;
  if (strpbrk(p, "()[]{}\"'")) return 0;
  return strchr(p + k + 1, ' ') != NULL || strspn(p + k + 1, "0123456789.") == strlen(p + k + 1);
}

static int interleaved(const cand *log, const diff_hunk *h) {
  for (size_t i = h->b0; i < h->b1; i++)
    if (output_line(&log->src.v[log->idx[i]])) return 1;
  return 0;
}

/* Up to 100 characters of text from offset from (with "..." when cut). */
static void window(const char *text, size_t from, char *out, size_t cap) {
  size_t n = strlen(text);
  if (from > n) from = n;
  snprintf(out, cap, "%s%.100s%s", from ? "..." : "", text + from, n - from > 100 ? "..." : "");
}

/* 1 if statement k of c prints, assigns a name nothing reads, imports
 * names nothing uses or guards an import. */
static int inert_one(const cand *c, size_t k) {
  return inert_prints(&c->src.v[c->idx[k]]) || inert_dead_assignment(&c->src, c->idx[k]) ||
         inert_import(&c->src, c->idx[k]);
}

/* 1 if hunk h changes no number the run computes: statements paired in
 * order are the same printing call (or raise) with other text, and the
 * others print, assign a name nothing reads, import names nothing uses or
 * guard an import (verifier/inert_stmt.h). */
static int inert_hunk(const cand *shipped, const cand *log, const diff_hunk *h) {
  const size_t na = h->a1 - h->a0, nb = h->b1 - h->b0;
  for (size_t k = 0; k < na || k < nb; k++) {
    if (k < na && k < nb) {
      const py_stmt *a = &shipped->src.v[shipped->idx[h->a0 + k]],
                    *b = &log->src.v[log->idx[h->b0 + k]];
      if (inert_same_print(a, b) || inert_same_raise(a, b)) continue;
    }
    if ((k < na && !inert_one(shipped, h->a0 + k)) || (k < nb && !inert_one(log, h->b0 + k)))
      return 0;
  }
  return 1;
}

/* 1 if statement hash x is among the changed statements on one side of
 * the hunks (log side if in_log): a statement the diff shows removed on
 * one side and added on the other has moved, and is no example of what
 * differs. */
static int changed_on(uint64_t x, const cand *side, const diff_hunk *hk, size_t nh, int in_log) {
  for (size_t i = 0; i < nh; i++)
    for (size_t k = in_log ? hk[i].b0 : hk[i].a0; k < (in_log ? hk[i].b1 : hk[i].a1); k++)
      if (side->h[k] == x) return 1;
  return 0;
}

/* The first statement of [from, to) on one side that did not move there
 * from the other (changed_on), or from when all did. */
static size_t first_unmoved(const cand *side, const cand *other, size_t from, size_t to,
                            const diff_hunk *hk, size_t nh, int in_log) {
  for (size_t k = from; k < to; k++)
    if (!changed_on(side->h[k], other, hk, nh, !in_log)) return k;
  return from;
}

/* 1 if every statement of hunk h moved (changed_on the other side). */
static int moved_only(const cand *shipped, const cand *log, const diff_hunk *h,
                      const diff_hunk *hk, size_t nh) {
  for (size_t k = h->a0; k < h->a1; k++)
    if (!changed_on(shipped->h[k], log, hk, nh, 1)) return 0;
  for (size_t k = h->b0; k < h->b1; k++)
    if (!changed_on(log->h[k], shipped, hk, nh, 0)) return 0;
  return 1;
}

/* 1 if `NAME=VALUE` sets a constant: VALUE holds no name but True, False
 * or None, and no call (numbers, strings, and lists or tuples of them). */
static int constant_set(const py_stmt *s) {
  size_t len, last, value;
  if (!pysrc_assignment(s, &len, &last, &value)) return 0;
  char *e = pysrc_blank_strings(s->text + value, s->len - value);
  if (!e) return 0;
  int ok = 1;
  for (size_t i = 0; e[i] && ok;) {
    if (!pysrc_word_char(e[i])) { /* a '(' after a name is a call */
      ok = e[i] != '(' || i == 0 || !pysrc_word_char(e[i - 1]);
      i++;
      continue;
    }
    size_t j = i;
    while (pysrc_word_char(e[j]) || (e[j] == '.' && isdigit((unsigned char)e[i]))) j++;
    ok = isdigit((unsigned char)e[i]) || (j - i == 4 && !memcmp(e + i, "True", 4)) ||
         (j - i == 5 && !memcmp(e + i, "False", 5)) || (j - i == 4 && !memcmp(e + i, "None", 4));
    i = j;
  }
  free(e);
  return ok;
}

/* 1 if statement k (kept index) of c only defines: a def or class header,
 * a decorator, an import, a statement inside a definition whose header is
 * among kept statements [k0, k1), or a constant set. Such a change runs
 * only where something calls or reads it, and that is a change of its
 * own. */
static int def_header(const py_stmt *s) {
  const char *k = pysrc_keyword(s);
  return s->header && (!strcmp(k, "def") || !strcmp(k, "class") ||
                       (!strcmp(k, "async") && !strncmp(s->text, "async def ", 10)));
}

static int defines(const cand *c, size_t k, size_t k0, size_t k1) {
  const py_stmt *s = &c->src.v[c->idx[k]];
  const char *kw = pysrc_keyword(s);
  if (s->text[0] == '@' || constant_set(s) || def_header(s) ||
      (!s->header && (!strcmp(kw, "import") || !strcmp(kw, "from"))))
    return 1;
  for (int32_t p = s->parent; p >= 0; p = c->src.v[p].parent) {
    if ((size_t)p < c->idx[k0] || (size_t)p > c->idx[k1 - 1]) break; /* outside the hunk */
    if (def_header(&c->src.v[p])) return 1;
  }
  return 0;
}

/* 1 if every statement of hunk h, on both sides, only defines. */
static int defines_only(const cand *shipped, const cand *log, const diff_hunk *h) {
  for (size_t k = h->a0; k < h->a1; k++)
    if (!defines(shipped, k, h->a0, h->a1)) return 0;
  for (size_t k = h->b0; k < h->b1; k++)
    if (!defines(log, k, h->b0, h->b1)) return 0;
  return 1;
}

/* The first statement of [from, k1) (kept indices of c, a hunk's side
 * [k0, k1)) that does not only define and is no bare `try`, `else` or
 * `finally` (nothing to show), or from when there is none. */
static size_t first_running(const cand *c, size_t from, size_t k0, size_t k1) {
  for (size_t k = from; k < k1; k++) {
    const char *t = c->src.v[c->idx[k]].text;
    if (!defines(c, k, k0, k1) && strcmp(t, "try") && strcmp(t, "else") && strcmp(t, "finally"))
      return k;
  }
  return from;
}

/* The first differing statements of hunk h (of the nh hunks hk), for the
 * message, passing over statements that only moved; two long statements
 * are shown from a little before their first differing character. */
static void describe(const cand *shipped, const cand *log, const diff_hunk *h,
                     const diff_hunk *hk, size_t nh, uint32_t start, char *out, size_t cap) {
  size_t ia = first_unmoved(shipped, log, h->a0, h->a1, hk, nh, 0);
  size_t ib = first_unmoved(log, shipped, h->b0, h->b1, hk, nh, 1);
  /* Statements one side adds: shown from the first that runs (an added
   * block often opens with its imports and constants). */
  if (h->b0 == h->b1)
    ia = first_running(shipped, ia, h->a0, h->a1);
  else if (h->a0 == h->a1)
    ib = first_running(log, ib, h->b0, h->b1);
  const py_stmt *a = h->a0 < h->a1 ? &shipped->src.v[shipped->idx[ia]] : NULL;
  const py_stmt *b = h->b0 < h->b1 ? &log->src.v[log->idx[ib]] : NULL;
  char wa[120], wb[120];
  if (a && b) {
    size_t k = 0;
    while (a->text[k] && a->text[k] == b->text[k]) k++;
    size_t from = k > 40 ? k - 40 : 0;
    window(a->text, from, wa, sizeof wa);
    window(b->text, from, wb, sizeof wb);
    snprintf(out, cap, "log line %u `%s` where %s:%u has `%s`", start + b->line - 1, wb,
             shipped->name, a->line, wa);
  } else if (b) {
    window(b->text, 0, wb, sizeof wb);
    snprintf(out, cap, "log line %u `%s`, which %s does not have", start + b->line - 1, wb,
             shipped->name);
  } else if (a) {
    window(a->text, 0, wa, sizeof wa);
    snprintf(out, cap, "%s:%u `%s`, which the log's copy does not have", shipped->name, a->line, wa);
  }
  ascii(out);
}

/* The same statements in the same order: the first whose block depth
 * differs (indentation is whitespace; the message points the reviewer at
 * it). */
static void layout_detail(const cand *shipped, const cand *log, uint32_t start, char *out,
                          size_t cap) {
  out[0] = 0;
  for (size_t i = 0; i < log->n && i < shipped->n; i++) {
    const py_stmt *a = &shipped->src.v[shipped->idx[i]], *b = &log->src.v[log->idx[i]];
    if (a->depth == b->depth) continue;
    snprintf(out, cap, "; indentation differs at log line %u `%.100s` (block depth %u, %s:%u has %u)",
             start + b->line - 1, b->text, b->depth, shipped->name, a->line, a->depth);
    ascii(out);
    return;
  }
}

/* Whether the copy's statement ib is a proper piece of the script's ia:
 * its tail (tail = 1: the copy begins inside a statement, as PR #1026's
 * logs, whose run output overwrote the copy's first lines and left
 * `"QAT_ENABLED", "0")))`) or its head (the copy ends inside one). A
 * piece is no Python of its own, so it is the edge of a cut, not code. */
static bool cut_piece(const cand *shipped, size_t ia, const cand *log, size_t ib, int tail) {
  const py_stmt *a = &shipped->src.v[shipped->idx[ia]], *b = &log->src.v[log->idx[ib]];
  if (!b->len || b->len >= a->len) return false;
  return memcmp(a->text + (tail ? a->len - b->len : 0), b->text, b->len) == 0;
}

static void classify(const cand *shipped, const cand *log, const diff_hunk *hk, size_t nh,
                     uint32_t start, const cmp_ctx *cc, log_code_result *r) {
  r->hunks = nh;
  if (!nh) {
    r->cls = LC_LAYOUT;
    layout_detail(shipped, log, start, r->detail, sizeof r->detail);
    return;
  }
  /* Statements of the script before the copy's first or after its last:
   * the part the log did not copy, not a difference. */
  size_t lo = 0, hi = nh;
  const diff_hunk *h0 = &hk[0], *hl = &hk[nh - 1];
  if (h0->a0 == 0 && h0->b0 == 0 &&
      (h0->b1 == 0 || (h0->b1 == 1 && h0->a1 > 0 && cut_piece(shipped, h0->a1 - 1, log, 0, 1))))
    lo = 1;
  if (hi > lo && hl->a1 == shipped->n && hl->b1 == log->n &&
      (hl->b0 == hl->b1 ||
       (hl->b0 + 1 == hl->b1 && hl->a0 < hl->a1 && cut_piece(shipped, hl->a0, log, hl->b0, 0))))
    hi--;
  r->partial = lo || hi < nh;
  if (lo == hi) {
    r->cls = LC_PARTIAL;
    return;
  }
  hk += lo;
  nh = hi - lo;
  r->hunks = nh;
  char unset[400] = "";
  size_t noise = 0;
  for (size_t i = 0; i < nh; i++)
    if (interleaved(log, &hk[i])) {
      if (!noise++) {
        const py_stmt *b = &log->src.v[log->idx[hk[i].b0]];
        snprintf(r->detail, sizeof r->detail, "; the run's output interrupts the copy at log line %u",
                 start + b->line - 1);
      }
    }
  if (noise == nh) {
    r->cls = LC_LAYOUT;
    return;
  }
  /* The example is the first code hunk that changes a statement that
   * runs; then the first that changes a definition or a constant (LowerLR's
   * first is `_QAT_ENABLED = False` and a function, its second the
   * forward pass that reads them); one whose statements only moved
   * serves when none does. Every code hunk is counted, for the message. */
  const diff_hunk *code = NULL, *inert = NULL;
  int rank = 0; /* code's: 1 moved only, 2 defines, 3 changes what runs */
  for (size_t i = 0; i < nh; i++) {
    if (interleaved(log, &hk[i])) continue;
    if (config_hunk(shipped, log, &hk[i], cc, unset, sizeof unset)) continue;
    if (inert_hunk(shipped, log, &hk[i])) {
      if (!inert) inert = &hk[i];
      continue;
    }
    r->code_hunks++;
    if (rank == 3) continue;
    const int k = moved_only(shipped, log, &hk[i], hk, nh) ? 1
                  : defines_only(shipped, log, &hk[i])     ? 2
                                                           : 3;
    if (k > rank) code = &hk[i], rank = k;
  }
  if (code) {
    r->cls = LC_CODE;
    describe(shipped, log, code, hk, nh, start, r->detail, sizeof r->detail);
    return;
  }
  r->cls = unset[0] ? LC_DEFAULTS : inert ? LC_PRINTS : LC_CONFIG;
  snprintf(r->detail, sizeof r->detail, "%s", unset);
  if (!unset[0])
    describe(shipped, log, inert ? inert : &hk[0], hk, nh, start, r->detail, sizeof r->detail);
}

/* Compare the prepared copy with the prepared scripts. */
static int compare(const cand *log, const char *block, size_t blen, uint32_t start, uint32_t last,
                   const cand *c, size_t n, const cmp_ctx *cc, log_code_result *r) {
  memset(r, 0, sizeof *r);
  r->first = start;
  r->last = last;
  r->statements = log->n;
  if (log->n < LOG_CODE_MIN_STATEMENTS) return 0;
  for (size_t i = 0; i < n; i++)
    if (same_lines(block, blen, c[i].text, c[i].len)) {
      r->cls = LC_SAME;
      snprintf(r->script, sizeof r->script, "%s", c[i].name);
      r->decoded = c[i].decoded;
      r->common = log->n;
      return 0;
    }
  /* The closest script: the largest share of statements in common (an
   * upper bound from the hash multisets where a diff is hopeless or too
   * long). */
  const cand *best = NULL;
  double best_score = -1;
  size_t best_common = 0, best_nh = 0;
  diff_hunk *best_h = NULL;
  int best_aligned = 0;
  size_t best_d = (size_t)-1;
  for (size_t i = 0; i < n; i++) {
    /* The share of the copy's statements the script holds: a copy of part
     * of a script is still that script's. */
    size_t ov = overlap(log, &c[i]);
    if (best && (double)ov / (double)log->n < best_score) continue;
    size_t common = ov, nh = 0, d = (size_t)-1;
    diff_hunk *h = NULL;
    int aligned = 0;
    if (2 * ov >= log->n) {
      int rc = seq_diff(c[i].h, c[i].n, log->h, log->n, LOG_CODE_MAX_EDITS, &h, &nh, &d);
      if (rc < 0) {
        free(best_h);
        return -1;
      }
      if (rc == 0) common = (c[i].n + log->n - d) / 2, aligned = 1;
      else d = (size_t)-1;
    }
    double score = (double)common / (double)log->n;
    if (!best || score > best_score || (score == best_score && d < best_d)) {
      free(best_h);
      best = &c[i], best_score = score, best_common = common, best_h = h, best_nh = nh;
      best_aligned = aligned, best_d = d;
    } else {
      free(h);
    }
  }
  if (!best) return 0;
  snprintf(r->script, sizeof r->script, "%s", best->name);
  r->decoded = best->decoded;
  r->common = best_common;
  if (best_score < 0.5) {
    r->cls = LC_OTHER;
    r->common = best_common;
  } else if (!best_aligned) {
    r->cls = LC_CODE;
    snprintf(r->detail, sizeof r->detail, "they differ in more than %d statements",
             LOG_CODE_MAX_EDITS);
  } else {
    classify(best, log, best_h, best_nh, start, cc, r);
  }
  free(best_h);
  return 0;
}

static int prepare_and_compare(const char *log, size_t len, uint32_t first, uint32_t last,
                               const cand *c, size_t n, const cmp_ctx *cc, log_code_result *r) {
  memset(r, 0, sizeof *r);
  uint32_t start = first;
  size_t blen;
  char *block = extract(log, len, first, last, &start, &blen);
  if (!block) return 0;
  if (blen > PYSRC_MAX_BYTES) { /* not a script copy pgolf compares */
    free(block);
    return 0;
  }
  cand lc;
  int rc = cand_prepare(&lc, "log", 0, block, blen);
  if (!rc) rc = compare(&lc, block, blen, start, last, c, n, cc, r);
  cand_free(&lc);
  free(block);
  return rc;
}

int log_code_compare(const char *log, size_t len, uint32_t first, uint32_t last,
                     const char *const *names, const char *const *texts, const size_t *lens,
                     size_t n, int (*env_set)(const char *var, const char *dflt, void *ctx),
                     void *ctx, log_code_result *out) {
  cand *c = calloc(n + 1, sizeof *c);
  if (!c) return -1;
  int rc = 0;
  size_t k = 0;
  for (; k < n && !rc; k++) rc = cand_prepare(&c[k], names[k], 0, texts[k], lens[k]);
  pg_log printed;
  pg_error perr;
  int parsed = !rc && !log_parse(log, len, "log", &printed, &perr);
  cmp_ctx cc = {env_set, ctx, parsed ? &printed : NULL};
  if (!rc) rc = prepare_and_compare(log, len, first, last, c, n, &cc, out);
  if (parsed) log_free(&printed);
  for (size_t i = 0; i < k; i++) cand_free(&c[i]);
  free(c);
  return rc;
}

/* ---- a submission's logs ---- */

/* The README's run sets var, or its prose states the shipped default's
 * value for it (`TRAIN_BATCH_TOKENS=393216` in a configuration list). */
static int readme_sets(const char *var, const char *dflt, void *ctx) {
  const readme_run *r = ctx;
  for (size_t i = 0; i < r->n_env; i++)
    if (!strcmp(r->env[i].word, var)) return 1;
  for (size_t i = 0; dflt && i < r->n_stated; i++)
    if (!strcmp(r->stated[i].word, var) && same_value(dflt, r->stated[i].value)) return 1;
  return 0;
}

/* Every shipped .py, raw and decoded, as candidates. */
static size_t load_cands(const shipped_texts *t, cand *c) {
  size_t n = 0;
  for (size_t i = 0; i < t->n; i++) {
    const shipped_text *x = &t->v[i];
    if (!cand_prepare(&c[n], x->name, x->decoded, x->text, x->len))
      n++;
    else
      cand_free(&c[n]);
  }
  return n;
}

int log_code_match_all(const submission *s, const struct code_count *cc, log_code_result *out) {
  memset(out, 0, s->n_logs * sizeof *out);
  int any = 0;
  for (size_t i = 0; i < s->n_logs; i++)
    any |= s->logs[i].log.code_end_line > s->logs[i].log.first_line;
  if (!any || !s->n_code) return 0;
  shipped_texts t = {0};
  cand *c = calloc(2 * s->n_code, sizeof *c);
  if (!c || shipped_texts_load(s, &t)) {
    free(c);
    shipped_texts_free(&t);
    return -1;
  }
  size_t n = load_cands(&t, c);
  cmp_ctx ctx = {readme_sets, (void *)&cc->run, NULL};
  int rc = 0;
  for (size_t i = 0; i < s->n_logs && !rc; i++) {
    const sub_log *lg = &s->logs[i];
    if (lg->log.code_end_line <= lg->log.first_line) continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", s->dir, lg->rel);
    uint8_t *buf;
    size_t len;
    pg_error err;
    if (file_read_all(path, LOG_MAX_BYTES, &buf, &len, &err)) continue;
    ctx.printed = &lg->log;
    rc = prepare_and_compare((const char *)buf, len, lg->log.first_line, lg->log.code_end_line - 1,
                             c, n, &ctx, &out[i]);
    free(buf);
  }
  for (size_t i = 0; i < n; i++) cand_free(&c[i]);
  free(c);
  shipped_texts_free(&t);
  return rc;
}
