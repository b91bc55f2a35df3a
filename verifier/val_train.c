/* Training on the validation stream before scoring it
 * (verifier/val_train.h). Everything here reads statements whose string
 * literals are blanked (pysrc_blank_strings), so that a name inside a
 * message is never taken for code; the marks alone come from the text. */
#include "verifier/val_train.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VT_MAX_PARAMS 32
#define VT_NAME 64

static int word(char c) { return pysrc_word_char(c); }

/* What a mark is trimmed of, and a log line read past. */
static int blank(char c) { return c == ' ' || c == '\t'; }

/* One parsed text and its statements' blanked code. */
typedef struct vt_src {
  const py_src *src;
  char **code; /* per statement; NULL where memory ran out (read as empty) */
} vt_src;

static const char *code_of(const vt_src *v, size_t i) { return v->code[i] ? v->code[i] : ""; }

/* The first statement after i that is not inside i's block. */
static size_t block_end(const py_src *s, size_t i) {
  size_t j = i + 1;
  while (j < s->n && s->v[j].depth > s->v[i].depth) j++;
  return j;
}

static int starts_with(const char *t, const char *p) { return !strncmp(t, p, strlen(p)); }

static int is_def(const py_stmt *st) {
  return st->header && (starts_with(st->text, "def ") || starts_with(st->text, "async def "));
}

static int is_loop(const py_stmt *st) {
  return st->header && (starts_with(st->text, "for ") || starts_with(st->text, "while ") ||
                        starts_with(st->text, "async for "));
}

/* Is w at t[i] a whole word (not part of a longer name, and not an
 * attribute when attr is 0)? */
static int word_at(const char *t, size_t n, size_t i, const char *w, int attr) {
  size_t k = strlen(w);
  if (i + k > n || memcmp(t + i, w, k)) return 0;
  if (i > 0 && (word(t[i - 1]) || (!attr && t[i - 1] == '.'))) return 0;
  return i + k >= n || !word(t[i + k]);
}

static int has_word(const char *t, const char *w) {
  size_t n = strlen(t);
  for (const char *p = strstr(t, w); p; p = strstr(p + 1, w))
    if (word_at(t, n, (size_t)(p - t), w, 1)) return 1;
  return 0;
}

/* The name (one part) that ends just before t[end], lower-cased into out;
 * its start, or end when there is none. */
static size_t name_before(const char *t, size_t end, char *out, size_t cap) {
  size_t a = end;
  while (a > 0 && word(t[a - 1])) a--;
  size_t k = end - a < cap - 1 ? end - a : cap - 1;
  for (size_t x = 0; x < k; x++) out[x] = (char)tolower((unsigned char)t[a + x]);
  out[k] = 0;
  return a;
}

/* Does code score: open a no-gradient context, add to a byte count, look
 * up a byte table, call an evaluation (`eval_val(`, `timed_eval(`; not a
 * module's `.eval()`) or hand one to a caller (`timed_eval("...",
 * eval_val, ...)`)? A loss summed alone is no sign:
 * trainers sum their training loss to print it (`epoch_loss_sum +=`),
 * while a score in bits per byte needs the scored tokens' bytes. */
static int scores(const char *c) {
  if (has_word(c, "no_grad") || has_word(c, "inference_mode")) return 1;
  size_t n = strlen(c);
  char name[VT_NAME];
  const char *pe = strstr(c, "+=");
  if (pe) {
    char target[VT_NAME * 2];
    size_t k = (size_t)(pe - c) < sizeof target - 1 ? (size_t)(pe - c) : sizeof target - 1;
    for (size_t x = 0; x < k; x++) target[x] = (char)tolower((unsigned char)c[x]);
    target[k] = 0;
    if (strstr(target, "byte")) return 1;
  }
  for (size_t i = 1; i < n; i++) {
    if (c[i] != '[' && c[i] != '(') continue;
    if (!word(c[i - 1])) continue;
    name_before(c, i, name, sizeof name);
    if (c[i] == '[' &&
        (strstr(name, "bytes") || strstr(name, "leading_space") || strstr(name, "boundary")))
      return 1;
    if (c[i] == '(' && strstr(name, "eval") && strcmp(name, "eval")) return 1;
  }
  for (const char *p = strstr(c, "eval_val"); p; p = strstr(p + 1, "eval_val"))
    if (p == c || (!word(p[-1]) && p[-1] != '.')) return 1; /* passed to a timer */
  return 0;
}

/* Is the last part of a dotted name spelled as the validation stream:
 * val, an optional '_', tok... (`val_tokens`, `val_toks`, `valtok`)? */
