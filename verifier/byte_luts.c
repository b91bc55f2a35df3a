/* The byte-table builders of a Python source, run on stand-in pieces
 * (verifier/byte_luts.h). An evaluator for the few statements and
 * expressions such builders use, over pysrc's normalized statements;
 * whatever it does not know is "unknown", which ends the kind's run. */
#include "verifier/byte_luts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The stand-in pieces; "\342\226\201" is U+2581 in UTF-8 (octal, since a
 * hex escape would run on into "abc"). */
const char *const byte_luts_kind_text[BL_KINDS] = {"abc", "\342\226\201abc", "<0x41>", "<s>",
                                                   "<unk>"};
const int byte_luts_official_base[BL_KINDS] = {3, 3, 1, 0, 0};

#define MAX_TABLES 12
#define MAX_LOCALS 48
#define MAX_STR 64
#define MAX_EVAL_DEPTH 64
#define MAX_STEPS 4096

typedef enum { V_UNK, V_INT, V_BOOL, V_STR, V_BYTES, V_TOK, V_NONE, V_TABLE, V_LIST, V_FUNC } vkind;

typedef struct val {
  vkind k;
  int64_t i;       /* V_INT, V_BOOL; V_TABLE: the table's index */
  char s[MAX_STR]; /* V_STR, V_BYTES: UTF-8 / raw bytes, NUL-terminated; V_FUNC: a builtin's name */
  size_t n;        /* their length in bytes */
  vkind ek;        /* V_LIST and a new table: the element's kind and value */
  int64_t ei;
} val;

typedef struct table {
  char name[BL_MAX_NAME];
  vkind k; /* the token's entry: set, or the initial value (V_UNK: none known) */
  int64_t i;
  int set;
  int other; /* stored at an index that is not the token: unknown */
  uint32_t line;
  char stmt[120];
} table;

typedef struct local {
  char name[BL_MAX_NAME];
  val v;
} local;

typedef struct run {
  const py_src *src;
  int kind;
  table tables[MAX_TABLES];
  size_t n_tables;
  local locals[MAX_LOCALS];
  size_t n_locals;
  int loops;   /* token loops entered */
  int asked;   /* the piece was asked for (id_to_piece) */
  int unknown; /* the run met something it cannot evaluate */
  int steps;
} run;

enum { FLOW_NEXT, FLOW_CONTINUE, FLOW_RETURN, FLOW_STOP };

static val unk(void) {
  val v;
  memset(&v, 0, sizeof v);
  v.k = V_UNK;
  return v;
}
static val mk_int(vkind k, int64_t i) {
  val v = unk();
  v.k = k;
  v.i = i;
  return v;
}
static val mk_str(vkind k, const char *s, size_t n) {
  if (n >= MAX_STR) return unk();
  val v = unk();
  v.k = k;
  memcpy(v.s, s, n);
  v.s[n] = 0;
  v.n = n;
  return v;
}
static int num_kind(vkind k) { return k == V_INT || k == V_BOOL; }
static int is_num(const val *v) { return num_kind(v->k); }
/* A number whose sums and products stay far inside int64: the counts a
 * builder makes are small; anything larger is no byte count. */
static int small(const val *v) { return is_num(v) && v->i > -(1 << 30) && v->i < (1 << 30); }
/* Truth: 1, 0, or -1 when unknown. */
static int truth(const val *v) {
  if (is_num(v)) return v->i != 0;
  if (v->k == V_STR || v->k == V_BYTES) return v->n != 0;
  if (v->k == V_NONE) return 0;
  return -1;
}

/* ---- names ---- */

static void copy_name(char *dst, const char *s, size_t n) {
  if (n >= BL_MAX_NAME) n = BL_MAX_NAME - 1;
  memcpy(dst, s, n);
  dst[n] = 0;
}
static table *find_table(run *r, const char *s, size_t n) {
  for (size_t i = 0; i < r->n_tables; i++)
    if (strlen(r->tables[i].name) == n && !memcmp(r->tables[i].name, s, n)) return &r->tables[i];
  return NULL;
}
static local *find_local(run *r, const char *s, size_t n) {
  for (size_t i = 0; i < r->n_locals; i++)
    if (strlen(r->locals[i].name) == n && !memcmp(r->locals[i].name, s, n)) return &r->locals[i];
  return NULL;
}
/* Bind a plain name: a new table when v is one, else a local. */
static void bind(run *r, const char *s, size_t n, val v, uint32_t line) {
  if (n == 0 || n >= BL_MAX_NAME) return;
  table *t = find_table(r, s, n);
  if (v.k == V_TABLE && v.i < 0) { /* a fresh array */
    if (!t && r->n_tables < MAX_TABLES) t = &r->tables[r->n_tables++];
    if (!t) return;
    memset(t, 0, sizeof *t);
    copy_name(t->name, s, n);
    t->k = v.ek;
    t->i = v.ei;
    t->line = line;
    return;
  }
  if (t) return; /* base = torch.tensor(base) after the loop: the same entries */
  local *l = find_local(r, s, n);
  if (!l && r->n_locals < MAX_LOCALS) {
    l = &r->locals[r->n_locals++];
    copy_name(l->name, s, n);
  }
  if (l) l->v = v;
}

/* ---- expressions ---- */

typedef struct cur {
  run *r;
  const char *t;
  size_t n, p;
  int depth;
} cur;

static int word_c(char c) { return pysrc_word_char(c); }
static void skip_blank(cur *c) {
  while (c->p < c->n && c->t[c->p] == ' ') c->p++;
}
static int peek_c(cur *c, char ch) {
  skip_blank(c);
  return c->p < c->n && c->t[c->p] == ch;
}
static int eat_c(cur *c, char ch) {
  if (!peek_c(c, ch)) return 0;
  c->p++;
  return 1;
}
/* The next token is the word w (not a prefix of a longer name). */
static int peek_word(cur *c, const char *w) {
  skip_blank(c);
  size_t k = strlen(w);
  return c->p + k <= c->n && !memcmp(c->t + c->p, w, k) &&
         (c->p + k == c->n || !word_c(c->t[c->p + k]));
}
static int eat_word(cur *c, const char *w) {
  if (!peek_word(c, w)) return 0;
  c->p += strlen(w);
  return 1;
}
static size_t name_len(cur *c) {
  skip_blank(c);
  size_t k = c->p;
  if (k >= c->n || !word_c(c->t[k]) || (c->t[k] >= '0' && c->t[k] <= '9')) return 0;
  while (k < c->n && word_c(c->t[k])) k++;
  return k - c->p;
}

static val expr(cur *c);

/* The offset just past a string literal whose quote is t[i], else i: the
 * walks over a statement's text step over strings whole. */
static size_t past_string(const char *t, size_t n, size_t i) {
  if (t[i] != '"' && t[i] != '\'') return i;
  size_t pos = i;
  py_str s;
  return pysrc_next_string(t, n, &pos, &s) && s.at == i ? s.end : i;
}

/* Bracket depth after t[i] (strings stepped over by the caller). */
static int depth_after(char ch, int level) {
  return level + (ch == '(' || ch == '[' || ch == '{') - (ch == ')' || ch == ']' || ch == '}');
}

