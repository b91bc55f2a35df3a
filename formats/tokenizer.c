#include "formats/tokenizer.h"

#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/grow.h"
#include "formats/protobuf.h"

/* U+2581 LOWER ONE EIGHTH BLOCK: SentencePiece's stand-in for a space. */
static const char SPACE_MARK[] = "\xe2\x96\x81";
#define SPACE_MARK_LEN 3

/* ---------------------------------------------------------------- UTF-8 */

/* Length of the sequence a lead byte starts, 0 if it cannot start one. */
static int utf8_seq_len(uint8_t b) {
  if (b < 0x80) return 1;
  if (b >= 0xc0 && b <= 0xdf) return 2; /* 0xc0, 0xc1: overlong, caught below */
  if (b >= 0xe0 && b <= 0xef) return 3;
  if (b >= 0xf0 && b <= 0xf4) return 4; /* 0xf5.. would exceed U+10FFFF */
  return 0;
}

/* Check one multi-byte sequence of length k at s (all bytes present). */
static const char *utf8_seq_problem(const uint8_t *s, int k) {
  uint32_t cp = s[0] & (0x7f >> k);
  for (int i = 1; i < k; i++) {
    if ((s[i] & 0xc0) != 0x80) return "missing continuation byte";
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[k]) return "overlong encoding";
  if (cp >= 0xd800 && cp <= 0xdfff) return "UTF-16 surrogate";
  if (cp > 0x10ffff) return "code point beyond U+10FFFF";
  return NULL;
}

