/* SentencePiece .model parsing and the official byte tables: hand-built
 * ModelProto buffers (good and hostile), and the four real challenge
 * tokenizers checked against the sentencepiece-made golden files. */
#include "tests/test_util.h"

#include <jansson.h>

#include "tests/pb_writer.h"
#include "formats/protobuf.h"
#include "formats/tokenizer.h"

/* ------------------------------------------------- ModelProto builder */

static void put_vfield(wbuf *b, uint32_t field, uint64_t v) {
  put_tag(b, field, PB_VARINT);
  put_varint(b, v);
}

static void put_float(wbuf *b, uint32_t field, float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  put_tag(b, field, PB_FIXED32);
  for (int i = 0; i < 4; i++) put_byte(b, (uint8_t)(bits >> (8 * i)));
}

/* One SentencePiece submessage; type 0 means "leave the field out". */
static void put_piece_n(wbuf *b, const char *text, size_t n, int type) {
  wbuf p = {0};
  put_len(&p, 1, text, n);
  put_float(&p, 2, -1.0f);
  if (type) put_vfield(&p, 3, (uint64_t)(int64_t)type);
  put_len(b, 1, p.d, p.n);
  free(p.d);
}

static void put_piece(wbuf *b, const char *text, int type) { put_piece_n(b, text, strlen(text), type); }

static void put_trainer(wbuf *b, int model_type, int byte_fallback, int unk_id) {
  wbuf t = {0};
  put_vfield(&t, 3, (uint64_t)model_type);
  put_vfield(&t, 4, 8);
  put_vfield(&t, 35, (uint64_t)byte_fallback);
  put_vfield(&t, 40, (uint64_t)(int64_t)unk_id);
  put_vfield(&t, 43, (uint64_t)(int64_t)-1);
  put_len(b, 2, t.d, t.n);
  free(t.d);
}

static void put_normalizer(wbuf *b, const char *name, int dummy_prefix) {
  wbuf s = {0};
  put_len(&s, 1, name, strlen(name));
  put_vfield(&s, 3, (uint64_t)dummy_prefix);
  put_len(b, 3, s.d, s.n);
  free(s.d);
}

/* A small valid model in the shape of the challenge tokenizers. */
static wbuf small_model(void) {
  wbuf b = {0};
  put_piece(&b, "<pad>", SP_CONTROL);
  put_piece(&b, "<s>", SP_CONTROL);
  put_piece(&b, "</s>", SP_CONTROL);
  put_piece(&b, "<unk>", SP_UNKNOWN);
  put_piece(&b, "<0x41>", SP_BYTE);
  put_piece(&b, "\xe2\x96\x81the", 0); /* type absent: NORMAL */
  put_piece(&b, "\xe2\x96\x81", SP_NORMAL);
  put_piece(&b, "caf\xc3\xa9", SP_NORMAL);
  put_piece(&b, "<user>", SP_USER_DEFINED);
  put_piece(&b, "<unused>", SP_UNUSED);
  put_trainer(&b, 2, 1, 3);
  put_normalizer(&b, "nmt_nfkc", 0);
  return b;
}

/* Parse and expect failure naming "m.model"; returns the offset. */
static long long parse_fails(const wbuf *b, const char *needle) {
  sp_model m;
  pg_error err;
  memset(&err, 0, sizeof err);
  int rc = sp_model_parse(b->d, b->n, "m.model", &m, &err);
  if (rc == 0) {
    sp_model_free(&m);
    fail_msg("parse succeeded, expected '%s'", needle);
  }
  assert_int_equal(rc, -1);
  assert_string_equal(err.file, "m.model");
  if (!strstr(err.msg, needle)) fail_msg("message '%s' lacks '%s'", err.msg, needle);
  assert_true(err.pos >= -1 && err.pos <= (long long)b->n);
  assert_null(m.pieces);
  return err.pos;
}

/* -------------------------------------------------------- good inputs */