/* Skip to the bracket that closes the one just opened (strings aware). */
static void skip_group(cur *c) {
  int level = 1;
  while (c->p < c->n && level > 0) {
    size_t e = past_string(c->t, c->n, c->p);
    if (e != c->p) {
      c->p = e;
      continue;
    }
    level = depth_after(c->t[c->p++], level);
  }
}

/* Append code point cp as UTF-8; 0 when it is none. */
static int put_utf8(char *out, size_t *o, unsigned long cp) {
  if (cp < 0x80) {
    out[(*o)++] = (char)cp;
  } else if (cp < 0x800) {
    out[(*o)++] = (char)(0xc0 | cp >> 6);
    out[(*o)++] = (char)(0x80 | (cp & 63));
  } else if (cp < 0x10000) {
    out[(*o)++] = (char)(0xe0 | cp >> 12);
    out[(*o)++] = (char)(0x80 | (cp >> 6 & 63));
    out[(*o)++] = (char)(0x80 | (cp & 63));
  } else if (cp < 0x110000) {
    out[(*o)++] = (char)(0xf0 | cp >> 18);
    out[(*o)++] = (char)(0x80 | (cp >> 12 & 63));
    out[(*o)++] = (char)(0x80 | (cp >> 6 & 63));
    out[(*o)++] = (char)(0x80 | (cp & 63));
  } else {
    return 0;
  }
  return 1;
}

/* A string literal's value: \u, \U and \x escapes and the simple ones decoded
 * (a raw string's body taken as it is); unknown when too long. */
static val string_lit(cur *c) {
  size_t pos = c->p;
  py_str s;
  if (!pysrc_next_string(c->t, c->n, &pos, &s) || s.at != c->p) return unk();
  int raw = 0, bytes = 0;
  for (size_t k = s.at; k < c->n && c->t[k] != '"' && c->t[k] != '\''; k++) {
    if (c->t[k] == 'r' || c->t[k] == 'R') raw = 1;
    if (c->t[k] == 'b' || c->t[k] == 'B') bytes = 1;
    if (c->t[k] == 'f' || c->t[k] == 'F') return c->p = s.end, unk();
  }
  c->p = s.end;
  char out[MAX_STR];
  size_t o = 0;
  for (size_t k = 0; k < s.len; k++) {
    if (o + 4 >= MAX_STR) return unk();
    char ch = s.body[k];
    if (ch != '\\' || raw || k + 1 >= s.len) {
      out[o++] = ch;
      continue;
    }
    char e = s.body[++k];
    unsigned long cp;
    char hex[9] = {0};
    size_t digits = e == 'u' ? 4 : e == 'U' ? 8 : e == 'x' ? 2 : 0;
    if (digits) {
      if (k + digits >= s.len) return unk();
      memcpy(hex, s.body + k + 1, digits);
      char *end;
      cp = strtoul(hex, &end, 16);
      if (*end) return unk();
      k += digits;
      if (e == 'x' && bytes)
        out[o++] = (char)cp;
      else if (!put_utf8(out, &o, cp))
        return unk();
      continue;
    }
    switch (e) {
    case 'n': out[o++] = '\n'; break;
    case 't': out[o++] = '\t'; break;
    case '\\':
    case '\'':
    case '"': out[o++] = e; break;
    default: return unk(); /* an escape the builders do not use */
    }
  }
  return mk_str(bytes ? V_BYTES : V_STR, out, o);
}

/* UTF-8 code points of s[0..n). */
static size_t code_points(const char *s, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (((unsigned char)s[i] & 0xc0) != 0x80) k++;
  return k;
}
/* Byte offset of code point i (clamped to n). */
static size_t cp_offset(const char *s, size_t n, int64_t i) {
  size_t at = 0;
  for (int64_t k = 0; k < i && at < n; k++) {
    at++;
    while (at < n && ((unsigned char)s[at] & 0xc0) == 0x80) at++;
  }
  return at;
}

/* v[a:b] or v[a] for a string or bytes (code points for a string). */
static val slice(const val *v, int has_a, int64_t a, int is_slice, int has_b, int64_t b) {
  if (v->k != V_STR && v->k != V_BYTES) return unk();
  int64_t len = v->k == V_STR ? (int64_t)code_points(v->s, v->n) : (int64_t)v->n;
  if (!has_a) a = 0;
  if (!has_b) b = len;
  if (a < 0) a += len;
  if (b < 0) b += len;
  if (a < 0) a = 0;
  if (b > len) b = len;
  if (!is_slice) {
    if (!has_a || a >= len) return unk(); /* IndexError: not a builder's path */
    if (v->k == V_BYTES) return mk_int(V_INT, (unsigned char)v->s[a]);
    b = a + 1;
  }
  if (b < a) b = a;
  size_t x = v->k == V_STR ? cp_offset(v->s, v->n, a) : (size_t)a;
  size_t y = v->k == V_STR ? cp_offset(v->s, v->n, b) : (size_t)b;
  return mk_str(v->k, v->s + x, y - x);
}

/* s.replace(a, b) and s.lstrip/rstrip/strip(chars). */
static val str_replace(const val *s, const val *a, const val *b) {
  if (s->k != a->k || s->k != b->k || a->n == 0) return unk();
  char out[MAX_STR];
  size_t o = 0;
  for (size_t i = 0; i < s->n;) {
    if (i + a->n <= s->n && !memcmp(s->s + i, a->s, a->n)) {
      if (o + b->n >= MAX_STR) return unk();
      memcpy(out + o, b->s, b->n), o += b->n, i += a->n;
    } else {
      if (o + 1 >= MAX_STR) return unk();
      out[o++] = s->s[i++];
    }
  }
  return mk_str(s->k, out, o);
}
static int in_chars(const char *set, size_t n, const char *s, size_t len) {
  for (size_t i = 0; i + len <= n;) {
    size_t l = 1;
    while (i + l < n && ((unsigned char)set[i + l] & 0xc0) == 0x80) l++;
    if (l == len && !memcmp(set + i, s, len)) return 1;
    i += l;
  }
  return 0;
}
static val str_strip(const val *s, const val *chars, int left, int right) {
  if (s->k != V_STR || (chars && chars->k != V_STR)) return unk();
  const char *set = chars ? chars->s : " \t\n\r\f\v";
  size_t sn = chars ? chars->n : 6;
  size_t a = 0, b = s->n;
  while (left && a < b) {
    size_t l = 1;
    while (a + l < b && ((unsigned char)s->s[a + l] & 0xc0) == 0x80) l++;
    if (!in_chars(set, sn, s->s + a, l)) break;
    a += l;
  }
  while (right && b > a) {
    size_t l = 1;
    while (b - l > a && ((unsigned char)s->s[b - l] & 0xc0) == 0x80) l++;
    if (!in_chars(set, sn, s->s + b - l, l)) break;
    b -= l;
  }
  return mk_str(V_STR, s->s + a, b - a);
}