static int stream_name(const char *t, size_t n) {
  char low[VT_NAME];
  if (n >= sizeof low) return 0;
  for (size_t x = 0; x < n; x++) low[x] = (char)tolower((unsigned char)t[x]);
  low[n] = 0;
  if (!starts_with(low, "val")) return 0;
  const char *r = low + 3;
  if (*r == '_') r++;
  return starts_with(r, "tok");
}

/* A method that moves a tensor without choosing its elements. */
static int mover(const char *t, size_t m) {
  static const char *const ok[] = {"to", "cuda", "long", "int", "contiguous"};
  for (size_t k = 0; k < sizeof ok / sizeof *ok; k++)
    if (m == strlen(ok[k]) && !memcmp(t, ok[k], m)) return 1;
  return 0;
}

/* Is the argument text t[0..n) the whole validation stream: a dotted name
 * so spelled, moved at most by `.to(...)`, `.cuda()`, `.long()`,
 * `.contiguous()`? Its name into out. */
static int whole_stream(const char *t, size_t n, char *out, size_t cap) {
  while (n && t[0] == ' ') t++, n--;
  while (n && t[n - 1] == ' ') n--;
  size_t p = 0;
  while (p < n && t[p] != '(' && t[p] != '[') p++;
  if (p < n && t[p] == '[') return 0;
  size_t last = 0, name_end = p;
  if (!p || pysrc_dotted_name(t, p, &last) != p) return 0;
  size_t e = p;
  if (p < n) { /* the name's last part is the first move */
    if (!last || !mover(t + last, p - last)) return 0;
    name_end = last - 1;
    if (pysrc_dotted_name(t, name_end, &last) != name_end) return 0;
    e = pysrc_group_end(t, n, p);
    while (e + 1 < n && t[e] == '.' && word(t[e + 1])) {
      size_t a = e + 1, b = a;
      while (b < n && word(t[b])) b++;
      if (b >= n || t[b] != '(' || !mover(t + a, b - a)) return 0;
      e = pysrc_group_end(t, n, b);
    }
  }
  if (e != n || !stream_name(t + last, name_end - last)) return 0;
  size_t c = name_end < cap - 1 ? name_end : cap - 1;
  memcpy(out, t, c);
  out[c] = 0;
  return 1;
}

/* The parameters of a def's code (`def f(a,b:T=1,*c,**d)->R`), names only,
 * in order; *n_out of them. */
static void def_params(const char *c, char params[][VT_NAME], size_t *n_out) {
  *n_out = 0;
  const char *p = strchr(c, '(');
  if (!p) return;
  size_t n = strlen(c), i = (size_t)(p - c), end = pysrc_group_end(c, n, i);
  if (end == n && c[n - 1] != ')') return;
  size_t a = i + 1;
  int level = 0;
  for (size_t j = a; j < end; j++) {
    char ch = c[j];
    if (ch == '(' || ch == '[' || ch == '{') level++;
    if (ch == ')' || ch == ']' || ch == '}') level--;
    if ((ch == ',' && level == 0) || (level < 0)) {
      size_t x = a;
      while (x < j && (c[x] == '*' || c[x] == ' ')) x++;
      size_t y = x;
      while (y < j && word(c[y])) y++;
      if (*n_out < VT_MAX_PARAMS) {
        size_t m = y - x < VT_NAME - 1 ? y - x : VT_NAME - 1;
        memcpy(params[*n_out], c + x, m);
        params[*n_out][m] = 0;
        (*n_out)++;
      }
      a = j + 1;
      if (level < 0) break;
    }
  }
  if (*n_out == 1 && !params[0][0]) *n_out = 0; /* `def f()` */
}

/* The function name of a def's code. */
static void def_name(const char *c, char *out, size_t cap) {
  const char *p = strstr(c, "def ");
  out[0] = 0;
  if (!p) return;
  p += 4;
  size_t k = 0;
  while (word(p[k]) && k < cap - 1) k++;
  memcpy(out, p, k);
  out[k] = 0;
}

/* Find `name[` with name a whole word in code; param: name must not be an
 * attribute. Offset or -1. */
static long subscript_of(const char *c, const char *name) {
  size_t n = strlen(c), k = strlen(name);
  if (!k) return -1; /* a bare `*` or `/` among the parameters */
  for (const char *p = strstr(c, name); p; p = strstr(p + 1, name)) {
    size_t i = (size_t)(p - c);
    if (word_at(c, n, i, name, 0) && i + k < n && c[i + k] == '[') return (long)i;
  }
  return -1;
}

/* A dotted name spelled as the stream, subscripted, in code, whose first
 * part is not one of params (a name the function reads itself). */