static void test_small_model(void **state) {
  (void)state;
  wbuf b = small_model();
  sp_model m;
  pg_error err;
  assert_int_equal(sp_model_parse(b.d, b.n, "m.model", &m, &err), 0);
  assert_int_equal(m.n_pieces, 10);
  assert_string_equal(m.pieces[5].text, "\xe2\x96\x81the");
  assert_int_equal(m.pieces[5].len, 6);
  assert_int_equal(m.pieces[5].type, SP_NORMAL);
  assert_true(m.pieces[5].score == -1.0f);
  assert_int_equal(m.pieces[4].type, SP_BYTE);
  assert_int_equal(m.model_type, 2);
  assert_int_equal(m.trainer_vocab_size, 8);
  assert_true(m.byte_fallback);
  assert_int_equal(m.unk_id, 3);
  assert_int_equal(m.bos_id, 1); /* absent: sentencepiece's default */
  assert_int_equal(m.pad_id, -1);
  assert_false(m.add_dummy_prefix);
  assert_string_equal(m.normalizer_name, "nmt_nfkc");

  byte_luts l;
  assert_int_equal(luts_from_model(&m, 0, &l, &err), 0);
  assert_int_equal(l.vocab_size, 10);
  static const uint16_t bytes[] = {0, 0, 0, 0, 1, 3, 0, 5, 6, 0};
  static const bool space[] = {0, 0, 0, 0, 0, 1, 1, 0, 0, 0};
  static const bool bound[] = {1, 1, 1, 1, 0, 0, 0, 0, 0, 1};
  for (int i = 0; i < 10; i++) {
    assert_int_equal(l.base_bytes[i], bytes[i]);
    assert_int_equal(l.has_leading_space[i], space[i]);
    assert_int_equal(l.is_boundary[i], bound[i]);
  }
  luts_free(&l);

  sp_summary s;
  sp_model_summarize(&m, &s);
  assert_int_equal(s.n_type[SP_CONTROL], 3);
  assert_int_equal(s.n_type[SP_NORMAL], 3);
  assert_int_equal(s.n_type[SP_USER_DEFINED], 1);
  assert_int_equal(s.n_byte_values, 1);
  assert_false(s.all_bytes);
  assert_int_equal(s.first_unknown, 3);
  assert_int_equal(s.space_piece, 6);
  sp_model_free(&m);
  free(b.d);
}

static void test_defaults_without_specs(void **state) {
  (void)state;
  wbuf b = {0};
  put_piece(&b, "a", 0);
  sp_model m;
  pg_error err;
  assert_int_equal(sp_model_parse(b.d, b.n, "m.model", &m, &err), 0);
  assert_int_equal(m.model_type, 1);
  assert_int_equal(m.unk_id, 0);
  assert_int_equal(m.bos_id, 1);
  assert_int_equal(m.eos_id, 2);
  assert_int_equal(m.pad_id, -1);
  assert_false(m.byte_fallback);
  assert_true(m.add_dummy_prefix);
  assert_string_equal(m.normalizer_name, "");
  sp_model_free(&m);
  free(b.d);
}

static void test_unknown_fields_skipped(void **state) {
  (void)state;
  wbuf b = {0};
  wbuf p = {0};
  put_vfield(&p, 200, 5); /* an extension */
  put_len(&p, 1, "xy", 2);
  put_tag(&p, 9, PB_FIXED64);
  put_raw(&p, "12345678", 8);
  put_tag(&p, 10, PB_FIXED32);
  put_raw(&p, "1234", 4);
  put_len(&b, 1, p.d, p.n);
  put_len(&b, 4, "\x0a\x02hi", 4); /* self_test_data */
  put_vfield(&b, 99, 1);
  sp_model m;
  pg_error err;
  assert_int_equal(sp_model_parse(b.d, b.n, "m.model", &m, &err), 0);
  assert_int_equal(m.n_pieces, 1);
  assert_string_equal(m.pieces[0].text, "xy");
  sp_model_free(&m);
  free(p.d);
  free(b.d);
}

static void test_luts_vocab_padding(void **state) {
  (void)state;
  wbuf b = small_model();
  sp_model m;
  pg_error err;
  byte_luts l;
  assert_int_equal(sp_model_parse(b.d, b.n, "m.model", &m, &err), 0);
  assert_int_equal(luts_from_model(&m, 16, &l, &err), 0);
  assert_int_equal(l.vocab_size, 16);
  for (int i = 10; i < 16; i++) {
    assert_int_equal(l.base_bytes[i], 0);
    assert_false(l.has_leading_space[i]);
    assert_true(l.is_boundary[i]);
  }
  luts_free(&l);
  assert_int_equal(luts_from_model(&m, 9, &l, &err), -1);
  assert_non_null(strstr(err.msg, "smaller"));
  assert_int_equal(luts_from_model(&m, SP_MAX_PIECES + 1, &l, &err), -1);
  sp_model_free(&m);
  free(b.d);
}