static int is_utf8_name(const val *v) {
  return v->k == V_STR && (!strcmp(v->s, "utf-8") || !strcmp(v->s, "utf8") ||
                           !strcmp(v->s, "UTF-8") || !strcmp(v->s, "UTF8"));
}

/* The piece-type queries, by either API's spelling. */
static int type_query(const char *m, size_t n, int kind) {
  static const struct {
    const char *a, *b;
    int kind;
  } q[] = {{"is_control", "IsControl", BL_CONTROL},
           {"is_unknown", "IsUnknown", BL_UNKNOWN},
           {"is_byte", "IsByte", BL_BYTE},
           {"is_unused", "IsUnused", -1}};
  for (size_t i = 0; i < sizeof q / sizeof *q; i++)
    if ((strlen(q[i].a) == n && !memcmp(m, q[i].a, n)) ||
        (strlen(q[i].b) == n && !memcmp(m, q[i].b, n)))
      return q[i].kind == kind;
  return -1;
}
static int named(const char *m, size_t n, const char *w) {
  return strlen(w) == n && !memcmp(m, w, n);
}

/* A method call recv.m(args). */
static val method(cur *c, const val *recv, const char *m, size_t mn, val *a, int na) {
  int q = type_query(m, mn, c->r->kind);
  if (q >= 0) return na == 1 && a[0].k == V_TOK ? mk_int(V_BOOL, q) : unk();
  if (named(m, mn, "id_to_piece") || named(m, mn, "IdToPiece")) {
    if (na != 1 || a[0].k != V_TOK) return unk();
    c->r->asked = 1;
    const char *p = byte_luts_kind_text[c->r->kind];
    return mk_str(V_STR, p, strlen(p));
  }
  if (named(m, mn, "startswith") || named(m, mn, "endswith")) {
    if (na != 1 || a[0].k != recv->k || (recv->k != V_STR && recv->k != V_BYTES)) return unk();
    if (a[0].n > recv->n) return mk_int(V_BOOL, 0);
    size_t at = named(m, mn, "startswith") ? 0 : recv->n - a[0].n;
    return mk_int(V_BOOL, !memcmp(recv->s + at, a[0].s, a[0].n));
  }
  if (named(m, mn, "encode")) {
    if (recv->k != V_STR || na > 1 || (na == 1 && !is_utf8_name(&a[0]))) return unk();
    val v = *recv;
    v.k = V_BYTES;
    return v;
  }
  if (named(m, mn, "decode")) {
    if (recv->k != V_BYTES || na > 1 || (na == 1 && !is_utf8_name(&a[0]))) return unk();
    val v = *recv;
    v.k = V_STR;
    return v;
  }
  if (named(m, mn, "replace")) return na == 2 ? str_replace(recv, &a[0], &a[1]) : unk();
  if (named(m, mn, "lstrip") || named(m, mn, "rstrip") || named(m, mn, "strip")) {
    if (na > 1) return unk();
    return str_strip(recv, na ? &a[0] : NULL, m[0] != 'r', m[0] != 'l');
  }
  /* Arrays: np.zeros/ones/full, torch.zeros/ones/full (the receiver is a
   * module, so its value is unknown). */
  if (recv->k == V_UNK && (named(m, mn, "zeros") || named(m, mn, "ones") || named(m, mn, "full"))) {
    val v = mk_int(V_TABLE, -1);
    v.ek = V_INT;
    v.ei = m[0] == 'o';
    if (m[0] == 'f') {
      if (na < 2 || !is_num(&a[1])) return unk();
      v.ek = a[1].k;
      v.ei = a[1].i;
    }
    return v;
  }
  return unk();
}

/* The builtins call() knows, and range: a minifier's `M=range` makes M
 * one of them. */
static int builtin(const char *f, size_t n) {
  static const char *const b[] = {"len", "int", "float", "bool", "chr", "max", "min", "range"};
  for (size_t i = 0; i < sizeof b / sizeof *b; i++)
    if (named(f, n, b[i])) return 1;
  return 0;
}

/* A call of a plain function name f(args). */
static val call(const char *f, size_t fn, val *a, int na) {
  if (named(f, fn, "len") && na == 1) {
    if (a[0].k == V_BYTES) return mk_int(V_INT, (int64_t)a[0].n);
    if (a[0].k == V_STR) return mk_int(V_INT, (int64_t)code_points(a[0].s, a[0].n));
    return unk();
  }
  if (named(f, fn, "int") && na == 1 && a[0].k == V_TOK) return a[0]; /* int(tid) */
  if ((named(f, fn, "int") || named(f, fn, "float")) && na == 1 && is_num(&a[0]))
    return mk_int(V_INT, a[0].i);
  if (named(f, fn, "bool") && na == 1 && truth(&a[0]) >= 0) return mk_int(V_BOOL, truth(&a[0]));
  if ((named(f, fn, "max") || named(f, fn, "min")) && na >= 1 && na <= 4) {
    val v = a[0];
    for (int i = 0; i < na; i++) {
      if (!small(&a[i])) return unk();
      if (f[1] == 'a' ? a[i].i > v.i : a[i].i < v.i) v = a[i];
    }
    return mk_int(V_INT, v.i);
  }
  if (named(f, fn, "chr") && na == 1 && a[0].k == V_INT && a[0].i >= 0) {
    char out[4];
    size_t o = 0;
    return put_utf8(out, &o, (unsigned long)a[0].i) ? mk_str(V_STR, out, o) : unk();
  }
  return unk();
}

/* Arguments up to ')'; keyword arguments (`dtype=...`) are skipped, as
 * the builders pass only dtypes and devices that way. */
static int args(cur *c, val *a, int max) {
  int na = 0;
  while (!peek_c(c, ')') && c->p < c->n) {
    size_t k = name_len(c);
    if (k && c->p + k < c->n && c->t[c->p + k] == '=' &&
        (c->p + k + 1 >= c->n || c->t[c->p + k + 1] != '=')) {
      c->p += k + 1;
      (void)expr(c);
    } else {
      val v = expr(c);
      if (na < max) a[na] = v;
      na++;
    }
    if (!eat_c(c, ',')) break;
  }
  eat_c(c, ')');
  return na;
}