static long direct_subscript(const char *c, char params[][VT_NAME], size_t np, char *out,
                             size_t cap) {
  size_t n = strlen(c);
  for (size_t i = 0; i < n; i++) {
    if (c[i] != '[' || !i || !word(c[i - 1])) continue;
    size_t a = i;
    while (a > 0 && (word(c[a - 1]) || c[a - 1] == '.')) a--;
    while (a < i && (c[a] == '.' || isdigit((unsigned char)c[a]))) a++;
    size_t l = i;
    while (l > a && word(c[l - 1])) l--;
    if (!stream_name(c + l, i - l)) continue;
    int is_param = 0;
    for (size_t k = 0; k < np && !is_param; k++)
      is_param = i - a == strlen(params[k]) && !memcmp(c + a, params[k], i - a);
    if (is_param) continue;
    size_t m = i - a < cap - 1 ? i - a : cap - 1;
    memcpy(out, c + a, m);
    out[m] = 0;
    return (long)a;
  }
  return -1;
}

/* Add the marks of statement st (code c: its blanked text) to t: the
 * literal text that opens the first argument of each log or print call,
 * up to an f-string's first `{` or an escape. */
static void add_marks(val_trainer *t, const py_stmt *st, const char *c) {
  size_t n = st->len;
  for (size_t i = 1; i < n && t->n_marks < VT_MAX_MARKS; i++) {
    if (c[i] != '(' || !word(c[i - 1])) continue;
    char name[VT_NAME];
    name_before(c, i, name, sizeof name);
    if (!strstr(name, "log") && !strstr(name, "print") && strcmp(name, "info")) continue;
    size_t pos = i + 1;
    py_str s;
    if (!pysrc_next_string(st->text, n, &pos, &s) || s.at != i + 1) continue;
    int f = 0;
    for (size_t x = s.at; x < s.end && st->text[x] != '"' && st->text[x] != '\''; x++)
      f |= st->text[x] == 'f' || st->text[x] == 'F';
    size_t k = 0;
    while (k < s.len && s.body[k] != '\\' && !(f && s.body[k] == '{')) k++;
    size_t a = 0;
    while (a < k && blank(s.body[a])) a++;
    while (k > a && blank(s.body[k - 1])) k--;
    int letters = 0;
    for (size_t x = a; x < k; x++) letters += isalpha((unsigned char)s.body[x]) != 0;
    if (k - a < VT_MARK_MIN || letters < 5) continue;
    char m[VT_MARK_LEN];
    size_t len = k - a < sizeof m - 1 ? k - a : sizeof m - 1;
    memcpy(m, s.body + a, len);
    m[len] = 0;
    int dup = 0;
    for (size_t x = 0; x < t->n_marks && !dup; x++) dup = !strcmp(t->marks[x], m);
    if (!dup) memcpy(t->marks[t->n_marks++], m, len + 1);
  }
}

/* A trainer found in text ti at def d, before its call is known. */
typedef struct cand {
  val_trainer t;
  char params[VT_MAX_PARAMS][VT_NAME];
  size_t n_params;
  int read_param; /* index of the parameter it subscripts, -1 when it reads the stream directly */
  size_t def_from, def_to; /* its statements in text t.text */
  size_t blk_from, blk_to; /* the block around its call in t.call_text, if read */
} cand;

/* The outermost loop of the function at d around statement j, 0 if none
 * or if j belongs to a function nested in it (scanned as its own: a
 * score-first evaluation may hand scored chunks to an inner trainer). */
static size_t outer_loop(const py_src *s, size_t d, size_t j) {
  size_t loop = 0;
  for (int32_t p = s->v[j].parent; p > (int32_t)d; p = s->v[p].parent) {
    if (is_def(&s->v[p])) return 0;
    if (is_loop(&s->v[p])) loop = (size_t)p;
  }
  return loop;
}

/* Does statement j of the def at d read the stream: subscript one of
 * c's parameters (its index into *param) or a name spelled as the stream
 * that is no parameter (-1 into *param, the name into c->t.stream)? */
static int reads_stream(const vt_src *v, size_t j, cand *c, int *param) {
  const char *code = code_of(v, j);
  for (size_t k = 0; k < c->n_params; k++)
    if (strcmp(c->params[k], "self") && subscript_of(code, c->params[k]) >= 0)
      return *param = (int)k, 1;
  *param = -1;
  return direct_subscript(code, c->params, c->n_params, c->t.stream, sizeof c->t.stream) >= 0;
}

/* Is the def at d a trainer (see the header)? Fills c. The loop that
 * trains is the outermost one around a statement reading the stream; it
 * must hold a backward and a step, and nothing from the def's start to
 * the loop's end may score. */
