/* Python statements from source text; see pysrc.h. */
#include "verifier/pysrc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

static int is_word(char c) { return isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80; }

static int is_prefix_char(char c) { return strchr("rRbBuUfF", c) != NULL && c; }

/* A string literal starts at i: an optional prefix of one or two letters
 * (r, b, u, f and their pairs) not glued to a preceding word, then a quote.
 * Returns the offset of the quote, or (size_t)-1. */
static size_t literal_quote(const char *t, size_t n, size_t i) {
  if (i > 0 && is_word(t[i - 1]) && t[i] != '"' && t[i] != '\'') return (size_t)-1;
  size_t q = i;
  while (q < n && q - i < 2 && is_prefix_char(t[q])) q++;
  if (q < n && (t[q] == '"' || t[q] == '\'')) return q;
  return (size_t)-1;
}

/* Past the end of the literal whose quote is at q; *nl counts the line
 * breaks inside it. An unterminated literal ends at the end of its line
 * (single quotes) or of the text (triple quotes). */
static size_t literal_end(const char *t, size_t n, size_t q, uint32_t *nl, size_t *body,
                          size_t *body_len) {
  char qc = t[q];
  int triple = q + 2 < n && t[q + 1] == qc && t[q + 2] == qc;
  size_t i = q + (triple ? 3 : 1);
  *body = i;
  while (i < n) {
    char c = t[i];
    if (c == '\\' && i + 1 < n) {
      if (t[i + 1] == '\n') (*nl)++;
      i += 2;
      continue;
    }
    if (c == '\n') {
      if (!triple) break;
      (*nl)++;
    }
    if (c == qc && (!triple || (i + 2 < n && t[i + 1] == qc && t[i + 2] == qc))) {
      *body_len = i - *body;
      return i + (triple ? 3 : 1);
    }
    i++;
  }
  *body_len = i - *body;
  return i;
}

int pysrc_next_string(const char *text, size_t n, size_t *pos, py_str *out) {
  for (size_t i = *pos; i < n; i++) {
    if (text[i] != '"' && text[i] != '\'') continue;
    size_t at = i;
    while (at > *pos && i - at < 2 && is_prefix_char(text[at - 1])) at--;
    if (at < i && at > 0 && is_word(text[at - 1])) at = i;
    uint32_t nl = 0;
    size_t body, len;
    size_t end = literal_end(text, n, i, &nl, &body, &len);
    *out = (py_str){text + body, len, at, end};
    *pos = end;
    return 1;
  }
  return 0;
}

int pysrc_word_char(char c) { return is_word(c); }

size_t pysrc_dotted_name(const char *t, size_t n, size_t *last) {
  size_t k = 0;
  *last = 0;
  if (!n || !is_word(t[0]) || isdigit((unsigned char)t[0])) return 0;
  while (k < n && (is_word(t[k]) || t[k] == '.')) {
    if (t[k] == '.') *last = k + 1;
    k++;
  }
  return *last == k ? 0 : k;
}

int pysrc_assignment(const py_stmt *s, size_t *target_len, size_t *last, size_t *value) {
  const char *t = s->text;
  if (s->header) return 0;
  size_t k = pysrc_dotted_name(t, s->len, last);
  if (!k) return 0;
  *target_len = k;
  if (t[k] == ':') { /* an annotation, up to the '=' outside its brackets */
    int depth = 0;
    for (k++; k < s->len; k++) {
      if (t[k] == '[' || t[k] == '(')
        depth++;
      else if (t[k] == ']' || t[k] == ')')
        depth--;
      else if (!depth && t[k] == '=')
        break;
    }
  }
  if (k >= s->len || t[k] != '=' || t[k + 1] == '=') return 0;
  *value = k + 1;
  return 1;
}

char *pysrc_blank_strings(const char *text, size_t n) {
  char *b = malloc(n + 1);
  if (!b) return NULL;
  memcpy(b, text, n);
  b[n] = 0;
  size_t pos = 0;
  py_str s;
  while (pysrc_next_string(b, n, &pos, &s))
    for (size_t i = s.at; i < s.end && i < n; i++) b[i] = ' ';
  return b;
}

/* ---- statement buffer ---- */

typedef struct lexer {
  const char *t;
  size_t n, i;
  uint32_t line;
  py_src *out;
  size_t cap;
  char *buf;
  size_t len, bcap;
  int pending_space;
  int oom;
} lexer;