static val atom(cur *c) {
  skip_blank(c);
  if (c->p >= c->n) return unk();
  char ch = c->t[c->p];
  if (ch == '(') {
    c->p++;
    val v = expr(c);
    if (eat_c(c, ')')) return v;
    skip_group(c); /* a tuple: not a value the builders use */
    return unk();
  }
  if (ch == '[') { /* [x] (for [x]*n); anything else is unknown */
    c->p++;
    val v = expr(c);
    if (eat_c(c, ']')) {
      val l = mk_int(V_LIST, 0);
      l.ek = v.k;
      l.ei = v.i;
      return is_num(&v) ? l : unk();
    }
    skip_group(c);
    return unk();
  }
  if (ch == '{') {
    c->p++;
    skip_group(c);
    val v = mk_int(V_TABLE, -1); /* a dict: no initial value */
    v.ek = V_UNK;
    return v;
  }
  if (ch >= '0' && ch <= '9') {
    char *end;
    int hex = ch == '0' && c->p + 1 < c->n && (c->t[c->p + 1] == 'x' || c->t[c->p + 1] == 'X');
    long long x = strtoll(c->t + c->p, &end, hex ? 16 : 10);
    size_t k = (size_t)(end - (c->t + c->p));
    c->p += k;
    if (c->p < c->n && (word_c(c->t[c->p]) || c->t[c->p] == '.')) { /* 1.0, 0x1, 1e3 */
      while (c->p < c->n && (word_c(c->t[c->p]) || c->t[c->p] == '.')) c->p++;
      return unk();
    }
    return mk_int(V_INT, x);
  }
  if (ch == '"' || ch == '\'') return string_lit(c);
  size_t k = name_len(c);
  if (!k) {
    c->p++;
    return unk();
  }
  const char *nm = c->t + c->p;
  if (c->p + k < c->n && (c->t[c->p + k] == '"' || c->t[c->p + k] == '\'') && k <= 2)
    return string_lit(c); /* b"..", r'..' */
  c->p += k;
  if (named(nm, k, "True")) return mk_int(V_BOOL, 1);
  if (named(nm, k, "False")) return mk_int(V_BOOL, 0);
  if (named(nm, k, "None")) return mk_int(V_NONE, 0);
  local *l = find_local(c->r, nm, k);
  if (peek_c(c, '(')) { /* a plain function, or a name a minifier gave a builtin */
    c->p++;
    val a[4];
    int na = args(c, a, 4);
    if (na > 4) return unk();
    if (l) return l->v.k == V_FUNC ? call(l->v.s, strlen(l->v.s), a, na) : unk();
    return call(nm, k, a, na);
  }
  table *t = find_table(c->r, nm, k);
  if (t) return mk_int(V_TABLE, t - c->r->tables);
  if (l) return l->v;
  return builtin(nm, k) ? mk_str(V_FUNC, nm, k) : unk();
}

static val postfix(cur *c) {
  val v = atom(c);
  for (;;) {
    if (eat_c(c, '.')) {
      size_t k = name_len(c);
      if (!k) return unk();
      const char *m = c->t + c->p;
      c->p += k;
      if (eat_c(c, '(')) {
        val a[4];
        int na = args(c, a, 4);
        v = na > 4 ? unk() : method(c, &v, m, k, a, na);
      } else {
        v = unk(); /* an attribute */
      }
    } else if (eat_c(c, '[')) {
      int has_a = 0, has_b = 0, is_slice = 0;
      val a = unk(), b = unk();
      if (!peek_c(c, ':')) has_a = 1, a = expr(c);
      if (eat_c(c, ':')) {
        is_slice = 1;
        if (!peek_c(c, ']')) has_b = 1, b = expr(c);
      }
      if (!eat_c(c, ']')) {
        skip_group(c);
        return unk();
      }
      if (v.k == V_TABLE && !is_slice && a.k == V_TOK) {
        const table *t = &c->r->tables[v.i];
        v = t->other ? unk() : mk_int(t->k, t->i);
        continue;
      }
      if ((has_a && a.k != V_INT) || (has_b && b.k != V_INT)) return unk();
      v = slice(&v, has_a, a.i, is_slice, has_b, b.i);
    } else if (peek_c(c, '(')) {
      c->p++;
      skip_group(c);
      v = unk();
    } else {
      return v;
    }
  }
}

static val unary(cur *c) {
  if (eat_c(c, '-')) {
    val v = unary(c);
    return small(&v) ? mk_int(V_INT, -v.i) : unk();
  }
  if (eat_c(c, '+')) return unary(c);
  if (eat_c(c, '~')) {
    val v = unary(c);
    return v.k == V_BOOL ? mk_int(V_BOOL, !v.i) : unk();
  }
  return postfix(c);
}

static int peek_op(cur *c, const char *op) {
  skip_blank(c);
  size_t k = strlen(op);
  if (c->p + k > c->n || memcmp(c->t + c->p, op, k)) return 0;
  /* '*' is not '**', '+' is not '+=' */
  if (c->p + k < c->n && (c->t[c->p + k] == '=' || (k == 1 && c->t[c->p + k] == op[0]))) return 0;
  return 1;
}

static val term(cur *c) {
  val v = unary(c);
  while (peek_op(c, "*") || peek_op(c, "/") || peek_op(c, "%") || peek_op(c, "//")) {
    char op = c->t[c->p];
    c->p += peek_op(c, "//") ? 2 : 1;
    val w = unary(c);
    if (op == '*' && v.k == V_LIST) { /* [x] * n: an array of x */
      val t = mk_int(V_TABLE, -1);
      t.ek = v.ek;
      t.ei = v.ei;
      v = t;
    } else if (op == '*' && small(&v) && small(&w)) {
      v = mk_int(V_INT, v.i * w.i);
    } else {
      v = unk();
    }
  }
  return v;
}

static val arith(cur *c) {
  val v = term(c);
  while (peek_op(c, "+") || peek_op(c, "-")) {
    char op = c->t[c->p++];
    val w = term(c);
    if (small(&v) && small(&w))
      v = mk_int(V_INT, op == '+' ? v.i + w.i : v.i - w.i);
    else if (op == '+' && v.k == w.k && (v.k == V_STR || v.k == V_BYTES) && v.n + w.n < MAX_STR) {
      memcpy(v.s + v.n, w.s, w.n + 1);
      v.n += w.n;
    } else
      v = unk();
  }
  return v;
}

static val bitwise(cur *c) {
  val v = arith(c);
  while (peek_op(c, "&") || peek_op(c, "|")) {
    char op = c->t[c->p++];
    val w = arith(c);
    v = v.k == V_BOOL && w.k == V_BOOL ? mk_int(V_BOOL, op == '&' ? v.i && w.i : v.i || w.i)
                                       : unk();
  }
  return v;
}

static int equal(const val *a, const val *b) {
  if (is_num(a) && is_num(b)) return a->i == b->i;
  if ((a->k == V_STR || a->k == V_BYTES) && a->k == b->k)
    return a->n == b->n && !memcmp(a->s, b->s, a->n);
  if (a->k == V_NONE || b->k == V_NONE)
    return a->k == b->k ? 1 : (a->k == V_UNK || b->k == V_UNK) ? -1 : 0;
  return -1;
}

static val comparison(cur *c) {
  val v = bitwise(c);
  for (;;) {
    int neg;
    if (peek_op(c, "==") || peek_op(c, "!=")) {
      neg = c->t[c->p] == '!';
      c->p += 2;
      val w = bitwise(c);
      int e = equal(&v, &w);
      v = e < 0 ? unk() : mk_int(V_BOOL, neg ? !e : e);
    } else if (peek_word(c, "in") || (peek_word(c, "not") && !strncmp(c->t + c->p, "not in", 6))) {
      neg = eat_word(c, "not");
      eat_word(c, "in");
      val w = bitwise(c);
      if (v.k == V_STR && w.k == V_STR)
        v = mk_int(V_BOOL, (strstr(w.s, v.s) != NULL) != neg);
      else
        v = unk();
    } else if (peek_word(c, "is")) {
      eat_word(c, "is");
      neg = eat_word(c, "not");
      val w = bitwise(c);
      int e = (v.k == V_NONE || w.k == V_NONE) ? equal(&v, &w) : -1;
      v = e < 0 ? unk() : mk_int(V_BOOL, neg ? !e : e);
    } else if (peek_c(c, '<') || peek_c(c, '>')) {
      int lt = c->t[c->p] == '<';
      c->p++;
      int eq = eat_c(c, '=');
      val w = bitwise(c);
      if (is_num(&v) && is_num(&w))
        v = mk_int(V_BOOL, lt ? (eq ? v.i <= w.i : v.i < w.i) : (eq ? v.i >= w.i : v.i > w.i));
      else
        v = unk();
    } else {
      return v;
    }
  }
}