/* --------------------------------------------------- hostile inputs */

static void test_every_truncation(void **state) {
  (void)state;
  wbuf b = small_model();
  int ok = 0, failed = 0;
  for (size_t n = 0; n < b.n; n++) {
    /* A fresh copy of exactly n bytes, so ASan catches any read past it. */
    uint8_t *cut = malloc(n ? n : 1);
    memcpy(cut, b.d, n);
    sp_model m;
    pg_error err;
    memset(&err, 0, sizeof err);
    if (sp_model_parse(cut, n, "cut.model", &m, &err) == 0) {
      ok++;
      sp_model_free(&m);
    } else {
      failed++;
      assert_string_equal(err.file, "cut.model");
      assert_true(err.pos >= -1 && err.pos <= (long long)n);
      assert_true(err.msg[0] != 0);
    }
    free(cut);
  }
  assert_true(failed > 0);
  assert_true(ok > 0); /* cuts at a piece boundary are valid, shorter models */
  free(b.d);
}

static void test_wrong_wire_types(void **state) {
  (void)state;
  wbuf b = {0};
  put_vfield(&b, 1, 5); /* pieces as a varint */
  assert_int_equal(parse_fails(&b, "expected length-delimited"), 0);

  b.n = 0;
  put_piece(&b, "a", 0);
  size_t at = b.n;
  put_vfield(&b, 2, 1); /* trainer_spec as a varint */
  assert_int_equal(parse_fails(&b, "wire type varint"), (long long)at);

  b.n = 0;
  wbuf p = {0};
  put_vfield(&p, 1, 7); /* piece text as a varint */
  put_len(&b, 1, p.d, p.n);
  assert_int_equal(parse_fails(&b, "piece text"), 2);

  b.n = 0, p.n = 0;
  put_len(&p, 1, "a", 1);
  put_vfield(&p, 2, 7); /* score as a varint */
  put_len(&b, 1, p.d, p.n);
  assert_int_equal(parse_fails(&b, "piece score"), 5);

  b.n = 0, p.n = 0;
  put_len(&p, 1, "a", 1);
  put_float(&p, 3, 1.0f); /* type as fixed32 */
  put_len(&b, 1, p.d, p.n);
  parse_fails(&b, "piece type");

  b.n = 0, p.n = 0;
  put_piece(&b, "a", 0);
  put_len(&p, 40, "x", 1); /* unk_id as bytes */
  put_len(&b, 2, p.d, p.n);
  parse_fails(&b, "unk_id");
  free(p.d);
  free(b.d);
}

static void test_varint_overflow(void **state) {
  (void)state;
  wbuf b = {0};
  put_piece(&b, "a", 0);
  size_t at = b.n;
  for (int i = 0; i < 11; i++) put_byte(&b, 0xff);
  put_byte(&b, 0x01);
  assert_int_equal(parse_fails(&b, "overflows"), (long long)at);

  /* Inside the trainer spec: a 10-byte unk_id with bits past 64. */
  b.n = 0;
  put_piece(&b, "a", 0);
  wbuf t = {0};
  put_tag(&t, 40, PB_VARINT);
  for (int i = 0; i < 9; i++) put_byte(&t, 0xff);
  put_byte(&t, 0x02);
  put_len(&b, 2, t.d, t.n);
  parse_fails(&b, "overflows");

  /* An int32 field holding a 40-bit value. */
  b.n = 0, t.n = 0;
  put_piece(&b, "a", 0);
  put_vfield(&t, 41, (uint64_t)1 << 40);
  put_len(&b, 2, t.d, t.n);
  parse_fails(&b, "int32 range");
  free(t.d);
  free(b.d);
}