static int trainer_at(const vt_src *v, size_t ti, size_t d, cand *c) {
  const py_src *s = v->src;
  memset(c, 0, sizeof *c);
  for (size_t j = d; j > 0 && s->v[j - 1].depth == s->v[d].depth && s->v[j - 1].text[0] == '@'; j--)
    if (scores(code_of(v, j - 1))) return 0;
  def_name(code_of(v, d), c->t.func, sizeof c->t.func);
  def_params(code_of(v, d), c->params, &c->n_params);
  if (!c->t.func[0]) return 0;
  size_t end = block_end(s, d), done = d; /* statements up to done are judged */
  for (size_t r = d + 1; r < end; r++) {
    int param;
    if (r <= done || !reads_stream(v, r, c, &param)) continue;
    size_t loop = outer_loop(s, d, r);
    if (!loop) continue;
    size_t loop_end = block_end(s, loop), back = 0, step = 0;
    int scored = 0;
    for (size_t j = d + 1; j < loop_end && !scored; j++) scored = scores(code_of(v, j));
    for (size_t j = loop + 1; j < loop_end; j++) {
      if (!back && strstr(code_of(v, j), ".backward(")) back = j;
      if (!step && strstr(code_of(v, j), ".step(")) step = j;
    }
    if (scored) return 0; /* every later loop would follow this scoring too */
    if (!back || !step) {
      done = loop_end - 1;
      continue;
    }
    c->read_param = param;
    c->def_from = d, c->def_to = end;
    c->t.text = ti;
    c->t.def_line = s->v[d].line;
    c->t.read_line = s->v[r].line;
    pysrc_cut(c->t.read, sizeof c->t.read, s->v[r].text);
    c->t.backward_line = s->v[back].line;
    for (size_t j = d + 1; j < end; j++) add_marks(&c->t, &s->v[j], code_of(v, j));
    return 1;
  }
  return 0;
}

/* Does the call at statement ci sit inside a loop of its function that
 * scored before it? */
static int in_scoring_loop(const vt_src *v, size_t ci) {
  const py_src *s = v->src;
  for (int32_t p = s->v[ci].parent; p >= 0 && !is_def(&s->v[p]); p = s->v[p].parent) {
    if (!is_loop(&s->v[p])) continue;
    for (size_t j = (size_t)p + 1; j < ci; j++)
      if (scores(code_of(v, j))) return 1;
  }
  return 0;
}

/* Bind the call's arguments, opening at code[open] ('('), to c's
 * parameters: the text of the argument the read parameter gets, into
 * arg; 0 if none is bound to it. method: called as an attribute, so a
 * leading self is bound already. */
static int bound_arg(const char *code, size_t open, const cand *c, int method, char *arg,
                     size_t cap) {
  size_t n = strlen(code), end = pysrc_group_end(code, n, open);
  const char *want = c->params[c->read_param];
  size_t pos = method && c->n_params && !strcmp(c->params[0], "self") ? 1 : 0;
  size_t a = open + 1;
  int level = 0, positional = 1;
  for (size_t j = a; j < end; j++) {
    char ch = code[j];
    if (ch == '(' || ch == '[' || ch == '{') level++;
    if (ch == ')' || ch == ']' || ch == '}') level--;
    if (!((ch == ',' && level == 0) || level < 0)) continue;
    const char *t = code + a;
    size_t len = j - a;
    size_t k = 0;
    while (k < len && word(t[k])) k++;
    if (k && k < len && t[k] == '=' && (k + 1 >= len || t[k + 1] != '=')) {
      if (k == strlen(want) && !memcmp(t, want, k)) {
        size_t m = len - k - 1 < cap - 1 ? len - k - 1 : cap - 1;
        memcpy(arg, t + k + 1, m);
        arg[m] = 0;
        return 1;
      }
    } else if (len && t[0] == '*') {
      positional = 0; /* an unpacked sequence: positions beyond are unknown */
    } else if (positional && len) {
      if (pos == (size_t)c->read_param) {
        size_t m = len < cap - 1 ? len : cap - 1;
        memcpy(arg, t, m);
        arg[m] = 0;
        return 1;
      }
      pos++;
    }
    a = j + 1;
    if (level < 0) break;
  }
  return 0;
}

/* The first call of c in the texts that trains on the whole stream and
 * does not follow scoring in its loop; fills c->t's call and stream. */