static val not_expr(cur *c) {
  if (eat_word(c, "not")) {
    val v = not_expr(c);
    int t = truth(&v);
    return t < 0 ? unk() : mk_int(V_BOOL, !t);
  }
  return comparison(c);
}

/* `a and b`, `a or b`: Python's values (the deciding operand), with an
 * unknown operand deciding nothing. */
static val and_expr(cur *c) {
  val v = not_expr(c);
  while (eat_word(c, "and")) {
    val w = not_expr(c);
    int t = truth(&v);
    v = t == 0 ? v : t == 1 ? w : (truth(&w) == 0 ? w : unk());
  }
  return v;
}
static val or_expr(cur *c) {
  val v = and_expr(c);
  while (eat_word(c, "or")) {
    val w = and_expr(c);
    int t = truth(&v);
    v = t == 1 ? v : t == 0 ? w : (truth(&w) == 1 ? w : unk());
  }
  return v;
}

static val expr(cur *c) {
  if (++c->depth > MAX_EVAL_DEPTH || ++c->r->steps > MAX_STEPS * 16) {
    c->p = c->n;
    c->depth--;
    return unk();
  }
  if (eat_word(c, "lambda")) {
    c->p = c->n;
    c->depth--;
    return unk();
  }
  val v = or_expr(c);
  if (eat_word(c, "if")) {
    val cond = or_expr(c);
    val w = eat_word(c, "else") ? expr(c) : unk();
    int t = truth(&cond);
    v = t == 1 ? v : t == 0 ? w : unk();
  }
  c->depth--;
  return v;
}

static val eval_text(run *r, const char *t, size_t n) {
  cur c = {r, t, n, 0, 0};
  val v = expr(&c);
  skip_blank(&c);
  if (c.p != c.n) return unk(); /* a form it did not read to the end: a tuple, a generator */
  return v;
}

/* ---- statements ---- */

/* The offset of the statement's top-level assignment '=' (or the '=' of
 * an augmented one, with *aug its operator), or 0 when it is none. */
static size_t assign_at(const char *t, size_t n, char *aug) {
  int level = 0;
  *aug = 0;
  for (size_t i = 0; i < n; i++) {
    size_t e = past_string(t, n, i);
    if (e != i) {
      i = e - 1;
      continue;
    }
    char ch = t[i];
    level = depth_after(ch, level);
    if (level || ch != '=' || i == 0) continue;
    if (i + 1 < n && t[i + 1] == '=') return 0; /* '==' at top level: no assignment */
    char p = t[i - 1];
    if (p == '=' || p == '!' || p == '<' || p == '>') return 0;
    if (strchr("+-*/%&|^@", p)) *aug = p;
    if (*aug && i < 2) return 0; /* `+= x`: no target */
    return i;
  }
  return 0;
}

/* The top-level commas of t[0..n) (not inside brackets or strings):
 * their offsets in at[], up to max; returns their count (max + 1 when
 * there are more). */
static size_t top_commas(const char *t, size_t n, size_t *at, size_t max) {
  size_t k = 0;
  int level = 0;
  for (size_t i = 0; i < n; i++) {
    size_t e = past_string(t, n, i);
    if (e != i) {
      i = e - 1;
      continue;
    }
    char ch = t[i];
    level = depth_after(ch, level);
    if (ch == ',' && level == 0) {
      if (k == max) return max + 1;
      at[k++] = i;
    }
  }
  return k;
}

/* Store v (aug: an augmented assignment's operator, else 0) into the one
 * target t[0..tlen) of statement s: a name, table[token], or something
 * whose names become unknown. */
static void store(run *r, const py_stmt *s, const char *t, size_t tlen, char aug, val v) {
  cur c = {r, t, tlen, 0, 0};
  size_t k = name_len(&c);
  size_t at = c.p; /* the name's offset after blanks */
  t += at;
  tlen -= at;
  if (k == tlen || (k && t[k] == ':')) { /* x = v, x: T = v */
    if (aug) {
      local *l = find_local(r, t, k);
      val old = l ? l->v : unk();
      v = (aug == '+' && small(&old) && small(&v)) ? mk_int(V_INT, old.i + v.i) : unk();
    }
    bind(r, t, k, v, s->line);
    return;
  }
  table *tb = k ? find_table(r, t, k) : NULL;
  if (!tb && k) { /* a local naming a table: lut = base_bytes */
    local *l = find_local(r, t, k);
    if (l && l->v.k == V_TABLE && l->v.i >= 0) tb = &r->tables[l->v.i];
  }
  if (tb && t[k] == '[' && t[tlen - 1] == ']') { /* table[index] = v */
    val idx = eval_text(r, t + k + 1, tlen - k - 2);
    if (idx.k != V_TOK) {
      tb->other = 1;
      return;
    }
    if (aug) {
      val old = mk_int(tb->k, tb->i);
      v = (aug == '+' && small(&old) && small(&v))     ? mk_int(V_INT, old.i + v.i)
          : (aug == '|' && is_num(&old) && is_num(&v)) ? mk_int(V_BOOL, old.i || v.i)
                                                       : unk();
    }
    if (!is_num(&v)) v = unk();
    tb->k = v.k;
    tb->i = v.i;
    tb->set = 1;
    tb->line = s->line;
    pysrc_cut(tb->stmt, sizeof tb->stmt, s->text);
    return;
  }
  /* an attribute, a slice, a nested tuple: the names it binds are unknown */
  for (size_t i = 0; i < tlen;) {
    c.t = t;
    c.n = tlen;
    c.p = i;
    size_t w = name_len(&c);
    if (!w) {
      i++;
      continue;
    }
    i = c.p + w;
    if (i < tlen && (t[i] == '.' || t[i] == '[')) {
      size_t j = i;
      while (j < tlen && t[j] != ',') j++;
      table *tt = find_table(r, t + c.p, w);
      if (tt) tt->other = 1;
      i = j;
      continue;
    }
    bind(r, t + c.p, w, unk(), s->line);
  }
}

#define MAX_TUPLE 8

/* One assignment statement: `a = v`, `a[i] += v`, and `a, b = x, y` (the
 * right side evaluated before any target is stored, as Python does). */