static void test_length_past_end(void **state) {
  (void)state;
  wbuf b = {0};
  put_piece(&b, "a", 0);
  size_t at = b.n;
  put_tag(&b, 1, PB_LEN);
  put_varint(&b, 1000);
  put_raw(&b, "\x0a\x01z", 3);
  assert_int_equal(parse_fails(&b, "runs past the end"), (long long)at);

  /* The piece text's length runs past its SentencePiece message. */
  b.n = 0;
  put_len(&b, 1, "\x0a\x05" "ab", 4);
  assert_int_equal(parse_fails(&b, "runs past the end"), 2);
  free(b.d);
}

static void test_oversized_counts(void **state) {
  (void)state;
  /* One piece more than SP_MAX_PIECES: 5 bytes each, all the same text;
   * the count limit must fire before the duplicate check. */
  wbuf b = {0};
  for (uint32_t i = 0; i <= SP_MAX_PIECES; i++) put_raw(&b, "\x0a\x03\x0a\x01z", 5);
  long long at = parse_fails(&b, "more than");
  assert_int_equal(at, 5ll * SP_MAX_PIECES);
  free(b.d);

  /* A piece one byte over SP_MAX_PIECE_BYTES. */
  char *big = malloc(SP_MAX_PIECE_BYTES + 1);
  memset(big, 'a', SP_MAX_PIECE_BYTES + 1);
  wbuf c = {0};
  put_piece_n(&c, big, SP_MAX_PIECE_BYTES, 0);
  sp_model m;
  pg_error err;
  assert_int_equal(sp_model_parse(c.d, c.n, "m.model", &m, &err), 0);
  assert_int_equal(m.pieces[0].len, SP_MAX_PIECE_BYTES);
  sp_model_free(&m);
  c.n = 0;
  put_piece_n(&c, big, SP_MAX_PIECE_BYTES + 1, 0);
  parse_fails(&c, "more than 4096");
  free(c.d);
  free(big);

  /* A buffer over SP_MAX_FILE_BYTES is refused before it is read. */
  size_t huge = (size_t)SP_MAX_FILE_BYTES + 1;
  uint8_t *z = calloc(huge, 1);
  assert_non_null(z);
  assert_int_equal(sp_model_parse(z, huge, "huge.model", &m, &err), -1);
  assert_non_null(strstr(err.msg, "more than"));
  free(z);
}

static void test_bad_utf8(void **state) {
  (void)state;
  static const struct {
    const char *text;
    size_t bad_at;
    const char *why;
  } cases[] = {
      {"ab\xc0\xaf", 2, "overlong"},             /* overlong '/' */
      {"\xe0\x80\xaf", 0, "overlong"},           /* 3-byte overlong */
      {"\xf0\x80\x80\xaf", 0, "overlong"},       /* 4-byte overlong */
      {"x\xed\xa0\x80", 1, "surrogate"},         /* U+D800 */
      {"\xf4\x90\x80\x80", 0, "beyond U+10FFFF"}, /* U+110000 */
      {"\xf5\x80\x80\x80", 0, "invalid lead"},
      {"abc\xe2\x96", 3, "truncated"},
      {"\x80", 0, "continuation"},
      {"a\xe2(\x81", 1, "missing continuation"},
      {"\xff", 0, "invalid lead"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t bad;
    const char *why;
    size_t n = strlen(cases[i].text);
    assert_int_equal(sp_utf8_check((const uint8_t *)cases[i].text, n, &bad, &why), -1);
    assert_int_equal(bad, cases[i].bad_at);
    if (!strstr(why, cases[i].why)) fail_msg("case %zu: '%s' lacks '%s'", i, why, cases[i].why);
    /* Through the parser: the offset is the bad byte's, in the file. */
    wbuf b = {0};
    put_piece(&b, "ok", 0);
    size_t payload = b.n + 4; /* piece tag, len, text tag, text len */
    put_piece_n(&b, cases[i].text, n, 0);
    long long pos = parse_fails(&b, "invalid UTF-8");
    assert_int_equal(pos, (long long)(payload + cases[i].bad_at));
    free(b.d);
  }
  /* Valid edge cases. */
  static const char *good[] = {"\x7f", "\xc2\x80", "\xed\x9f\xbf", "\xee\x80\x80",
                               "\xf4\x8f\xbf\xbf", "\xf0\x90\x80\x80", ""};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    size_t bad;
    const char *why;
    assert_int_equal(sp_utf8_check((const uint8_t *)good[i], strlen(good[i]), &bad, &why), 0);
  }
}

