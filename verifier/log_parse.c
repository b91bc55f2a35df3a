/* Challenge training logs, line by line. See log_parse.h for the shapes.
 *
 * Every shape is matched against the start of the line (after the
 * prefixes of log_prefix_len), and every number must be a whole decimal: that is what
 * keeps the script source that many logs begin with from being read as
 * results. A Python line either starts with indentation, starts with a call
 * or keyword, or holds a quote or a brace; none of those is a result. */
#include "verifier/log_parse.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/fileio.h"
#include "common/grow.h"

/* One line of text, not NUL-terminated. */
typedef struct span {
  const char *p;
  size_t n;
} span;

/* ---- small text helpers ---- */

static bool starts(span s, const char *lit) {
  size_t k = strlen(lit);
  return s.n >= k && memcmp(s.p, lit, k) == 0;
}

static span drop(span s, size_t k) { return (span){s.p + k, s.n - k}; }

static span skip_blanks(span s) {
  while (s.n && (*s.p == ' ' || *s.p == '\t')) s = drop(s, 1);
  return s;
}

static span trim_right(span s) {
  while (s.n && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\t')) s.n--;
  return s;
}

static bool is_ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Clinger's fast path: a plain decimal with at most 15 digits is an exact
 * integer mantissa divided by an exact power of ten, one correctly rounded
 * operation, so the result equals strtod's. Log lines hold a few numbers
 * each and logs hold tens of thousands of lines. */
static bool fast_decimal(const char *p, size_t n, size_t int_digits, size_t dec, double *out) {
  static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
                                 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  if (int_digits + dec > 15) return false;
  size_t i = 0;
  bool neg = false;
  if (p[0] == '-' || p[0] == '+') neg = p[0] == '-', i++;
  int64_t m = 0;
  size_t used = 0;
  for (; i < n && used < int_digits + dec; i++) {
    if (p[i] == '.') continue;
    if (!isdigit((unsigned char)p[i])) return false;
    m = m * 10 + (p[i] - '0');
    used++;
  }
  if (i != n) return false; /* an exponent follows: leave it to strtod */
  double v = (double)m / pow10[dec];
  *out = neg ? -v : v;
  return true;
}

/* A decimal number at the start of s: -?D+(.D+)?([eE][+-]?D+)?. Returns
 * the characters it takes (0 if none) and fills *out. No inf, nan or hex:
 * strtod alone would accept them. */
static size_t scan_number(span s, log_num *out) {
  size_t i = 0, int_digits = 0, dec = 0;
  if (i < s.n && (s.p[i] == '-' || s.p[i] == '+')) i++;
  while (i < s.n && isdigit((unsigned char)s.p[i])) i++, int_digits++;
  if (!int_digits) return 0;
  if (i + 1 < s.n && s.p[i] == '.' && isdigit((unsigned char)s.p[i + 1])) {
    i++;
    while (i < s.n && isdigit((unsigned char)s.p[i])) i++, dec++;
  }
  if (i + 1 < s.n && (s.p[i] == 'e' || s.p[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.n && (s.p[j] == '-' || s.p[j] == '+')) j++;
    if (j < s.n && isdigit((unsigned char)s.p[j])) {
      while (j < s.n && isdigit((unsigned char)s.p[j])) j++;
      i = j;
    }
  }
  out->decimals = (int)dec;
  if (fast_decimal(s.p, i, int_digits, dec, &out->v)) return i;
  char buf[64];
  if (i >= sizeof buf) return 0;
  memcpy(buf, s.p, i);
  buf[i] = 0;
  out->v = strtod(buf, NULL);
  out->decimals = (int)dec;
  if (!isfinite(out->v)) return 0;
  return i;
}

/* An unsigned integer that fits in int63. */
static size_t scan_int(span s, int64_t *out) {
  size_t i = 0;
  int64_t v = 0;
  while (i < s.n && isdigit((unsigned char)s.p[i])) {
    if (v > (INT64_MAX - 9) / 10) return 0;
    v = v * 10 + (s.p[i] - '0');
    i++;
  }
  *out = v;
  return i;
}

/* A number followed by exactly the unit (then the end or a non-letter). */
static bool number_with_unit(span s, const char *unit, log_num *out) {
  size_t k = scan_number(s, out);
  if (!k) return false;
  s = drop(s, k);
  if (!starts(s, unit)) return false;
  s = drop(s, strlen(unit));
  return s.n == 0 || !isalpha((unsigned char)*s.p);
}

/* The value after `key:` or `key=` where key starts a word (line start or
 * after a blank), with blanks after the separator skipped; *at is where
 * the key starts. */
static bool find_key_at(span line, const char *key, span *val, size_t *at) {
  size_t k = strlen(key);
  /* Word starts only: the loop jumps from blank to blank (this is the
   * parser's inner loop on 30,000-line logs). */
  for (size_t i = 0; i + k < line.n;) {
    if (line.p[i] == key[0] && memcmp(line.p + i, key, k) == 0 &&
        (line.p[i + k] == ':' || line.p[i + k] == '=')) {
      *val = skip_blanks(drop(line, i + k + 1));
      *at = i;
      return true;
    }
    const char *sp = memchr(line.p + i, ' ', line.n - i);
    const char *tab = memchr(line.p + i, '\t', (size_t)((sp ? sp : line.p + line.n) - (line.p + i)));
    if (tab) sp = tab;
    if (!sp) break;
    i = (size_t)(sp - line.p) + 1;
  }
  return false;
}

static bool find_key(span line, const char *key, span *val) {
  size_t at;
  return find_key_at(line, key, val, &at);
}

/* A time value "Tms", "Xs" or "Xm" in milliseconds, with its resolution. */
static bool parse_time(span v, double *ms, double *res_ms) {
  log_num n;
  if (number_with_unit(v, "ms", &n)) {
    *ms = n.v;
    *res_ms = pow(10.0, -n.decimals);
  } else if (number_with_unit(v, "s", &n)) {
    *ms = n.v * 1000.0;
    *res_ms = 1000.0 * pow(10.0, -n.decimals);
  } else if (number_with_unit(v, "m", &n)) {
    *ms = n.v * 60000.0;
    *res_ms = 60000.0 * pow(10.0, -n.decimals);
  } else {
    return false;
  }
  return true;
}

static bool key_number(span line, const char *key, log_num *out) {
  span v;
  if (!find_key(line, key, &v)) return false;
  size_t k = scan_number(v, out);
  return k && (k == v.n || v.p[k] == ' ' || v.p[k] == ',' || v.p[k] == '\t');
}

static bool key_time(span line, const char *key, double *ms, double *res_ms) {
  span v;
  return find_key(line, key, &v) && parse_time(v, ms, res_ms);
}

/* "N/M" at the start of s. */
static size_t scan_step(span s, int64_t *step, int64_t *total) {
  size_t a = scan_int(s, step);
  if (!a || a >= s.n || s.p[a] != '/') return 0;
  size_t b = scan_int(drop(s, a + 1), total);
  if (!b) return 0;
  return a + 1 + b;
}

static void copy_label(char *dst, span s) {
  s = trim_right(skip_blanks(s));
  size_t n = s.n < LOG_LABEL_MAX - 1 ? s.n : LOG_LABEL_MAX - 1;
  memcpy(dst, s.p, n);
  dst[n] = 0;
}

/* ---- growing arrays ---- */

/* Room for one more element of an array that has n: common/grow.h. */
static int grow(void *arrp, size_t *cap, size_t n, size_t elem) {
  return pg_grow(arrp, elem, cap, n + 1, 16);
}

typedef struct parser {
  pg_log *log;
  const char *name;
  pg_error *err;
  size_t cap_train, cap_val, cap_metrics, cap_models, cap_totals, cap_code, cap_hp, cap_segs;
  uint32_t last_result; /* line of the last result (step, metric, size, stop...), 0 none */
  bool in_hparams;   /* inside a Hyperparameters: block */
  char hp_tag[40];   /* the block's process tag ("[default0]:"), hp_tag_n bytes (0: none) */
  size_t hp_tag_n;
  bool training;     /* a step line has been seen */
  int64_t last_step; /* of the last step line, to see a new run begin */
  bool have_seed;
  double last_seed;  /* the last seed printed, to see another seed's run begin */
  bool oom;
} parser;

#define PUSH(ps, arr, n, cap, val)                                              \
  do {                                                                          \
    if (grow(&(ps)->log->arr, &(ps)->cap, (ps)->log->n, sizeof *(ps)->log->arr)) { \
      (ps)->oom = true;                                                         \
      return;                                                                   \
    }                                                                           \
    (ps)->log->arr[(ps)->log->n++] = (val);                                     \
  } while (0)

/* The file goes on with another run: a segment begins after the last
 * result printed. A segment with no result yet goes on instead (a
 * Hyperparameters block and then the seed it prints begin one run). */
static void new_segment(parser *ps) {
  pg_log *l = ps->log;
  ps->last_step = -1;
  if (l->seg_first[l->n_segs - 1] > ps->last_result) return;
  if (grow(&l->seg_first, &ps->cap_segs, l->n_segs, sizeof *l->seg_first)) {
    ps->oom = true;
    return;
  }
  l->seg_first[l->n_segs++] = ps->last_result + 1;
}

/* A seed is a whole number a double and an int64 both hold exactly; a
 * `seed: 1e37` or `seed: 0.5` is no seed (the readers convert it to an
 * integer). */
#define SEED_MAX 9007199254740992.0 /* 2^53 */

/* A seed other than the last one printed starts a new segment: the file
 * goes on with another seed's run (or its evaluation). */
static void set_seed(parser *ps, uint32_t line, double v) {
  pg_log *l = ps->log;
  if (!(fabs(v) < SEED_MAX) || v != floor(v)) return;
  if (!l->seed.line) {
    l->seed.line = line;
    l->seed.v = v;
  } else if (l->seed.v != v) {
    l->seed_conflict = 1;
  }
  if (ps->have_seed && v != ps->last_seed) new_segment(ps);
  ps->have_seed = true;
  ps->last_seed = v;
}

static void add_kv(parser *ps, uint32_t line, span key, span val) {
  char *k = strndup(key.p, key.n), *v = strndup(val.p, val.n);
  if (!k || !v) {
    free(k);
    free(v);
    ps->oom = true;
    return;
  }
  log_kv kv = {line, k, v};
  if (grow(&ps->log->hparams, &ps->cap_hp, ps->log->n_hparams, sizeof kv)) {
    free(k);
    free(v);
    ps->oom = true;
    return;
  }
  ps->log->hparams[ps->log->n_hparams++] = kv;
  if (strcmp(k, "seed") == 0) {
    log_num n;
    if (scan_number(val, &n) == val.n) set_seed(ps, line, n.v);
  }
}

/* ---- line shapes ---- */

/* "  key: value" inside a Hyperparameters: block. */
static bool hparam_line(parser *ps, uint32_t ln, span s) {
  if (!starts(s, "  ")) return false;
  s = skip_blanks(s);
  size_t k = 0;
  while (k < s.n && is_ident_char(s.p[k])) k++;
  if (!k || k >= s.n || s.p[k] != ':') return false;
  span val = trim_right(skip_blanks(drop(s, k + 1)));
  add_kv(ps, ln, (span){s.p, k}, val);
  return true;
}

/* The rest of a step line after "N/M": a training or a validation step. */
/* A step below the last one printed: the file goes on with another run. */
static void note_step(parser *ps, int64_t step) {
  if (ps->last_step >= 0 && step < ps->last_step) new_segment(ps);
  ps->last_step = step;
}

static void step_line(parser *ps, uint32_t ln, span rest, int64_t step, int64_t total) {
  log_num loss, vl, vb, avg;
  double ms = NAN, res = NAN;
  if (!key_time(rest, "train_time", &ms, &res)) ms = res = NAN;
  double avg_ms = NAN;
  span av;
  if (find_key(rest, "step_avg", &av) && number_with_unit(av, "ms", &avg)) avg_ms = avg.v;
  if (key_number(rest, "train_loss", &loss)) {
    log_train_step t = {ln, step, total, loss, ms, res, avg_ms};
    ps->training = true;
    note_step(ps, step);
    PUSH(ps, train, n_train, cap_train, t);
  } else if (key_number(rest, "val_loss", &vl) && key_number(rest, "val_bpb", &vb)) {
    log_val_step v = {ln, step, total, vl, vb, ms, res, avg_ms};
    ps->training = true;
    note_step(ps, step);
    PUSH(ps, val, n_val, cap_val, v);
  }
}

static void stop_line(parser *ps, uint32_t ln, span s) {
  double ms, res;
  if (!key_time(s, "train_time", &ms, &res)) return;
  pg_log *l = ps->log;
  l->stop.line = ln;
  l->stop.train_ms = ms;
  l->stop.train_res_ms = res;
  l->stop.step = l->stop.total = -1;
  span v;
  if (find_key(s, "step", &v)) {
    int64_t a, b;
    if (scan_step(v, &a, &b)) l->stop.step = a, l->stop.total = b;
  }
}

/* "LABEL: N bytes" after "Serialized model" or "Total submission size". */
static bool bytes_after_label(span s, log_bytes *out, uint32_t ln) {
  const char *colon = memchr(s.p, ':', s.n);
  if (!colon) return false;
  span label = {s.p, (size_t)(colon - s.p)};
  if (label.n && label.p[0] != ' ') return false; /* "Serialized modelX:" */
  span v = skip_blanks(drop(s, label.n + 1));
  int64_t n;
  size_t k = scan_int(v, &n);
  if (!k) return false;
  v = drop(v, k);
  if (!starts(v, " bytes")) return false;
  out->line = ln;
  out->bytes = n;
  copy_label(out->label, label);
  return true;
}

static void code_size_line(parser *ps, uint32_t ln, span s) {
  log_code_kind kind;
  if (starts(s, ":")) kind = CODE_SIZE_PLAIN, s = drop(s, 1);
  else if (starts(s, " (compressed):")) kind = CODE_SIZE_COMPRESSED, s = drop(s, 14);
  else if (starts(s, " (uncompressed):")) kind = CODE_SIZE_UNCOMPRESSED, s = drop(s, 16);
  else return;
  s = skip_blanks(s);
  int64_t n;
  size_t k = scan_int(s, &n);
  if (!k || !starts(drop(s, k), " bytes")) return;
  log_code_size c = {ln, kind, n};
  PUSH(ps, code, n_code, cap_code, c);
}

static bool lower_has(const char *s, const char *needle) {
  char low[LOG_LABEL_MAX];
  size_t i = 0;
  for (; s[i] && i < sizeof low - 1; i++) low[i] = (char)tolower((unsigned char)s[i]);
  low[i] = 0;
  return strstr(low, needle) != NULL;
}

static log_metric_kind classify(const char *prefix) {
  if (lower_has(prefix, "diagnostic")) return METRIC_DIAGNOSTIC;
  static const char *pre[] = {"pre-quant", "pre_quant", "prequant", "pre quant", "pre-ema",
                              "pre_ema", "post-ema", "post_ema", "pre-export", "raw_model"};
  for (size_t i = 0; i < sizeof pre / sizeof *pre; i++)
    if (lower_has(prefix, pre[i])) return METRIC_PRE_QUANT;
  return METRIC_FINAL;
}

/* Where the parenthesised tag that starts at p[i] == '(' ends (the index
 * after its ')'), or 0 if it is no tag: a script's setting printed inside
 * the label, `final_quant_zlib(level=9)_roundtrip` or
 * `final_int6_lzma_roundtrip(ttt_lora)`, holding only names, numbers, '=',
 * ',', '.' and blanks, not nested. */
static size_t label_tag_end(const char *p, size_t n, size_t i) {
  for (size_t k = i + 1; k < n; k++) {
    if (p[k] == ')') return k > i + 1 ? k + 1 : 0;
    if (!is_ident_char(p[k]) && !strchr("=,. ", p[k])) return 0;
  }
  return 0;
}

/* base: the prefix without its parenthesised tags, trailing key:value
 * words and "_exact". A tag is a setting of one evaluation, and scripts
 * print it on the rounded line only (`..._roundtrip(ttt_lora) val_loss:`
 * then `..._roundtrip_exact val_loss:`), so the twins share a base; two
 * tags of one label are two evaluations of one metric (EVAL_SELECTION). */
static void metric_base(log_metric *m) {
  char *b = m->base;
  size_t o = 0, len = strlen(m->prefix);
  for (size_t i = 0; i < len; i++) {
    size_t e = m->prefix[i] == '(' ? label_tag_end(m->prefix, len, i) : 0;
    if (e)
      i = e - 1;
    else
      b[o++] = m->prefix[i];
  }
  b[o] = 0;
  for (;;) {
    char *sp = strrchr(b, ' ');
    if (!sp || !strchr(sp, ':')) break;
    *sp = 0;
  }
  size_t n = strlen(b);
  if (n > 6 && strcmp(b + n - 6, "_exact") == 0) {
    b[n - 6] = 0;
    m->exact = 1;
  }
}

static void push_metric(parser *ps, const log_metric *m) {
  PUSH(ps, metrics, n_metrics, cap_metrics, *m);
}

/* Whether a prefix names an evaluation of the finished model: the words
 * of the scripts' score lines (final_..., ..._roundtrip, sliding_window,
 * ttt, quantized). A line with val_bpb and no val_loss is read as a metric
 * only under such a prefix: "best val_bpb:" or a step's is not a score. */
static bool evaluation_prefix(span p) {
  static const char *words[] = {"final", "roundtrip", "sliding", "ttt", "quant"};
  char low[LOG_LABEL_MAX];
  size_t n = p.n < sizeof low - 1 ? p.n : sizeof low - 1;
  for (size_t i = 0; i < n; i++) low[i] = (char)tolower((unsigned char)p.p[i]);
  low[n] = 0;
  for (size_t i = 0; i < sizeof words / sizeof *words; i++)
    if (strstr(low, words[i])) return true;
  return false;
}

/* "PREFIX val_loss:X val_bpb:Y ..." (or '=' separators); also "PREFIX
 * val_bpb:Y ..." without a val_loss (its val_loss NaN) under an
 * evaluation prefix (`final_ttt_exact val_bpb:1.12662548`). Returns
 * whether the line is taken: any line with both keys is (whether or not
 * it reads as a metric, it is no configuration), a val_bpb-only line when
 * it is a metric. */
static bool metric_line(parser *ps, uint32_t ln, span s) {
  span v;
  size_t at;
  bool loss = find_key_at(s, "val_loss", &v, &at);
  if (!loss && !find_key_at(s, "val_bpb", &v, &at)) return false;
  span prefix = trim_right((span){s.p, at});
  if (!prefix.n || prefix.n >= LOG_LABEL_MAX || !isalpha((unsigned char)prefix.p[0])) return loss;
  for (size_t i = 0; i < prefix.n; i++) {
    char c = prefix.p[i];
    size_t tag = c == '(' ? label_tag_end(prefix.p, prefix.n, i) : 0;
    if (tag)
      i = tag - 1;
    else if (!is_ident_char(c) && !strchr(" :.+-/", c))
      return loss;
  }
  if (!loss && !evaluation_prefix(prefix)) return false;
  log_metric m = {0};
  span after = drop(s, at);
  if (!key_number(after, "val_bpb", &m.val_bpb)) return loss;
  if (!loss)
    m.val_loss = (log_num){NAN, 0};
  else if (!key_number(after, "val_loss", &m.val_loss))
    return true;
  m.line = ln;
  m.segment = (uint32_t)ps->log->n_segs - 1;
  copy_label(m.prefix, prefix);
  metric_base(&m);
  m.kind = classify(m.prefix);
  double res;
  if (!key_time(after, "eval_time", &m.eval_ms, &res) &&
      !key_time(after, "elapsed", &m.eval_ms, &res))
    m.eval_ms = NAN;
  push_metric(ps, &m);
  return true;
}

/* "key:value key:value ..." configuration printed before training. */
static bool config_line(parser *ps, uint32_t ln, span s) {
  span rest = s;
  size_t words = 0;
  while (rest.n) { /* validate first: every word is ident:value */
    size_t k = 0;
    while (k < rest.n && is_ident_char(rest.p[k])) k++;
    if (!k || k + 1 >= rest.n || rest.p[k] != ':' || rest.p[k + 1] == ' ') return false;
    while (k < rest.n && rest.p[k] != ' ') k++;
    rest = skip_blanks(drop(rest, k));
    words++;
  }
  if (!words) return false;
  rest = s;
  while (rest.n) {
    size_t k = 0;
    while (rest.p[k] != ':') k++;
    size_t e = k;
    while (e < rest.n && rest.p[e] != ' ') e++;
    span key = {rest.p, k}, val = {rest.p + k + 1, e - k - 1};
    /* warmup_step:3/20 and the like are progress, not configuration. */
    if (!(key.n >= 4 && memcmp(key.p + key.n - 4, "step", 4) == 0)) add_kv(ps, ln, key, val);
    rest = skip_blanks(drop(rest, e));
  }
  return true;
}

/* Whether the '(' at s.p[k], after a leading name, opens a label's tag
 * (label_tag_end) rather than a call's arguments: what follows the ')' is
 * a name character (`final_quant_zlib(level=9)_roundtrip`) or a score's
 * key (`final_x(ttt_lora) val_loss:`), neither of which Python allows
 * after a call. */
static bool tagged_label(span s, size_t k) {
  size_t e = label_tag_end(s.p, s.n, k);
  if (!e || e >= s.n) return false;
  if (is_ident_char(s.p[e])) return true;
  span rest = skip_blanks(drop(s, e));
  return rest.n < s.n - e && (starts(rest, "val_loss") || starts(rest, "val_bpb"));
}

/* Python-looking text: quotes, braces, backslashes, or a call or keyword
 * at the start. None of the result shapes contains these. */
static bool looks_like_code(span s) {
  for (size_t i = 0; i < s.n; i++) {
    char c = s.p[i];
    if (c == '"' || c == '\'' || c == '{' || c == '}' || c == '\\' || c == '`' || c == ';')
      return true;
  }
  size_t k = 0;
  while (k < s.n && (is_ident_char(s.p[k]) || s.p[k] == '.')) k++;
  if (k < s.n && s.p[k] == '(' && !tagged_label(s, k)) return true; /* log0(..., print(... */
  static const char *kw[] = {"def ", "class ", "if ", "elif ", "else:", "for ", "while ",
                             "return", "import ", "from ", "with ", "try:", "except",
                             "raise ", "assert ", "lambda", "global ", "@"};
  if (!s.n || !strchr("dciefwrtalg@", s.p[0])) return false; /* no keyword starts so */
  for (size_t i = 0; i < sizeof kw / sizeof *kw; i++)
    if (starts(s, kw[i])) return true;
  return false;
}

static bool is_torchrun_warning(span s) {
  /* glog style "W0318 14:37:59.159000 ..." and c10 "[W318 ...]" ("[rank0]:[W318 ..."
   * comes here without its "[rank0]:", log_prefix_len's). */
  if (s.n > 5 && strchr("WIE", s.p[0]) && isdigit((unsigned char)s.p[1]) &&
      isdigit((unsigned char)s.p[2]) && isdigit((unsigned char)s.p[3]) &&
      isdigit((unsigned char)s.p[4]) && s.p[5] == ' ')
    return true;
  return starts(s, "[W") && s.n > 2 && isdigit((unsigned char)s.p[2]);
}

/* Digits at s[i..]: how many (0 if none). */
static size_t digits_at(const char *s, size_t n, size_t i) {
  size_t k = i;
  while (k < n && isdigit((unsigned char)s[k])) k++;
  return k - i;
}

/* "1776142348.135 " or "1776142348 " (9 to 11 digits, then a blank). */
static size_t unix_time_len(const char *s, size_t n) {
  size_t i = digits_at(s, n, 0);
  if (i < 9 || i > 11) return 0;
  if (i < n && s[i] == '.') {
    size_t f = digits_at(s, n, i + 1);
    if (!f) return 0;
    i += 1 + f;
  }
  return i < n && s[i] == ' ' ? i + 1 : 0;
}

/* "[default0]:" or "[rank3]:": a role (letters) and a process number in
 * brackets, then a colon, as torchrun's --tee and PyTorch's per-rank
 * logging put before each line a process printed. */
static size_t rank_tag_len(const char *s, size_t n) {
  size_t i = 1;
  if (!n || s[0] != '[') return 0;
  while (i < n && i < 33 && isalpha((unsigned char)s[i])) i++;
  size_t d = digits_at(s, n, i);
  if (i == 1 || !d || d > 5 || i + d + 1 >= n || s[i + d] != ']' || s[i + d + 1] != ':') return 0;
  return i + d + 2;
}

/* A clock: HH:MM:SS with an optional fraction (".135" or ",135"),
 * optionally after a date "YYYY-MM-DD" and a blank or 'T', optionally
 * followed by a zone ("Z", "+00:00", "-0500"). Its length, 0 if none. */
static size_t clock_len(const char *s, size_t n) {
  size_t i = 0;
  if (digits_at(s, n, 0) == 4 && n > 10 && s[4] == '-' && digits_at(s, n, 5) == 2 && s[7] == '-' &&
      digits_at(s, n, 8) == 2 && (s[10] == ' ' || s[10] == 'T'))
    i = 11;
  for (int part = 0; part < 3; part++) { /* HH, MM, SS */
    if (digits_at(s, n, i) != 2) return 0;
    i += 2;
    if (part == 2) break;
    if (i >= n || s[i] != ':') return 0;
    i++;
  }
  size_t frac = i + 1 < n && (s[i] == '.' || s[i] == ',') ? digits_at(s, n, i + 1) : 0;
  if (frac) i += 1 + frac;
  if (i < n && s[i] == 'Z') {
    i++;
  } else if (i < n && (s[i] == '+' || s[i] == '-')) {
    size_t h = digits_at(s, n, i + 1);
    if (h == 4)
      i += 5; /* -0500 */
    else if (h == 2 && i + 3 < n && s[i + 3] == ':' && digits_at(s, n, i + 4) == 2)
      i += 6;
  }
  return i;
}

/* A clock as a logger prints it before a line: "[04:52:28] ",
 * "[2026-03-23 04:39:13,123] ", "2026-04-30T12:00:00Z ", then optionally a
 * level ("INFO: ", "INFO - ", "- INFO - ", "[INFO] "). 0 if none. */
static size_t clock_prefix_len(const char *s, size_t n) {
  size_t i = n && s[0] == '[', c = clock_len(s + i, n - i);
  if (!c) return 0;
  i += c;
  if (s[0] == '[') {
    if (i >= n || s[i] != ']') return 0;
    i++;
  }
  if (i >= n || s[i] != ' ') return 0;
  while (i < n && s[i] == ' ') i++;
  static const char *levels[] = {"INFO", "WARNING", "DEBUG", "ERROR", "CRITICAL"};
  size_t j = i;
  if (j + 1 < n && s[j] == '-' && s[j + 1] == ' ') j += 2;
  int bracket = j < n && s[j] == '[';
  j += (size_t)bracket;
  for (size_t k = 0; k < sizeof levels / sizeof *levels; k++) {
    size_t m = strlen(levels[k]);
    if (n - j < m + 1 || memcmp(s + j, levels[k], m)) continue;
    size_t e = j + m;
    if (bracket ? s[e] == ']' : s[e] == ':')
      e++;
    else if (!bracket && e + 1 < n && s[e] == ' ' && s[e + 1] == '-')
      e += 2;
    else
      break;
    if (e < n && s[e] != ' ') break;
    while (e < n && s[e] == ' ') e++;
    return e;
  }
  return i;
}

size_t log_prefix_len(const char *s, size_t n) {
  size_t i = 0;
  for (int k = 0; k < 3; k++) {
    size_t t = unix_time_len(s + i, n - i);
    if (!t) t = rank_tag_len(s + i, n - i);
    if (!t) t = clock_prefix_len(s + i, n - i);
    if (!t) break;
    i += t;
  }
  return i;
}

static span strip_prefix(span s) { return drop(s, log_prefix_len(s.p, s.n)); }

/* A loss or bpb figure in a shape of its own: "loss 6.9311", "Final BPB:
 * 1.1070", "bpb=0.4311" (the word ends there, a decimal with a fraction
 * follows after blanks and at most one ':' or '='; " = " is Python's
 * assignment, not a log's). Marks a log that pgolf cannot read. */
static bool loose_figure(span s) {
  for (size_t i = 0; i + 3 <= s.n; i++) {
    size_t w = 0;
    if (i + 4 <= s.n && strncasecmp(s.p + i, "loss", 4) == 0)
      w = 4;
    else if (strncasecmp(s.p + i, "bpb", 3) == 0)
      w = 3;
    if (!w || (i + w < s.n && is_ident_char(s.p[i + w]))) continue;
    span r = drop(s, i + w);
    bool blank = r.n && r.p[0] == ' ';
    r = skip_blanks(r);
    if (r.n && (r.p[0] == ':' || r.p[0] == '=')) {
      if (blank && r.p[0] == '=' && r.n > 1 && r.p[1] == ' ') continue;
      r = skip_blanks(drop(r, 1));
    }
    log_num v;
    size_t k = scan_number(r, &v);
    if (k && v.decimals > 0) return true;
  }
  return false;
}

/* Is raw line s tagged by another process than the Hyperparameters block
 * being read ("[default7]:" inside rank 0's block)? Such a line is another
 * process's output interleaved with the block, not its end. */
static bool other_process(const parser *ps, span s) {
  size_t t = rank_tag_len(s.p, s.n);
  return t && ps->hp_tag_n && (t != ps->hp_tag_n || memcmp(s.p, ps->hp_tag, t));
}

static void parse_line(parser *ps, uint32_t ln, span s) {
  pg_log *l = ps->log;
  span raw = s;
  s = strip_prefix(s);
  if (ps->in_hparams) {
    if (hparam_line(ps, ln, s) || other_process(ps, raw)) return;
    ps->in_hparams = false;
  }
  if (!s.n || s.p[0] == ' ' || s.p[0] == '\t') return; /* indented: code or prose */
  if (is_torchrun_warning(s)) {
    l->torchrun_warnings++;
    return;
  }
  if (looks_like_code(s)) return;
  s = trim_right(s);
  if (s.n == 16 && starts(s, "Hyperparameters:")) {
    ps->in_hparams = true;
    ps->hp_tag_n = rank_tag_len(raw.p, raw.n);
    if (ps->hp_tag_n > sizeof ps->hp_tag) ps->hp_tag_n = 0;
    memcpy(ps->hp_tag, raw.p, ps->hp_tag_n);
    /* A configuration printed after scores of the current segment: the
     * file goes on with another session (an evaluation of another model). */
    uint32_t cur = (uint32_t)l->n_segs - 1;
    if (l->n_metrics && l->metrics[l->n_metrics - 1].segment == cur) new_segment(ps);
    return;
  }
  int64_t step, total;
  size_t k;
  if (starts(s, "step:") && (k = scan_step(drop(s, 5), &step, &total)) &&
      (5 + k == s.n || s.p[5 + k] == ' ')) {
    step_line(ps, ln, drop(s, 5 + k), step, total);
  } else if (isdigit((unsigned char)s.p[0]) && (k = scan_step(s, &step, &total)) && k < s.n &&
             s.p[k] == ' ') {
    step_line(ps, ln, drop(s, k), step, total);
  } else if (starts(s, "stopping_early:")) {
    stop_line(ps, ln, s);
  } else if (starts(s, "Serialized model")) {
    log_bytes b;
    if (bytes_after_label(drop(s, 16), &b, ln)) PUSH(ps, models, n_models, cap_models, b);
  } else if (starts(s, "Total submission size")) {
    log_bytes b;
    if (bytes_after_label(drop(s, 21), &b, ln)) PUSH(ps, totals, n_totals, cap_totals, b);
  } else if (starts(s, "Code size")) {
    code_size_line(ps, ln, drop(s, 9));
  } else if (starts(s, "gptq:reserving ")) {
    log_num n;
    if (number_with_unit(drop(s, 15), "s", &n)) l->gptq_reserve_s = (log_value){ln, n.v};
  } else if (starts(s, "GPTQ:collected ")) {
    span r = drop(s, 15);
    int64_t nh;
    log_num t;
    if ((k = scan_int(r, &nh)) && starts(drop(r, k), " Hessians in ") &&
        number_with_unit(drop(r, k + 13), "s", &t)) {
      l->gptq_hessian_s = (log_value){ln, t.v};
      l->gptq_hessians = nh;
    }
  } else if (starts(s, "total_eval_time:")) {
    double ms, res;
    if (parse_time(skip_blanks(drop(s, 16)), &ms, &res)) l->total_eval_s = (log_value){ln, ms / 1000.0};
  } else if (starts(s, "seed:")) {
    span v = skip_blanks(drop(s, 5));
    int64_t sd;
    if ((k = scan_int(v, &sd)) && k == v.n) set_seed(ps, ln, (double)sd);
  } else if (find_key(s, "val_bpb", &(span){0}) && metric_line(ps, ln, s)) {
  } else {
    if (!l->figure_line && loose_figure(s)) l->figure_line = ln;
    if (!ps->training) config_line(ps, ln, s);
  }
}

/* A leading copy of the script: lines up to the first row of '=' (the
 * official logger writes the source, then "=" * 100), if Python appears
 * above it. Returns that separator's line, or 0. */
static uint32_t leading_code_end(const char *text, size_t len) {
  bool python = false;
  uint32_t ln = 0;
  size_t off = 0;
  while (off < len) {
    const char *nl = memchr(text + off, '\n', len - off);
    size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
    span s = strip_prefix((span){text + off, n});
    ln++;
    if (s.n && s.p[s.n - 1] == '\r') s.n--;
    if (s.n && strchr("ifdc\"#", s.p[0]) &&
        (starts(s, "import ") || starts(s, "from ") || starts(s, "def ") ||
         starts(s, "class ") || starts(s, "\"\"\"") || starts(s, "#!")))
      python = true;
    size_t eq = 0;
    while (eq < s.n && s.p[eq] == '=') eq++;
    if (eq >= 50 && eq == s.n) return python ? ln : 0;
    off += n + 1;
  }
  return 0;
}

/* A number that moves when parse_line records a result: the counts of the
 * arrays and the lines of the single values (each set on a later line). */
static uint64_t results_mark(const pg_log *l) {
  return (uint64_t)l->n_train + l->n_val + l->n_metrics + l->n_models + l->n_totals + l->n_code +
         l->stop.line + l->gptq_reserve_s.line + l->gptq_hessian_s.line + l->total_eval_s.line;
}

int log_parse_part(const char *text, size_t len, uint32_t first_line, const char *name, pg_log *out,
                   pg_error *err) {
  memset(out, 0, sizeof *out);
  if (len > LOG_MAX_BYTES)
    return pg_fail(err, name, -1, "log of %zu bytes is over the limit of %u bytes", len,
                   LOG_MAX_BYTES);
  if (!first_line) first_line = 1;
  parser ps = {.log = out, .name = name, .err = err};
  out->first_line = first_line;
  if (grow(&out->seg_first, &ps.cap_segs, 0, sizeof *out->seg_first))
    ps.oom = true;
  else
    out->seg_first[out->n_segs++] = first_line;
  uint32_t code_end = leading_code_end(text, len);
  out->code_end_line = code_end ? code_end + first_line - 1 : 0;
  size_t off = 0;
  uint32_t ln = first_line - 1;
  while (off < len && !ps.oom) {
    const char *nl = memchr(text + off, '\n', len - off);
    size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
    span s = {text + off, n};
    off += n + 1;
    ln++;
    if (ln <= out->code_end_line) continue;
    if (s.n && s.p[s.n - 1] == '\r') s.n--;
    if (s.n > LOG_MAX_LINE || memchr(s.p, 0, s.n)) {
      out->long_lines++;
      ps.in_hparams = false;
      continue;
    }
    uint64_t mark = results_mark(out);
    parse_line(&ps, ln, s);
    if (results_mark(out) != mark) ps.last_result = ln;
  }
  out->n_lines = ln;
  if (ps.oom) {
    log_free(out);
    return pg_fail(err, name, -1, "out of memory while parsing the log");
  }
  return 0;
}

int log_parse(const char *text, size_t len, const char *name, pg_log *out, pg_error *err) {
  return log_parse_part(text, len, 1, name, out, err);
}

int log_parse_file(const char *path, pg_log *out, pg_error *err) {
  uint8_t *buf;
  size_t len;
  memset(out, 0, sizeof *out);
  if (file_read_all(path, LOG_MAX_BYTES, &buf, &len, err)) return -1;
  int rc = log_parse((const char *)buf, len, path, out, err);
  free(buf);
  return rc;
}

void log_free(pg_log *log) {
  if (!log) return;
  for (size_t i = 0; i < log->n_hparams; i++) {
    free(log->hparams[i].key);
    free(log->hparams[i].value);
  }
  free(log->train);
  free(log->val);
  free(log->metrics);
  free(log->models);
  free(log->totals);
  free(log->code);
  free(log->hparams);
  free(log->seg_first);
  memset(log, 0, sizeof *log);
}

const log_metric *log_final_metric(const pg_log *log) {
  const log_metric *last = NULL;
  for (size_t i = 0; i < log->n_metrics; i++)
    if (log->metrics[i].kind == METRIC_FINAL) last = &log->metrics[i];
  if (!last || last->exact) return last;
  for (size_t i = log->n_metrics; i-- > 0;) {
    const log_metric *m = &log->metrics[i];
    if (m->kind == METRIC_FINAL && m->exact && strcmp(m->base, last->base) == 0) return m;
  }
  return last;
}

const log_kv *log_hparam(const pg_log *log, const char *key) {
  for (size_t i = log->n_hparams; i-- > 0;)
    if (strcmp(log->hparams[i].key, key) == 0) return &log->hparams[i];
  return NULL;
}

int log_train_end(const pg_log *log, double *ms, double *res_ms, uint32_t *line,
                  double *step_ms) {
  double avg = NAN, t = NAN, res = NAN;
  int64_t step = -1;
  uint32_t at = 0;
  /* The last step line with a clock, training or validation, by line. */
  size_t i = 0, j = 0;
  while (i < log->n_train || j < log->n_val) {
    bool take_train = j >= log->n_val || (i < log->n_train && log->train[i].line < log->val[j].line);
    double lt, lr, la;
    int64_t ls;
    uint32_t ll;
    if (take_train) {
      const log_train_step *s = &log->train[i++];
      lt = s->train_ms, lr = s->train_res_ms, la = s->step_avg_ms, ls = s->step, ll = s->line;
    } else {
      const log_val_step *s = &log->val[j++];
      lt = s->train_ms, lr = s->train_res_ms, la = s->step_avg_ms, ls = s->step, ll = s->line;
    }
    if (!isnan(la)) avg = la;
    if (!isnan(lt)) t = lt, res = lr, step = ls, at = ll;
  }
  if (log->stop.line) {
    t = log->stop.train_ms, res = log->stop.train_res_ms, at = log->stop.line;
    if (log->stop.step >= 0) step = log->stop.step;
  }
  if (!at) return -1;
  if (isnan(avg) && step > 0) avg = t / (double)step;
  *ms = t;
  *res_ms = res;
  *line = at;
  *step_ms = avg;
  return 0;
}

const char *log_metric_kind_name(log_metric_kind k) {
  switch (k) {
  case METRIC_FINAL: return "final";
  case METRIC_PRE_QUANT: return "pre-quantization";
  case METRIC_DIAGNOSTIC: return "diagnostic";
  }
  return "?";
}

const char *log_code_kind_name(log_code_kind k) {
  switch (k) {
  case CODE_SIZE_PLAIN: return "code size";
  case CODE_SIZE_COMPRESSED: return "compressed code size";
  case CODE_SIZE_UNCOMPRESSED: return "uncompressed code size";
  }
  return "?";
}