static void assign(run *r, const py_stmt *s) {
  char aug;
  size_t eq = assign_at(s->text, s->len, &aug);
  if (!eq) return; /* a call, an assert: no binding the tables depend on */
  size_t tlen = aug ? eq - 1 : eq;
  const char *rhs = s->text + eq + 1;
  size_t rlen = s->len - eq - 1;
  size_t tc[MAX_TUPLE], rc[MAX_TUPLE];
  size_t nt = top_commas(s->text, tlen, tc, MAX_TUPLE);
  if (!aug && nt > 0 && nt <= MAX_TUPLE && top_commas(rhs, rlen, rc, MAX_TUPLE) == nt) {
    val v[MAX_TUPLE + 1];
    for (size_t i = 0; i <= nt; i++) {
      size_t a = i ? rc[i - 1] + 1 : 0, b = i < nt ? rc[i] : rlen;
      v[i] = eval_text(r, rhs + a, b - a);
    }
    for (size_t i = 0; i <= nt; i++) {
      size_t a = i ? tc[i - 1] + 1 : 0, b = i < nt ? tc[i] : tlen;
      store(r, s, s->text + a, b - a, 0, v[i]);
    }
    return;
  }
  store(r, s, s->text, tlen, aug, eval_text(r, rhs, rlen));
}

static int exec_body(run *r, size_t h);

static int starts_word(const char *t, const char *w) {
  size_t k = strlen(w);
  return !strncmp(t, w, k) && !word_c(t[k]);
}

/* Is header h's body one `raise` statement? */
static int only_raises(const py_src *src, size_t h) {
  size_t n = 0, first = 0;
  for (size_t j = h + 1; j < src->n && src->v[j].depth > src->v[h].depth; j++)
    if (!n++) first = j;
  return n == 1 && starts_word(src->v[first].text, "raise");
}

/* Does loop h's body ask for pieces or their types? Then it is the token
 * loop (or one pgolf cannot read). */
static int asks_pieces(const py_src *src, size_t h) {
  static const char *const calls[] = {"id_to_piece(", "IdToPiece(", "is_control(", "IsControl(",
                                      "is_byte(",     "IsByte(",    "is_unknown(", "IsUnknown("};
  for (size_t j = h + 1; j < src->n && src->v[j].depth > src->v[h].depth; j++)
    for (size_t k = 0; k < sizeof calls / sizeof *calls; k++)
      if (strstr(src->v[j].text, calls[k])) return 1;
  return 0;
}

/* A loop that is not the token loop (over parameters, shards, warmup
 * steps): not run; a table it stores into becomes unknown. */
static int skip_loop(run *r, size_t h) {
  const py_src *src = r->src;
  for (size_t j = h + 1; j < src->n && src->v[j].depth > src->v[h].depth; j++) {
    const char *t = src->v[j].text;
    char aug;
    size_t eq = assign_at(t, src->v[j].len, &aug);
    for (size_t i = 0; eq && i < r->n_tables; i++) {
      size_t k = strlen(r->tables[i].name);
      const char *p = strstr(t, r->tables[i].name);
      if (p && p < t + eq && (p == t || !word_c(p[-1])) && !word_c(p[k])) r->tables[i].other = 1;
    }
  }
  return FLOW_NEXT;
}

/* Execute statement j (a child of some header). */
static int exec_stmt(run *r, size_t j, int *chain) {
  const py_stmt *s = &r->src->v[j];
  if (++r->steps > MAX_STEPS) return r->unknown = 1, FLOW_STOP;
  const char *kw = pysrc_keyword(s);
  if (!strcmp(kw, "elif") || !strcmp(kw, "else")) {
    if (*chain == 1) return FLOW_NEXT; /* an earlier branch ran */
    if (*chain != 0) return r->unknown = 1, FLOW_STOP;
    if (!strcmp(kw, "else")) return *chain = 1, exec_body(r, j);
  }
  if (!strcmp(kw, "if") || !strcmp(kw, "elif")) {
    size_t off = kw[0] == 'i' && kw[1] == 'f' ? 2 : 4;
    val c = eval_text(r, s->text + off, s->len - off);
    int t = truth(&c);
    if (t < 0 && only_raises(r->src, j)) t = 0; /* the tables exist only if it does not */
    if (t < 0) return r->unknown = 1, FLOW_STOP;
    *chain = t;
    return t ? exec_body(r, j) : FLOW_NEXT;
  }
  *chain = -1;
  if (!strcmp(kw, "for")) {
    /* for NAME in range(...): the token loop, run once on the stand-in */
    const char *in = strstr(s->text, " in ");
    if (!in) return r->unknown = 1, FLOW_STOP;
    const char *it = in + 4, *paren = strchr(it, '(');
    const local *alias = paren ? find_local(r, it, (size_t)(paren - it)) : NULL;
    int is_range = !strncmp(it, "range(", 6) && !alias;
    if (alias && alias->v.k == V_FUNC && !strcmp(alias->v.s, "range")) is_range = 1;
    if (!asks_pieces(r->src, j)) return skip_loop(r, j); /* not the token loop */
    if (!is_range || r->loops) return r->unknown = 1, FLOW_STOP;
    size_t k = (size_t)(in - s->text) - 4;
    const char *nm = s->text + 4;
    for (size_t i = 0; i < k; i++)
      if (!word_c(nm[i])) return r->unknown = 1, FLOW_STOP;
    r->loops++;
    bind(r, nm, k, mk_int(V_TOK, 0), s->line);
    int f = exec_body(r, j);
    return f == FLOW_CONTINUE ? FLOW_NEXT : f;
  }
  if (!strcmp(kw, "while") || !strcmp(kw, "async") || !strcmp(kw, "class"))
    return r->unknown = 1, FLOW_STOP;
  if (!strcmp(kw, "def") || !strcmp(kw, "except")) return FLOW_NEXT;
  if (!strcmp(kw, "try") || !strcmp(kw, "with") || !strcmp(kw, "finally")) return exec_body(r, j);
  if (!strcmp(kw, "import") || !strcmp(kw, "from")) return FLOW_NEXT;
  if (!strcmp(s->text, "continue")) return FLOW_CONTINUE;
  if (!strcmp(s->text, "break") || starts_word(s->text, "raise") || starts_word(s->text, "yield"))
    return r->unknown = 1, FLOW_STOP;
  if (starts_word(s->text, "return")) return FLOW_RETURN;
  if (s->header) return r->unknown = 1, FLOW_STOP;
  assign(r, s);
  return FLOW_NEXT;
}

/* Run header h's body: its children in order. */
static int exec_body(run *r, size_t h) {
  const py_src *src = r->src;
  int chain = -1;
  for (size_t j = h + 1; j < src->n && src->v[j].depth > src->v[h].depth; j++) {
    if (src->v[j].parent != (int32_t)h) continue;
    int f = exec_stmt(r, j, &chain);
    if (f != FLOW_NEXT) return f;
  }
  return FLOW_NEXT;
}

/* ---- the builders ---- */

/* Does def d's body ask for pieces and store into a subscript? */
static int looks_like_builder(const py_src *src, size_t d) {
  int piece = 0, store = 0;
  for (size_t j = d + 1; j < src->n && src->v[j].depth > src->v[d].depth; j++) {
    const char *t = src->v[j].text;
    if (strstr(t, "id_to_piece(") || strstr(t, "IdToPiece(")) piece = 1;
    char aug;
    size_t eq = assign_at(t, src->v[j].len, &aug);
    if (eq && t[eq - 1 - (aug != 0)] == ']') store = 1;
  }
  return piece && store;
}