int sp_utf8_check(const uint8_t *s, size_t n, size_t *bad_at, const char **why) {
  size_t i = 0;
  while (i < n) {
    int k = utf8_seq_len(s[i]);
    const char *problem = NULL;
    if (k == 0)
      problem = (s[i] & 0xc0) == 0x80 ? "unexpected continuation byte" : "invalid lead byte";
    else if ((size_t)k > n - i)
      problem = "truncated sequence";
    else if (k > 1)
      problem = utf8_seq_problem(s + i, k);
    if (problem) {
      *bad_at = i;
      *why = problem;
      return -1;
    }
    i += (size_t)k;
  }
  return 0;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int sp_byte_piece_value(const char *text, size_t len) {
  if (len != 6 || memcmp(text, "<0x", 3) != 0 || text[5] != '>') return -1;
  int hi = hex_digit(text[3]), lo = hex_digit(text[4]);
  if (hi < 0 || lo < 0) return -1;
  return hi * 16 + lo;
}

/* ------------------------------------------------------------- parsing */

typedef struct parse_ctx {
  pb_reader top;
  sp_model *m;
  size_t cap; /* allocated entries of m->pieces */
} parse_ctx;

static int piece_text(const pb_reader *r, const pb_field *f, uint32_t idx, sp_piece *p) {
  const uint8_t *s;
  size_t n;
  if (pb_get_bytes(r, f, "piece text", &s, &n)) return -1;
  if (n > SP_MAX_PIECE_BYTES)
    return pg_fail(r->err, r->name, (long long)f->off, "piece %u: %zu bytes, more than %d", idx, n,
                   SP_MAX_PIECE_BYTES);
  size_t bad;
  const char *why;
  if (sp_utf8_check(s, n, &bad, &why))
    return pg_fail(r->err, r->name, (long long)(f->off + bad), "piece %u: invalid UTF-8 (%s)", idx,
                   why);
  char *t = malloc(n + 1);
  if (!t) return pg_fail(r->err, r->name, (long long)f->off, "piece %u: out of memory", idx);
  memcpy(t, s, n);
  t[n] = 0;
  free(p->text); /* a repeated field 1: the last one wins, as in protobuf */
  p->text = t;
  p->len = (uint32_t)n;
  return 0;
}

static int piece_type(const pb_reader *r, const pb_field *f, uint32_t idx, sp_piece *p) {
  int32_t v;
  if (pb_get_int32(r, f, "piece type", &v)) return -1;
  /* An unknown type would be silently read as NORMAL by proto2; here it
   * would change the byte count, so it is an error. */
  if (v < SP_NORMAL || v > SP_BYTE)
    return pg_fail(r->err, r->name, (long long)f->tag_off, "piece %u: unknown piece type %d", idx,
                   (int)v);
  p->type = (sp_piece_type)v;
  return 0;
}

static int piece_check(const pb_reader *r, size_t off, uint32_t idx, const sp_piece *p) {
  if (!p->text || p->len == 0)
    return pg_fail(r->err, r->name, (long long)off, "piece %u: empty piece text", idx);
  if (p->type == SP_BYTE && sp_byte_piece_value(p->text, p->len) < 0)
    return pg_fail(r->err, r->name, (long long)off, "piece %u: byte piece text is not <0xNN>",
                   idx);
  return 0;
}

static int parse_piece(pb_reader *sub, size_t off, uint32_t idx, sp_piece *p) {
  pb_field f;
  int rc;
  while ((rc = pb_next(sub, &f)) == 1) {
    if (f.number == 1 && piece_text(sub, &f, idx, p)) return -1;
    if (f.number == 2 && pb_get_float(sub, &f, "piece score", &p->score)) return -1;
    if (f.number == 3 && piece_type(sub, &f, idx, p)) return -1;
  }
  if (rc < 0) return -1;
  return piece_check(sub, off, idx, p);
}

static int add_piece(parse_ctx *c, const pb_field *f) {
  sp_model *m = c->m;
  pb_reader sub;
  if (pb_enter(&c->top, f, &sub)) return -1;
  if (m->n_pieces >= SP_MAX_PIECES)
    return pg_fail(c->top.err, c->top.name, (long long)f->tag_off, "more than %u pieces",
                   SP_MAX_PIECES);
  if (PG_GROW(m->pieces, c->cap, (size_t)m->n_pieces + 1, 256))
    return pg_fail(c->top.err, c->top.name, (long long)f->tag_off, "out of memory");
  sp_piece *p = &m->pieces[m->n_pieces++];
  memset(p, 0, sizeof *p);
  p->type = SP_NORMAL;
  return parse_piece(&sub, f->tag_off, m->n_pieces - 1, p);
}

static int trainer_field(pb_reader *r, const pb_field *f, sp_model *m) {
  int b;
  switch (f->number) {
  case 3:
    if (pb_get_int32(r, f, "model_type", &m->model_type)) return -1;
    if (m->model_type < 1 || m->model_type > 4)
      return pg_fail(r->err, r->name, (long long)f->tag_off, "unknown model_type %d",
                     (int)m->model_type);
    return 0;
  case 4: return pb_get_int32(r, f, "vocab_size", &m->trainer_vocab_size);
  case 35:
    if (pb_get_bool(r, f, "byte_fallback", &b)) return -1;
    m->byte_fallback = b;
    return 0;
  case 40: return pb_get_int32(r, f, "unk_id", &m->unk_id);
  case 41: return pb_get_int32(r, f, "bos_id", &m->bos_id);
  case 42: return pb_get_int32(r, f, "eos_id", &m->eos_id);
  case 43: return pb_get_int32(r, f, "pad_id", &m->pad_id);
  default: return 0;
  }
}

/* Keep the name for display: cut at 63 bytes, on a character boundary. */
static int normalizer_name(const pb_reader *r, const pb_field *f, sp_model *m) {
  const uint8_t *s;
  size_t n, bad;
  const char *why;
  if (pb_get_bytes(r, f, "normalizer name", &s, &n)) return -1;
  if (sp_utf8_check(s, n, &bad, &why))
    return pg_fail(r->err, r->name, (long long)(f->off + bad), "normalizer name: invalid UTF-8 (%s)",
                   why);
  size_t keep = n < sizeof m->normalizer_name ? n : sizeof m->normalizer_name - 1;
  while (keep > 0 && keep < n && (s[keep] & 0xc0) == 0x80) keep--;
  memcpy(m->normalizer_name, s, keep);
  m->normalizer_name[keep] = 0;
  return 0;
}

static int parse_submessage(parse_ctx *c, const pb_field *f) {
  pb_reader sub;
  pb_field g;
  int rc, b;
  if (pb_enter(&c->top, f, &sub)) return -1;
  while ((rc = pb_next(&sub, &g)) == 1) {
    if (f->number == 2 && trainer_field(&sub, &g, c->m)) return -1;
    if (f->number == 3 && g.number == 1 && normalizer_name(&sub, &g, c->m)) return -1;
    if (f->number == 3 && g.number == 3) {
      if (pb_get_bool(&sub, &g, "add_dummy_prefix", &b)) return -1;
      c->m->add_dummy_prefix = b;
    }
  }
  return rc < 0 ? -1 : 0;
}

static void model_defaults(sp_model *m) {
  memset(m, 0, sizeof *m);
  m->model_type = 1;
  m->unk_id = 0;
  m->bos_id = 1;
  m->eos_id = 2;
  m->pad_id = -1;
  m->trainer_vocab_size = 8000;
  m->add_dummy_prefix = true;
}

static uint64_t text_hash(const char *s, uint32_t n) {
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
  for (uint32_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
  return h;
}

/* sentencepiece refuses a model where two pieces share a text (the id of
 * that text would be ambiguous), so pgolf does too. */
static int check_duplicates(const sp_model *m, const char *name, pg_error *err) {
  size_t cap = 16;
  while (cap < 2 * (size_t)m->n_pieces) cap *= 2;
  uint32_t *slot = malloc(cap * sizeof *slot);
  if (!slot) return pg_fail(err, name, -1, "out of memory");
  memset(slot, 0xff, cap * sizeof *slot);
  int rc = 0;
  for (uint32_t i = 0; i < m->n_pieces && rc == 0; i++) {
    const sp_piece *p = &m->pieces[i];
    size_t h = (size_t)text_hash(p->text, p->len) & (cap - 1);
    for (; slot[h] != UINT32_MAX; h = (h + 1) & (cap - 1)) {
      const sp_piece *q = &m->pieces[slot[h]];
      if (q->len == p->len && memcmp(q->text, p->text, p->len) == 0) {
        rc = pg_fail(err, name, -1, "piece %u repeats the text of piece %u", i, slot[h]);
        break;
      }
    }
    slot[h] = i;
  }
  free(slot);
  return rc;
}

int sp_model_parse(const uint8_t *buf, size_t len, const char *name, sp_model *m, pg_error *err) {
  model_defaults(m);
  if (len > SP_MAX_FILE_BYTES)
    return pg_fail(err, name, -1, "%zu bytes, more than the %u a .model may have", len,
                   SP_MAX_FILE_BYTES);
  parse_ctx c = {.m = m, .cap = 0};
  pb_init(&c.top, buf, len, name, err);
  pb_field f;
  int rc;
  while ((rc = pb_next(&c.top, &f)) == 1) {
    /* Fields other than pieces and the two specs were skipped by pb_next. */
    if (f.number == 1 && add_piece(&c, &f)) rc = -1;
    if ((f.number == 2 || f.number == 3) && parse_submessage(&c, &f)) rc = -1;
    if (rc < 0) break;
  }
  if (rc == 0 && m->n_pieces == 0)
    rc = pg_fail(err, name, (long long)len, "no pieces: not a SentencePiece model");
  if (rc == 0) rc = check_duplicates(m, name, err);
  if (rc != 0) sp_model_free(m);
  return rc;
}

int sp_model_load(const char *path, sp_model *m, pg_error *err) {
  uint8_t *buf;
  size_t len;
  model_defaults(m);
  if (file_read_all(path, SP_MAX_FILE_BYTES, &buf, &len, err)) return -1;
  int rc = sp_model_parse(buf, len, path, m, err);
  free(buf);
  return rc;
}

void sp_model_free(sp_model *m) {
  if (!m) return;
  for (uint32_t i = 0; i < m->n_pieces; i++) free(m->pieces[i].text);
  free(m->pieces);
  m->pieces = NULL;
  m->n_pieces = 0;
}

/* ------------------------------------------------------------- summary */

const char *sp_model_type_name(int32_t model_type) {
  static const char *names[] = {"unknown", "unigram", "bpe", "word", "char"};
  return model_type >= 1 && model_type <= 4 ? names[model_type] : names[0];
}

const char *sp_piece_type_name(sp_piece_type t) {
  static const char *names[] = {"invalid", "normal", "unknown", "control",
                                "user_defined", "unused", "byte"};
  return (int)t >= 1 && (int)t <= 6 ? names[t] : names[0];
}

void sp_model_summarize(const sp_model *m, sp_summary *s) {
  bool seen[256] = {false};
  memset(s, 0, sizeof *s);
  s->first_unknown = -1;
  s->space_piece = -1;
  for (uint32_t i = 0; i < m->n_pieces; i++) {
    const sp_piece *p = &m->pieces[i];
    s->n_type[p->type]++;
    if (p->type == SP_UNKNOWN && s->first_unknown < 0) s->first_unknown = (int32_t)i;
    if (p->type == SP_BYTE) {
      int v = sp_byte_piece_value(p->text, p->len);
      if (v >= 0 && !seen[v]) {
        seen[v] = true;
        s->n_byte_values++;
      }
    }
    if (p->len == SPACE_MARK_LEN && !memcmp(p->text, SPACE_MARK, SPACE_MARK_LEN) &&
        s->space_piece < 0)
      s->space_piece = (int32_t)i;
  }
  s->all_bytes = s->n_byte_values == 256;
}

/* ---------------------------------------------------------- byte tables */

void luts_free(byte_luts *l) {
  if (!l) return;
  free(l->base_bytes);
  free(l->has_leading_space);
  free(l->is_boundary);
  memset(l, 0, sizeof *l);
}

/* One piece's entry under the official rule. */
static void lut_entry(const sp_piece *p, uint16_t *bytes, bool *space, bool *boundary) {
  if (p->type == SP_CONTROL || p->type == SP_UNKNOWN || p->type == SP_UNUSED) return;
  *boundary = false;
  if (p->type == SP_BYTE) {
    *bytes = 1;
    return;
  }
  uint32_t n = p->len;
  if (n >= SPACE_MARK_LEN && !memcmp(p->text, SPACE_MARK, SPACE_MARK_LEN)) {
    *space = true;
    n -= SPACE_MARK_LEN;
  }
  *bytes = (uint16_t)n;
}

int luts_from_model(const sp_model *m, uint32_t vocab_size, byte_luts *out, pg_error *err) {
  memset(out, 0, sizeof *out);
  if (vocab_size == 0) vocab_size = m->n_pieces;
  if (vocab_size < m->n_pieces)
    return pg_fail(err, "", -1, "vocab size %u is smaller than the model's %u pieces", vocab_size,
                   m->n_pieces);
  if (vocab_size > SP_MAX_PIECES)
    return pg_fail(err, "", -1, "vocab size %u is larger than %u", vocab_size, SP_MAX_PIECES);
  out->vocab_size = vocab_size;
  out->base_bytes = calloc(vocab_size, sizeof *out->base_bytes);
  out->has_leading_space = calloc(vocab_size, sizeof *out->has_leading_space);
  out->is_boundary = malloc(vocab_size * sizeof *out->is_boundary);
  if (!out->base_bytes || !out->has_leading_space || !out->is_boundary) {
    luts_free(out);
    return pg_fail(err, "", -1, "out of memory for %u-entry byte tables", vocab_size);
  }
  /* Ids past the model's pieces can never be produced by the tokenizer;
   * like control tokens they are boundaries worth 0 bytes. */
  for (uint32_t i = 0; i < vocab_size; i++) out->is_boundary[i] = true;
  for (uint32_t i = 0; i < m->n_pieces; i++)
    lut_entry(&m->pieces[i], &out->base_bytes[i], &out->has_leading_space[i], &out->is_boundary[i]);
  return 0;
}