static void test_bad_byte_pieces(void **state) {
  (void)state;
  static const char *bad[] = {"<0x4g>", "<0x41", "<0x0a>", "A", "<0X41>", "<0x041>", "<0x4>"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    wbuf b = {0};
    put_piece(&b, bad[i], SP_BYTE);
    assert_int_equal(parse_fails(&b, "not <0xNN>"), 0);
    free(b.d);
  }
  assert_int_equal(sp_byte_piece_value("<0x00>", 6), 0);
  assert_int_equal(sp_byte_piece_value("<0xFF>", 6), 255);
  assert_int_equal(sp_byte_piece_value("<0xA0>", 6), 160);
  /* Normal pieces may spell anything. */
  wbuf b = {0};
  put_piece(&b, "<0xzz>", SP_NORMAL);
  sp_model m;
  pg_error err;
  assert_int_equal(sp_model_parse(b.d, b.n, "m.model", &m, &err), 0);
  sp_model_free(&m);
  free(b.d);
}

static void test_unknown_type_enum(void **state) {
  (void)state;
  static const int bad[] = {0, 7, 100, -1};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    wbuf b = {0};
    put_piece(&b, "a", 0);
    put_piece(&b, "b", bad[i] ? bad[i] : 0);
    if (bad[i] == 0) { /* type 0 must be written explicitly */
      b.n = 0;
      put_piece(&b, "a", 0);
      wbuf p = {0};
      put_len(&p, 1, "b", 1);
      put_vfield(&p, 3, 0);
      put_len(&b, 1, p.d, p.n);
      free(p.d);
    }
    parse_fails(&b, "unknown piece type");
    free(b.d);
  }
  wbuf b = {0};
  put_piece(&b, "a", 0);
  put_trainer(&b, 9, 0, 0);
  parse_fails(&b, "unknown model_type 9");
  free(b.d);
}

static void test_groups_and_empty(void **state) {
  (void)state;
  wbuf b = {0};
  put_piece(&b, "a", 0);
  put_tag(&b, 7, PB_SGROUP);
  put_tag(&b, 7, PB_EGROUP);
  parse_fails(&b, "group");

  b.n = 0;
  parse_fails(&b, "no pieces");
  put_vfield(&b, 5, 1);
  parse_fails(&b, "no pieces");

  b.n = 0;
  put_piece(&b, "", 0);
  parse_fails(&b, "empty piece");
  b.n = 0;
  put_len(&b, 1, "", 0); /* a SentencePiece with no fields at all */
  parse_fails(&b, "empty piece");
  free(b.d);
}

static void test_duplicate_pieces(void **state) {
  (void)state;
  wbuf b = {0};
  put_piece(&b, "a", 0);
  put_piece(&b, "bc", 0);
  put_piece(&b, "a", SP_USER_DEFINED);
  parse_fails(&b, "piece 2 repeats the text of piece 0");
  free(b.d);
}

static void test_long_normalizer_name(void **state) {
  (void)state;
  char name[100];
  memset(name, 'n', sizeof name);
  memcpy(name + 62, "\xc3\xa9", 2); /* a 2-byte character straddling byte 63 */
  name[99] = 0;
  wbuf b = {0};
  put_piece(&b, "a", 0);
  put_normalizer(&b, name, 1);
  sp_model m;
  pg_error err;
  assert_int_equal(sp_model_parse(b.d, b.n, "m.model", &m, &err), 0);
  assert_int_equal(strlen(m.normalizer_name), 62); /* cut before the é */
  assert_true(m.add_dummy_prefix);
  sp_model_free(&m);
  b.n = 0;
  put_piece(&b, "a", 0);
  put_normalizer(&b, "bad\xff", 1);
  parse_fails(&b, "normalizer name");
  free(b.d);
}