static void put(lexer *L, const char *s, size_t k) {
  if (L->oom) return;
  if (PG_GROW(L->buf, L->bcap, L->len + k + 2, 256)) {
    L->oom = 1;
    return;
  }
  if (L->pending_space && L->len && is_word(L->buf[L->len - 1]) && k && is_word(s[0]))
    L->buf[L->len++] = ' ';
  L->pending_space = 0;
  /* A NUL byte (never valid Python) becomes a blank, so the text stays
   * one C string. */
  for (size_t j = 0; j < k; j++) L->buf[L->len + j] = s[j] ? s[j] : ' ';
  L->len += k;
}

/* Only string literals (and parentheses around them). */
static int only_strings(const char *text, size_t n) {
  size_t pos = 0, last = 0;
  py_str s;
  int any = 0;
  while (pysrc_next_string(text, n, &pos, &s)) {
    for (size_t i = last; i < s.at; i++)
      if (text[i] != '(' && text[i] != ')' && text[i] != ' ') return 0;
    last = s.end;
    any = 1;
  }
  for (size_t i = last; i < n; i++)
    if (text[i] != '(' && text[i] != ')' && text[i] != ' ') return 0;
  return any;
}

/* Words after which `(` opens a parenthesised expression, not a call:
 * there `(x,)` is a tuple and its comma matters. */
static const char *const paren_kw[] = {
    "if",  "elif", "while", "return", "yield", "in",   "not",    "and",  "or", "is",     "assert",
    "del", "for",  "else",  "lambda", "await", "from", "import", "with", "as", "except", "raise"};

/* 1 if a `(` after t[0..i) opens a call's (or a def's, a class's)
 * arguments: it follows a name that is no keyword, or a closing bracket. */
static int call_paren(const char *t, size_t i) {
  if (!i) return 0;
  if (t[i - 1] == ')' || t[i - 1] == ']') return 1;
  if (!is_word(t[i - 1])) return 0;
  size_t b = i;
  while (b > 0 && is_word(t[b - 1])) b--;
  for (size_t k = 0; k < sizeof paren_kw / sizeof *paren_kw; k++)
    if (strlen(paren_kw[k]) == i - b && !memcmp(t + b, paren_kw[k], i - b)) return 0;
  return 1;
}

/* Drop the comma before the `)` that closes a call's arguments, outside
 * string literals: `f(a,b,)` is `f(a,b)` (the trailing comma a formatter
 * such as black adds when it splits a call over lines), while `(x,)`, a
 * tuple, keeps it. buf[0..*len) in place. */
static void drop_call_commas(char *buf, size_t *len) {
  enum { MAXB = PYSRC_MAX_DEPTH };
  unsigned char call[MAXB];
  size_t depth = 0, o = 0, pos = 0, next_at = 0, next_end = 0;
  py_str s;
  int have = pysrc_next_string(buf, *len, &pos, &s);
  if (have) next_at = s.at, next_end = s.end;
  for (size_t i = 0; i < *len;) {
    if (have && i == next_at) { /* a literal: copied as it is */
      memmove(buf + o, buf + i, next_end - i);
      o += next_end - i;
      i = next_end;
      have = pysrc_next_string(buf, *len, &pos, &s); /* reads at and past pos, not yet written */
      if (have) next_at = s.at, next_end = s.end;
      continue;
    }
    char c = buf[i];
    if (c == '(' || c == '[' || c == '{') {
      if (depth < MAXB) call[depth] = c == '(' && call_paren(buf, o); /* buf[0..o): the output */
      depth++;
    } else if ((c == ')' || c == ']' || c == '}') && depth) {
      depth--;
    } else if (c == ',' && i + 1 < *len && buf[i + 1] == ')' && depth && depth <= MAXB &&
               call[depth - 1]) {
      i++;
      continue;
    }
    buf[o++] = buf[i++];
  }
  *len = o;
}

/* `from m import(a,b,)` is `from m import a,b`: the parentheses only let
 * the names span lines. buf[0..*len) in place. */
static void drop_import_parens(char *buf, size_t *len) {
  static const char from[] = "from ", imp[] = " import(";
  size_t n = *len;
  if (n < sizeof from || memcmp(buf, from, sizeof from - 1) || buf[n - 1] != ')') return;
  char *p = memmem(buf, n, imp, sizeof imp - 1);
  if (!p || memchr(buf, '\'', n) || memchr(buf, '"', n)) return;
  size_t open = (size_t)(p - buf) + sizeof imp - 2, end = n - 1;
  if (memchr(buf + open + 1, '(', end - open - 1) || memchr(buf + open + 1, ')', end - open - 1))
    return;
  if (end > open + 1 && buf[end - 1] == ',') end--; /* the trailing comma */
  buf[open] = ' ';                                  /* `import(a,b)` -> `import a,b` */
  *len = end;
}