/* The index of the space table in d's returned tuple, -1 if unknown. */
static int space_position(const py_src *src, size_t d, const char *space) {
  long ret = -1;
  for (size_t j = d + 1; j < src->n && src->v[j].depth > src->v[d].depth; j++)
    if (!strncmp(src->v[j].text, "return", 6) && !word_c(src->v[j].text[6])) ret = (long)j;
  if (ret < 0 || !space[0]) return -1;
  const char *t = src->v[ret].text + 6;
  while (*t == ' ') t++;
  size_t n = strlen(t);
  if (n >= 2 && t[0] == '(' && t[n - 1] == ')') t++, n -= 2;
  int pos = 0, level = 0;
  size_t sl = strlen(space);
  for (size_t i = 0; i < n; i++) {
    if (t[i] == '(' || t[i] == '[') level++;
    if (t[i] == ')' || t[i] == ']') level--;
    if (t[i] == ',' && level == 0) pos++;
    if (i + sl <= n && !memcmp(t + i, space, sl) && (i == 0 || !word_c(t[i - 1])) &&
        (i + sl == n || !word_c(t[i + sl])))
      return pos;
  }
  return -1;
}

/* Does a statement of def d's body use the name s[0..k)? */
static int used_in(const py_src *src, size_t d, const char *s, size_t k) {
  for (size_t j = d + 1; j < src->n && src->v[j].depth > src->v[d].depth; j++)
    for (const char *p = src->v[j].text; *p; p++)
      if (!strncmp(p, s, k) && (p == src->v[j].text || !word_c(p[-1])) && !word_c(p[k])) return 1;
  return 0;
}

/* The module's constants the builder def d uses, as a minifier leaves
 * them (`_C=False`, `_I='utf-8'`): each top-level `NAME=EXPR` whose
 * value is a number, a string, None or a builtin (`M=range`), the last one standing; anything else
 * unbinds the name. They are the builder's starting locals. */
static void module_constants(run *r, size_t d) {
  const py_src *src = r->src;
  for (size_t j = 0; j < src->n; j++) {
    const py_stmt *s = &src->v[j];
    if (s->parent >= 0 || s->header) continue;
    char aug;
    size_t eq = assign_at(s->text, s->len, &aug);
    if (!eq || aug) continue;
    cur c = {r, s->text, eq, 0, 0};
    size_t k = name_len(&c);
    if (k != eq || !used_in(src, d, s->text, k)) continue;
    val v = eval_text(r, s->text + eq + 1, s->len - eq - 1);
    if (!is_num(&v) && v.k != V_STR && v.k != V_BYTES && v.k != V_NONE && v.k != V_FUNC) v = unk();
    bind(r, s->text, k, v, s->line);
  }
  r->steps = 0;
}

static void run_kind(const py_src *src, size_t d, int kind, run *r) {
  memset(r, 0, sizeof *r);
  r->src = src;
  r->kind = kind;
  module_constants(r, d);
  exec_body(r, d);
}

static void read_roles(const py_src *src, size_t d, const run *runs, byte_lut_fn *fn);

static void read_builder(const py_src *src, size_t d, byte_lut_fn *fn) {
  memset(fn, 0, sizeof *fn);
  const py_stmt *def = &src->v[d];
  size_t k = 4;
  while (k < def->len && word_c(def->text[k])) k++;
  copy_name(fn->name, def->text + 4, k - 4);
  fn->line = fn->end_line = def->line;
  for (size_t j = d + 1; j < src->n && src->v[j].depth > def->depth; j++)
    fn->end_line = src->v[j].line;
  fn->space_pos = -1;
  for (size_t j = d + 1; j < src->n && src->v[j].depth > def->depth && !fn->test_line; j++)
    if (strstr(src->v[j].text, "startswith(")) {
      fn->test_line = src->v[j].line;
      pysrc_cut(fn->test_stmt, sizeof fn->test_stmt, src->v[j].text);
    }
  for (int kind = 0; kind < BL_KINDS; kind++) fn->base[kind] = BL_UNSET;
  run *runs = malloc(BL_KINDS * sizeof *runs); /* about 12 KB each */
  if (!runs) return;
  for (int kind = 0; kind < BL_KINDS; kind++) run_kind(src, d, kind, &runs[kind]);
  read_roles(src, d, runs, fn);
  free(runs);
}

/* The tables' roles from the plain and word-initial runs, then each
 * kind's base bytes. */
static void read_roles(const py_src *src, size_t d, const run *runs, byte_lut_fn *fn) {
  const run *plain = &runs[BL_PLAIN], *space = &runs[BL_SPACE];
  if (plain->unknown || !plain->asked) return;
  /* The roles, from the plain and word-initial runs. */
  const table *base = NULL, *sp = NULL;
  for (size_t i = 0; i < plain->n_tables; i++) {
    const table *t = &plain->tables[i];
    if (t->other || !num_kind(t->k)) continue;
    if (t->i == 3 && !base) base = t;
  }
  if (!base) return;
  copy_name(fn->base_table, base->name, strlen(base->name));
  if (!space->unknown)
    for (size_t i = 0; i < plain->n_tables && i < space->n_tables; i++) {
      const table *a = &plain->tables[i], *b = &space->tables[i];
      if (a == base || strcmp(a->name, b->name) || a->other || b->other) continue;
      if (num_kind(a->k) && num_kind(b->k) && a->i == 0 && b->i == 1) {
        sp = a;
        break;
      }
    }
  if (sp) copy_name(fn->space_table, sp->name, strlen(sp->name));
  for (int kind = 0; kind < BL_KINDS; kind++) {
    const run *r = &runs[kind];
    if (r->unknown) continue;
    const table *t = NULL;
    for (size_t i = 0; i < r->n_tables; i++)
      if (!strcmp(r->tables[i].name, fn->base_table)) t = &r->tables[i];
    if (!t || t->other || !num_kind(t->k)) continue;
    fn->base[kind] = t->i;
    fn->base_line[kind] = t->set ? t->line : 0;
    pysrc_cut(fn->base_stmt[kind], sizeof fn->base_stmt[kind], t->set ? t->stmt : "");
  }
  fn->space_pos = space_position(src, d, fn->space_table);
}

void byte_luts_scan(const py_src *src, byte_luts *out) {
  out->n = 0;
  for (size_t d = 0; d < src->n && out->n < BL_MAX_FNS; d++) {
    if (!src->v[d].header || strncmp(src->v[d].text, "def ", 4)) continue;
    if (!looks_like_builder(src, d)) continue;
    byte_lut_fn *fn = &out->fn[out->n];
    read_builder(src, d, fn);
    if (fn->base_table[0]) out->n++;
  }
}