static void test_load_errors(void **state) {
  (void)state;
  sp_model m;
  pg_error err;
  assert_int_equal(sp_model_load("/nonexistent/x.model", &m, &err), -1);
  assert_string_equal(err.file, "/nonexistent/x.model");
  char *dir = test_tmpdir();
  char path[600];
  snprintf(path, sizeof path, "%s/bad.model", dir);
  test_write_file(path, "\x0a\x05\x0a\x03" "a", 5);
  assert_int_equal(sp_model_load(path, &m, &err), -1);
  assert_string_equal(err.file, path);
  char line[1200];
  pg_error_format(&err, line, sizeof line);
  assert_non_null(strstr(line, "bad.model:offset "));
  test_rmdir(dir);
}

/* -------------------------------------------- the real tokenizers */

static const int SIZES[] = {1024, 2048, 4096, 8192};

static void model_path(int n, char *out, size_t cap) {
  snprintf(out, cap, "data/tokenizers/fineweb_%d_bpe.model", n);
}

static int find_piece(const sp_model *m, const char *text) {
  for (uint32_t i = 0; i < m->n_pieces; i++)
    if (!strcmp(m->pieces[i].text, text)) return (int)i;
  return -1;
}

static void test_real_1024_pieces(void **state) {
  (void)state;
  sp_model m;
  pg_error err;
  byte_luts l;
  assert_int_equal(sp_model_load("data/tokenizers/fineweb_1024_bpe.model", &m, &err), 0);
  assert_int_equal(m.n_pieces, 1024);
  assert_int_equal(luts_from_model(&m, 1024, &l, &err), 0);
  /* <pad> <s> </s> are control, <unk> unknown: boundaries of 0 bytes. */
  for (int i = 0; i < 4; i++) {
    assert_true(l.is_boundary[i]);
    assert_int_equal(l.base_bytes[i], 0);
    assert_false(l.has_leading_space[i]);
  }
  assert_string_equal(m.pieces[3].text, "<unk>");
  assert_int_equal(m.pieces[3].type, SP_UNKNOWN);
  assert_string_equal(m.pieces[4].text, "\xe2\x96\x81t");
  assert_int_equal(l.base_bytes[4], 1);
  assert_true(l.has_leading_space[4]);
  assert_false(l.is_boundary[4]);
  int the = find_piece(&m, "\xe2\x96\x81the");
  assert_true(the > 0);
  assert_int_equal(l.base_bytes[the], 3);
  assert_true(l.has_leading_space[the]);
  int in = find_piece(&m, "in");
  assert_int_equal(in, 6);
  assert_int_equal(l.base_bytes[in], 2);
  assert_false(l.has_leading_space[in]);
  int sp = find_piece(&m, "\xe2\x96\x81");
  assert_true(sp > 0);
  assert_int_equal(l.base_bytes[sp], 0);
  assert_true(l.has_leading_space[sp]);
  assert_false(m.byte_fallback);
  luts_free(&l);
  sp_model_free(&m);
}

static void test_real_8192_byte_piece(void **state) {
  (void)state;
  sp_model m;
  pg_error err;
  byte_luts l;
  assert_int_equal(sp_model_load("data/tokenizers/fineweb_8192_bpe.model", &m, &err), 0);
  assert_int_equal(luts_from_model(&m, 0, &l, &err), 0);
  assert_string_equal(m.pieces[4].text, "<0x00>");
  assert_int_equal(m.pieces[4].type, SP_BYTE);
  assert_int_equal(l.base_bytes[4], 1);
  assert_false(l.is_boundary[4]);
  assert_false(l.has_leading_space[4]);
  sp_summary s;
  sp_model_summarize(&m, &s);
  assert_true(s.all_bytes);
  assert_true(m.byte_fallback);
  luts_free(&l);
  sp_model_free(&m);
}

static json_t *load_json(const char *path) {
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  if (!j) fail_msg("%s:%d: %s", path, je.line, je.text);
  return j;
}

static void check_bool_array(json_t *a, const bool *v, uint32_t n) {
  assert_int_equal(json_array_size(a), n);
  for (uint32_t i = 0; i < n; i++) assert_int_equal(json_is_true(json_array_get(a, i)), v[i]);
}