/* Close the statement in the buffer (if any); returns its index or -1. */
static int32_t end_stmt(lexer *L, uint32_t line, uint32_t depth, int32_t parent, int header) {
  L->pending_space = 0;
  if (L->oom || !L->len) {
    L->len = 0;
    return -1;
  }
  if (PG_GROW(L->out->v, L->cap, L->out->n + 1, 256)) {
    L->oom = 1;
    return -1;
  }
  drop_call_commas(L->buf, &L->len);
  drop_import_parens(L->buf, &L->len);
  char *text = malloc(L->len + 1);
  if (!text) {
    L->oom = 1;
    return -1;
  }
  memcpy(text, L->buf, L->len);
  text[L->len] = 0;
  py_stmt *s = &L->out->v[L->out->n];
  *s = (py_stmt){line, depth, parent, header, only_strings(text, L->len), text, L->len};
  L->len = 0;
  return (int32_t)L->out->n++;
}

static const char *const compound_kw[] = {"if",    "elif", "else",  "for", "while", "with",
                                          "try",   "except", "finally", "def", "class", "async"};

static int word_at(const char *t, size_t n, size_t i, const char *w) {
  size_t k = strlen(w);
  return i + k <= n && memcmp(t + i, w, k) == 0 && (i + k == n || !is_word(t[i + k]));
}

static int starts_compound(const lexer *L) {
  for (size_t k = 0; k < sizeof compound_kw / sizeof *compound_kw; k++)
    if (word_at(L->t, L->n, L->i, compound_kw[k])) return 1;
  return 0;
}

/* Blanks and a comment up to the end of the physical line. */
static void skip_blanks(lexer *L) {
  while (L->i < L->n && (L->t[L->i] == ' ' || L->t[L->i] == '\t' || L->t[L->i] == '\f' ||
                         L->t[L->i] == '\r'))
    L->i++;
  if (L->i < L->n && L->t[L->i] == '#')
    while (L->i < L->n && L->t[L->i] != '\n') L->i++;
}

static int at_line_end(const lexer *L) { return L->i >= L->n || L->t[L->i] == '\n'; }

/* The context a simple statement is lexed in. */
typedef struct ctx {
  uint32_t line, depth;
  int32_t parent;
  int header, lambdas, brackets;
} ctx;

/* One token-ish step of a logical line: a literal, a blank run, a word or
 * a character. Returns 1 at the end of the logical line (the newline is
 * consumed), 0 otherwise. */
static int step(lexer *L, ctx *c) {
  const char *t = L->t;
  char ch = t[L->i];
  if (ch == '\n') {
    L->i++;
    L->line++;
    if (c->brackets > 0) {
      L->pending_space = 1;
      return 0;
    }
    return 1;
  }
  if (ch == ' ' || ch == '\t' || ch == '\f' || ch == '\r') {
    L->i++;
    L->pending_space = 1;
    return 0;
  }
  if (ch == '#') {
    while (L->i < L->n && t[L->i] != '\n') L->i++;
    return 0;
  }
  if (ch == '\\' && L->i + 1 < L->n && (t[L->i + 1] == '\n' || t[L->i + 1] == '\r')) {
    L->i += 1;
    if (t[L->i] == '\r') L->i++;
    if (L->i < L->n && t[L->i] == '\n') L->i++, L->line++;
    L->pending_space = 1;
    return 0;
  }
  size_t q = literal_quote(t, L->n, L->i);
  if (q != (size_t)-1) {
    uint32_t nl = 0;
    size_t body, blen;
    size_t end = literal_end(t, L->n, q, &nl, &body, &blen);
    put(L, t + L->i, end - L->i);
    L->i = end;
    L->line += nl;
    return 0;
  }
  if (is_word(ch)) {
    size_t k = L->i;
    while (k < L->n && is_word(t[k])) k++;
    if (c->header && !c->brackets && word_at(t, L->n, L->i, "lambda")) c->lambdas++;
    put(L, t + L->i, k - L->i);
    L->i = k;
    return 0;
  }
  if (strchr("([{", ch)) c->brackets++;
  if (strchr(")]}", ch) && c->brackets > 0) c->brackets--;
  put(L, &ch, 1);
  L->i++;
  return 0;
}

/* After a statement ends at ';' or a header's ':': start the next one on
 * the same line, or report the end of the logical line (1). */
static int next_on_line(lexer *L, ctx *c) {
  skip_blanks(L);
  if (at_line_end(L)) {
    if (L->i < L->n) L->i++, L->line++;
    return 1;
  }
  c->line = L->line;
  c->header = starts_compound(L);
  c->lambdas = 0;
  return 0;
}

/* Lex one logical line at L->i (its indentation already skipped). Returns
 * the index of a header that opens an indented block, else -1. */