static void add_name(char (*names)[BL_MAX_NAME], size_t *n, size_t max, const char *s, size_t len) {
  if (*n >= max || len == 0 || len >= BL_MAX_NAME) return;
  for (size_t i = 0; i < *n; i++)
    if (strlen(names[i]) == len && !memcmp(names[i], s, len)) return;
  copy_name(names[(*n)++], s, len);
}

size_t byte_luts_space_names(const py_src *src, const byte_lut_fn *fn, char (*names)[BL_MAX_NAME],
                             size_t n, size_t max) {
  if (!fn->space_table[0]) return n;
  add_name(names, &n, max, fn->space_table, strlen(fn->space_table));
  if (fn->space_pos < 0) return n;
  size_t fl = strlen(fn->name);
  for (size_t j = 0; j < src->n; j++) {
    const py_stmt *s = &src->v[j];
    char aug;
    size_t eq = assign_at(s->text, s->len, &aug);
    if (!eq || aug) continue;
    const char *rhs = s->text + eq + 1;
    /* `= name(` or `= module.name(` */
    const char *call = strstr(rhs, fn->name);
    if (!call || call[fl] != '(' || (call > rhs && call[-1] != '.' && call[-1] != ' ')) continue;
    for (const char *q = rhs; q < call; q++)
      if (!word_c(*q) && *q != '.') goto next;
    /* the targets, split at top-level commas */
    {
      int pos = 0;
      size_t i = 0, start = 0;
      const char *t = s->text;
      if (t[0] == '(' || t[0] == '[') i = start = 1;
      for (; i <= eq; i++) {
        if (i == eq || t[i] == ',' || t[i] == ')' || t[i] == ']') {
          if (pos == fn->space_pos) {
            size_t a = start, b = i;
            while (a < b && t[a] == ' ') a++;
            int ok = a < b;
            for (size_t x = a; x < b; x++) ok &= word_c(t[x]);
            if (ok) add_name(names, &n, max, t + a, b - a);
          }
          pos++;
          start = i + 1;
          if (i < eq && t[i] != ',') break;
        }
      }
    }
  next:;
  }
  return n;
}

long byte_luts_space_added(const py_src *src, char (*names)[BL_MAX_NAME], size_t n,
                           const byte_lut_fn *skip) {
  for (size_t j = 0; j < src->n; j++) {
    const py_stmt *s = &src->v[j];
    if (skip && s->line >= skip->line && s->line <= skip->end_line) continue;
    char *code = pysrc_blank_strings(s->text, s->len);
    if (!code) return -1;
    int adds = strchr(code, '+') != NULL, hit = 0;
    for (size_t k = 0; adds && !hit && k < n; k++) {
      size_t l = strlen(names[k]);
      for (const char *p = strstr(code, names[k]); p && !hit; p = strstr(p + 1, names[k]))
        hit = (p == code || !word_c(p[-1])) && p[l] == '[';
    }
    free(code);
    if (hit) return (long)j;
  }
  return -1;
}

/* ---- a constant bytes-per-token ratio ---- */

/* Lower-case copy of s[0..n) into out (cut to cap). */
static void lower(char *out, size_t cap, const char *s, size_t n) {
  size_t k = 0;
  for (; k < n && k + 1 < cap; k++) out[k] = (char)(s[k] >= 'A' && s[k] <= 'Z' ? s[k] + 32 : s[k]);
  out[k] = 0;
}

/* A ratio as bytes a token: v itself (1.5 to 8) or its inverse. */
static double as_bytes_per_token(double v) {
  if (v >= 1.5 && v <= 8) return v;
  if (v >= 0.125 && v <= 0.67) return 1 / v;
  return 0;
}

/* The float literal at t[i] (digits '.' digits, not inside a name, no
 * exponent), or 0 with *end unchanged. */
static double float_at(const char *t, size_t n, size_t i, size_t *end) {
  if (i > 0 && (word_c(t[i - 1]) || t[i - 1] == '.')) return 0;
  size_t j = i;
  while (j < n && t[j] >= '0' && t[j] <= '9') j++;
  if (j == i || j >= n || t[j] != '.') return 0;
  size_t k = j + 1;
  while (k < n && t[k] >= '0' && t[k] <= '9') k++;
  if (k == j + 1 || (k < n && (word_c(t[k]) || t[k] == '.'))) return 0;
  char buf[40];
  if (k - i >= sizeof buf) return 0;
  memcpy(buf, t + i, k - i);
  buf[k - i] = 0;
  *end = k;
  return strtod(buf, NULL);
}

typedef struct named_ratio {
  char name[BL_MAX_NAME];
  double bpt;
} named_ratio;

long byte_luts_constant_ratio(const py_src *src, double *bytes_per_token) {
  named_ratio named[16];
  size_t nn = 0;
  for (size_t j = 0; j < src->n && nn < 16; j++) { /* NAME = 3.67 */
    const py_stmt *s = &src->v[j];
    char aug;
    size_t eq = assign_at(s->text, s->len, &aug);
    if (!eq || aug || eq >= BL_MAX_NAME) continue;
    size_t k = 0;
    while (k < eq && word_c(s->text[k])) k++;
    size_t end = 0;
    double v = k == eq ? float_at(s->text, s->len, eq + 1, &end) : 0;
    if (!end || end != s->len || !as_bytes_per_token(v)) continue;
    char low[BL_MAX_NAME];
    lower(low, sizeof low, s->text, k);
    if (!strstr(low, "byte") && !strstr(low, "token")) continue;
    copy_name(named[nn].name, s->text, k);
    named[nn++].bpt = as_bytes_per_token(v);
  }
  for (size_t j = 0; j < src->n; j++) {
    const py_stmt *s = &src->v[j];
    char aug;
    size_t eq = assign_at(s->text, s->len, &aug);
    if (!eq || aug) continue;
    size_t last = 0;
    for (size_t k = 0; k < eq; k++)
      if (!word_c(s->text[k])) last = k + 1;
    char target[BL_MAX_NAME];
    lower(target, sizeof target, s->text + last, eq - last);
    if (!strstr(target, "bpb") || !strncmp(target, "est", 3)) continue;
    char *code = pysrc_blank_strings(s->text + eq + 1, s->len - eq - 1);
    if (!code) return -1;
    size_t n = strlen(code);
    char low[4096];
    lower(low, sizeof low, code, n);
    double found = 0;
    if (strstr(low, "log(2") || strstr(low, "log2") || strstr(low, "ln2") || strstr(low, "ln_2")) {
      for (size_t i = 0; i < n && !found; i++) {
        size_t end = 0;
        double v = float_at(code, n, i, &end);
        int in_log = i >= 4 && !strncasecmp(code + i - 4, "log(", 4); /* log(2.0) */
        if (end && !in_log) found = as_bytes_per_token(v);
      }
      for (size_t k = 0; k < nn && !found; k++) {
        size_t l = strlen(named[k].name);
        for (const char *p = strstr(code, named[k].name); p && !found;
             p = strstr(p + 1, named[k].name))
          if ((p == code || !word_c(p[-1])) && !word_c(p[l])) found = named[k].bpt;
      }
    }
    free(code);
    if (found) {
      *bytes_per_token = found;
      return (long)j;
    }
  }
  return -1;
}