/* The tables equal those sentencepiece itself gives (golden/tokenizer_luts_N.json). */
static void test_real_luts_match_golden(void **state) {
  (void)state;
  for (size_t k = 0; k < 4; k++) {
    char path[128], gpath[128];
    model_path(SIZES[k], path, sizeof path);
    snprintf(gpath, sizeof gpath, "golden/tokenizer_luts_%d.json", SIZES[k]);
    sp_model m;
    pg_error err;
    byte_luts l;
    assert_int_equal(sp_model_load(path, &m, &err), 0);
    assert_int_equal(luts_from_model(&m, (uint32_t)SIZES[k], &l, &err), 0);
    json_t *g = load_json(gpath);
    assert_int_equal(json_integer_value(json_object_get(g, "vocab_size")), l.vocab_size);
    json_t *bb = json_object_get(g, "base_bytes");
    assert_int_equal(json_array_size(bb), l.vocab_size);
    for (uint32_t i = 0; i < l.vocab_size; i++)
      assert_int_equal(json_integer_value(json_array_get(bb, i)), l.base_bytes[i]);
    check_bool_array(json_object_get(g, "has_leading_space"), l.has_leading_space, l.vocab_size);
    check_bool_array(json_object_get(g, "is_boundary"), l.is_boundary, l.vocab_size);
    json_decref(g);
    luts_free(&l);
    sp_model_free(&m);
  }
}

/* Piece counts and special ids equal what sentencepiece reports. */
static void test_real_info_matches_meta(void **state) {
  (void)state;
  json_t *meta = load_json("golden/tokenizer_luts.meta.json");
  for (size_t k = 0; k < 4; k++) {
    char key[16], path[128];
    snprintf(key, sizeof key, "%d", SIZES[k]);
    model_path(SIZES[k], path, sizeof path);
    json_t *info = json_object_get(json_object_get(json_object_get(meta, "models"), key), "info");
    assert_non_null(info);
    sp_model m;
    pg_error err;
    sp_summary s;
    assert_int_equal(sp_model_load(path, &m, &err), 0);
    sp_model_summarize(&m, &s);
    json_t *types = json_object_get(info, "types");
    assert_int_equal(json_integer_value(json_object_get(info, "pieces")), m.n_pieces);
    for (int t = SP_NORMAL; t <= SP_BYTE; t++) {
      /* sentencepiece's Python API reports user-defined pieces as normal. */
      long long want = json_integer_value(json_object_get(types, sp_piece_type_name(t)));
      long long got = s.n_type[t] + (t == SP_NORMAL ? s.n_type[SP_USER_DEFINED] : 0);
      if (t != SP_USER_DEFINED) assert_int_equal(got, want);
    }
    assert_int_equal(json_integer_value(json_object_get(info, "unk_id")), s.first_unknown);
    assert_int_equal(json_integer_value(json_object_get(info, "unk_id")), m.unk_id);
    assert_int_equal(json_integer_value(json_object_get(info, "bos_id")), m.bos_id);
    assert_int_equal(json_integer_value(json_object_get(info, "eos_id")), m.eos_id);
    assert_int_equal(json_integer_value(json_object_get(info, "pad_id")), m.pad_id);
    assert_int_equal(json_integer_value(json_object_get(info, "byte_pieces")), s.n_byte_values);
    assert_int_equal(json_integer_value(json_object_get(info, "space_piece_id")), s.space_piece);
    sp_model_free(&m);
  }
  json_decref(meta);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_small_model),
      cmocka_unit_test(test_defaults_without_specs),
      cmocka_unit_test(test_unknown_fields_skipped),
      cmocka_unit_test(test_luts_vocab_padding),
      cmocka_unit_test(test_every_truncation),
      cmocka_unit_test(test_wrong_wire_types),
      cmocka_unit_test(test_varint_overflow),
      cmocka_unit_test(test_length_past_end),
      cmocka_unit_test(test_oversized_counts),
      cmocka_unit_test(test_bad_utf8),
      cmocka_unit_test(test_bad_byte_pieces),
      cmocka_unit_test(test_unknown_type_enum),
      cmocka_unit_test(test_groups_and_empty),
      cmocka_unit_test(test_duplicate_pieces),
      cmocka_unit_test(test_long_normalizer_name),
      cmocka_unit_test(test_load_errors),
      cmocka_unit_test(test_real_1024_pieces),
      cmocka_unit_test(test_real_8192_byte_piece),
      cmocka_unit_test(test_real_luts_match_golden),
      cmocka_unit_test(test_real_info_matches_meta),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