static int32_t logical_line(lexer *L, uint32_t depth, int32_t parent) {
  ctx c = {L->line, depth, parent, starts_compound(L), 0, 0};
  while (L->i < L->n && !L->oom) {
    char ch = L->t[L->i];
    if (!c.brackets && ch == ';') {
      L->i++;
      end_stmt(L, c.line, c.depth, c.parent, 0);
      if (next_on_line(L, &c)) return -1;
      continue;
    }
    if (!c.brackets && ch == ':' && c.header && !(L->i + 1 < L->n && L->t[L->i + 1] == '=')) {
      if (c.lambdas) {
        c.lambdas--;
      } else {
        L->i++;
        int32_t h = end_stmt(L, c.line, c.depth, c.parent, 1);
        skip_blanks(L);
        if (at_line_end(L)) {
          if (L->i < L->n) L->i++, L->line++;
          return h;
        }
        c.parent = h;
        c.depth++;
        if (next_on_line(L, &c)) return -1;
        continue;
      }
    }
    if (step(L, &c)) break;
  }
  end_stmt(L, c.line, c.depth, c.parent, 0);
  return -1;
}

/* Indentation width of the physical line at L->i (tabs to the next
 * multiple of 8, as Python counts them); L->i moves past it. */
static uint32_t indentation(lexer *L) {
  uint32_t w = 0;
  while (L->i < L->n) {
    char c = L->t[L->i];
    if (c == ' ') w++;
    else if (c == '\t') w = (w / 8 + 1) * 8;
    else if (c == '\f') w = 0;
    else break;
    L->i++;
  }
  return w;
}

int pysrc_parse(const char *text, size_t len, const char *name, py_src *out, pg_error *err) {
  memset(out, 0, sizeof *out);
  if (len > PYSRC_MAX_BYTES)
    return pg_fail(err, name, -1, "Python source of %zu bytes is over the limit of %u bytes", len,
                   PYSRC_MAX_BYTES);
  lexer L = {.t = text, .n = len, .line = 1, .out = out};
  struct {
    uint32_t width;
    int32_t header;
  } stack[PYSRC_MAX_DEPTH];
  size_t ns = 0;
  while (L.i < L.n && !L.oom) {
    uint32_t w = indentation(&L);
    skip_blanks(&L);
    if (at_line_end(&L)) { /* blank or comment-only line */
      if (L.i < L.n) L.i++, L.line++;
      continue;
    }
    while (ns && stack[ns - 1].width >= w) ns--;
    int32_t opened = logical_line(&L, (uint32_t)ns, ns ? stack[ns - 1].header : -1);
    if (opened >= 0 && ns < PYSRC_MAX_DEPTH) {
      stack[ns].width = w;
      stack[ns].header = opened;
      ns++;
    }
  }
  free(L.buf);
  if (L.oom) {
    pysrc_free(out);
    return pg_fail(err, name, -1, "out of memory while reading Python source");
  }
  return 0;
}

void pysrc_free(py_src *s) {
  for (size_t i = 0; i < s->n; i++) free(s->v[i].text);
  free(s->v);
  memset(s, 0, sizeof *s);
}

const char *pysrc_keyword(const py_stmt *s) {
  static const char *const kw[] = {"if",     "elif",  "else",  "for", "while", "with",
                                   "try",    "except", "finally", "def", "class", "async",
                                   "import", "from"};
  for (size_t k = 0; k < sizeof kw / sizeof *kw; k++)
    if (word_at(s->text, strlen(s->text), 0, kw[k])) return kw[k];
  return "";
}

size_t pysrc_group_end(const char *t, size_t n, size_t i) {
  int level = 0;
  for (; i < n; i++) {
    if (t[i] == '(' || t[i] == '[' || t[i] == '{') level++;
    if ((t[i] == ')' || t[i] == ']' || t[i] == '}') && --level == 0) return i + 1;
  }
  return n;
}

int pysrc_target_name(const char *t, size_t n) {
  char w[64];
  size_t k = n < sizeof w - 1 ? n : sizeof w - 1;
  for (size_t x = 0; x < k; x++) w[x] = (char)tolower((unsigned char)t[x]);
  w[k] = 0;
  static const char *const pre[] = {"tgt", "target", "label", "nxt", "next_", "y_"};
  for (size_t x = 0; x < sizeof pre / sizeof *pre; x++)
    if (!strncmp(w, pre[x], strlen(pre[x]))) return 1;
  return !strcmp(w, "y");
}

void pysrc_cut(char *dst, size_t cap, const char *s) {
  size_t n = strlen(s);
  if (n < cap) {
    memcpy(dst, s, n + 1);
  } else {
    memcpy(dst, s, cap - 4);
    memcpy(dst + cap - 4, "...", 4);
  }
}