static int find_call(const vt_src *vs, size_t n, cand *c) {
  const char *name = c->t.func;
  size_t k = strlen(name);
  for (size_t ti = 0; ti < n; ti++) {
    const py_src *s = vs[ti].src;
    for (size_t i = 0; i < s->n; i++) {
      if (is_def(&s->v[i])) continue;
      const char *code = code_of(&vs[ti], i);
      size_t len = strlen(code);
      for (const char *p = strstr(code, name); p; p = strstr(p + 1, name)) {
        size_t at = (size_t)(p - code);
        if (!word_at(code, len, at, name, 1) || at + k >= len || code[at + k] != '(') continue;
        if (in_scoring_loop(&vs[ti], i)) break;
        char arg[256];
        if (c->read_param >= 0) {
          int method = at > 0 && code[at - 1] == '.';
          if (!bound_arg(code, at + k, c, method, arg, sizeof arg) ||
              !whole_stream(arg, strlen(arg), c->t.stream, sizeof c->t.stream))
            continue;
        }
        c->t.call_text = ti;
        c->t.call_line = s->v[i].line;
        c->blk_from = c->blk_to = 0;
        int32_t p0 = s->v[i].parent;
        if (p0 >= 0 && !is_def(&s->v[p0]) && !is_loop(&s->v[p0]) &&
            strcmp(pysrc_keyword(&s->v[p0]), "class")) {
          c->blk_from = (size_t)p0 + 1, c->blk_to = block_end(s, (size_t)p0);
          for (size_t j = c->blk_from; j < c->blk_to; j++)
            if (s->v[j].parent == p0) add_marks(&c->t, &s->v[j], code_of(&vs[ti], j));
        }
        return 1;
      }
    }
  }
  return 0;
}

/* Drop the marks of c that other code prints too: a log line either could
 * have printed (a score-first TTT beside a disabled pre-quant one, both
 * printing `ttt:start lr=`) shows neither ran. Two marks clash when one
 * begins the other. */
static void drop_shared_marks(const vt_src *vs, size_t n, cand *c) {
  val_trainer other;
  for (size_t ti = 0; ti < n && c->t.n_marks; ti++)
    for (size_t i = 0; i < vs[ti].src->n && c->t.n_marks; i++) {
      if (ti == c->t.text && i >= c->def_from && i < c->def_to) continue;
      if (ti == c->t.call_text && i >= c->blk_from && i < c->blk_to) continue;
      other.n_marks = 0;
      add_marks(&other, &vs[ti].src->v[i], code_of(&vs[ti], i));
      for (size_t o = 0; o < other.n_marks; o++)
        for (size_t k = 0; k < c->t.n_marks;) {
          size_t a = strlen(c->t.marks[k]), b = strlen(other.marks[o]);
          if (strncmp(c->t.marks[k], other.marks[o], a < b ? a : b)) {
            k++;
            continue;
          }
          memmove(c->t.marks[k], c->t.marks[k + 1], (c->t.n_marks - k - 1) * sizeof *c->t.marks);
          c->t.n_marks--;
        }
    }
}

size_t val_train_scan(const py_src *srcs, size_t n, val_trainer *out, size_t cap) {
  vt_src *vs = calloc(n ? n : 1, sizeof *vs);
  cand *c = malloc(sizeof *c);
  size_t found = 0;
  if (!vs || !c) goto done;
  for (size_t ti = 0; ti < n; ti++) {
    vs[ti].src = &srcs[ti];
    vs[ti].code = calloc(srcs[ti].n ? srcs[ti].n : 1, sizeof *vs[ti].code);
    if (!vs[ti].code) goto done;
    for (size_t i = 0; i < srcs[ti].n; i++)
      vs[ti].code[i] = pysrc_blank_strings(srcs[ti].v[i].text, srcs[ti].v[i].len);
  }
  for (size_t ti = 0; ti < n && found < cap; ti++)
    for (size_t d = 0; d < srcs[ti].n && found < cap; d++)
      if (is_def(&srcs[ti].v[d]) && trainer_at(&vs[ti], ti, d, c) && find_call(vs, n, c)) {
        drop_shared_marks(vs, n, c);
        out[found++] = c->t;
      }
done:
  if (vs)
    for (size_t ti = 0; ti < n; ti++) {
      if (!vs[ti].code) continue;
      for (size_t i = 0; i < srcs[ti].n; i++) free(vs[ti].code[i]);
      free(vs[ti].code);
    }
  free(vs);
  free(c);
  return found;
}

int val_train_mark_at(const val_trainer *t, const char *s, size_t len) {
  while (len && blank(*s)) s++, len--;
  for (size_t k = 0; k < t->n_marks; k++) {
    size_t m = strlen(t->marks[k]);
    if (m <= len && !memcmp(s, t->marks[k], m)) return (int)k;
  }
  return -1;
}
