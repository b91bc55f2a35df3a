/* Self-extracting scripts: payloads built here with liblzma's, zlib's and
 * libbrotlienc's encoders and a base85 encoder, decoded back; plain scripts are not
 * wrappers; broken payloads are errors naming the file and line. */
#include "tests/test_util.h"

#include <brotli/encode.h>
#include <lzma.h>
#include <zlib.h>

#include "verifier/code_wrapper.h"

static const char B85[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/* Python's b85encode (no padding). */
static char *b85(const uint8_t *p, size_t n) {
  char *o = malloc(n / 4 * 5 + 10);
  size_t k = 0;
  for (size_t i = 0; i < n; i += 4) {
    uint32_t acc = 0;
    size_t take = n - i < 4 ? n - i : 4;
    for (size_t j = 0; j < 4; j++) acc = acc << 8 | (j < take ? p[i + j] : 0);
    char g[5];
    for (int j = 4; j >= 0; j--) g[j] = B85[acc % 85], acc /= 85;
    memcpy(o + k, g, take + 1);
    k += take + 1;
  }
  o[k] = 0;
  return o;
}

static const char *SOURCE =
    "import os\n"
    "if int(os.environ.get('NGRAM','0')):\n"
    "    from ngram_tilt import Tilt\n"
    "print('hello from the payload')\n";

static size_t raw_lzma2(const char *src, uint8_t *out, size_t cap) {
  lzma_options_lzma opt;
  assert_false(lzma_lzma_preset(&opt, LZMA_PRESET_DEFAULT));
  lzma_filter f[2] = {{LZMA_FILTER_LZMA2, &opt}, {LZMA_VLI_UNKNOWN, NULL}};
  size_t pos = 0;
  assert_int_equal(lzma_raw_buffer_encode(f, NULL, (const uint8_t *)src, strlen(src), out, &pos, cap),
                   LZMA_OK);
  return pos;
}

static void unwrap_ok(const char *script, const char *codec) {
  code_wrapper w;
  pg_error e;
  assert_int_equal(code_unwrap(script, strlen(script), "train_gpt.py", &w, &e), 0);
  assert_true(w.found);
  assert_int_equal(w.len, strlen(SOURCE));
  assert_string_equal(w.text, SOURCE);
  assert_string_equal(w.codec, codec);
  code_wrapper_free(&w);
}

static void test_raw_lzma2_base85(void **st) {
  (void)st;
  uint8_t buf[4096];
  size_t n = raw_lzma2(SOURCE, buf, sizeof buf);
  char *enc = b85(buf, n);
  char script[8192];
  /* The payload split over two adjacent literals, as some records do. */
  size_t half = strlen(enc) / 2;
  snprintf(script, sizeof script,
           "import lzma as L,base64 as B\n__wrapper_size__=123\n"
           "exec(L.decompress(B.b85decode(\"%.*s\"\n\"%s\"),format=L.FORMAT_RAW,"
           "filters=[{\"id\":L.FILTER_LZMA2}]))\n",
           (int)half, enc, enc + half);
  unwrap_ok(script, "lzma (raw LZMA2)");
  free(enc);
}

static void test_xz_and_zlib(void **st) {
  (void)st;
  uint8_t buf[4096];
  size_t n = 0;
  assert_int_equal(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, (const uint8_t *)SOURCE,
                                           strlen(SOURCE), buf, &n, sizeof buf),
                   LZMA_OK);
  char *enc = b85(buf, n);
  char script[8192];
  snprintf(script, sizeof script, "import lzma,base64\nexec(lzma.decompress(base64.b85decode(b'%s')))\n",
           enc);
  unwrap_ok(script, "lzma (xz)");
  free(enc);
  uLongf zn = sizeof buf;
  assert_int_equal(compress2(buf, &zn, (const Bytef *)SOURCE, strlen(SOURCE), 9), Z_OK);
  enc = b85(buf, zn);
  snprintf(script, sizeof script, "import zlib,base64;exec(zlib.decompress(base64.b85decode('%s')))\n",
           enc);
  unwrap_ok(script, "zlib");
  free(enc);
}

/* brotli has no header: only the call through the brotli module (here an
 * alias, as PR #2050's wrapper writes it) selects the decoder. */
static void test_brotli(void **st) {
  (void)st;
  uint8_t buf[4096];
  size_t n = sizeof buf;
  assert_true(BrotliEncoderCompress(11, 22, BROTLI_MODE_TEXT, strlen(SOURCE), (const uint8_t *)SOURCE,
                                    &n, buf));
  char *enc = b85(buf, n);
  char script[8192];
  snprintf(script, sizeof script, "import brotli as B,base64 as b\nexec(B.decompress(b.b85decode(\"%s\")))\n",
           enc);
  unwrap_ok(script, "brotli");
  free(enc);
  /* Cut short, the stream is an error naming the file and the line. */
  enc = b85(buf, n / 2);
  snprintf(script, sizeof script, "import brotli as B,base64 as b\nexec(B.decompress(b.b85decode(\"%s\")))\n",
           enc);
  code_wrapper w;
  pg_error e;
  assert_int_equal(code_unwrap(script, strlen(script), "w.py", &w, &e), -1);
  assert_int_equal(e.pos, 2);
  assert_non_null(strstr(e.msg, "embedded code (brotli): brotli payload is truncated"));
  free(enc);
}

static void test_not_a_wrapper(void **st) {
  (void)st;
  const char *plain = "import lzma\nx = lzma.decompress(data)\nprint(base64.b85decode('abc'))\n";
  code_wrapper w;
  pg_error e;
  assert_int_equal(code_unwrap(plain, strlen(plain), "t.py", &w, &e), 0);
  assert_false(w.found);
  assert_null(w.text);
}

static void test_broken_payloads(void **st) {
  (void)st;
  code_wrapper w;
  pg_error e;
  const char *bad_char =
      "import lzma as L,base64 as B\n\nexec(L.decompress(B.b85decode(\"abcdefghij\\\\klmnopqrstuv\")))\n";
  assert_int_equal(code_unwrap(bad_char, strlen(bad_char), "w.py", &w, &e), -1);
  assert_string_equal(e.file, "w.py");
  assert_int_equal(e.pos, 3);
  assert_non_null(strstr(e.msg, "bad character 0x5c at position 10"));
  /* A valid base85 blob that is not an lzma stream. */
  const char *junk =
      "import lzma as L,base64 as B\nexec(L.decompress(B.b85decode(\"0123456789012345678901234\")))\n";
  assert_int_equal(code_unwrap(junk, strlen(junk), "w.py", &w, &e), -1);
  assert_non_null(strstr(e.msg, "does not decode"));
  /* A truncated raw stream. */
  uint8_t buf[4096];
  size_t n = raw_lzma2(SOURCE, buf, sizeof buf);
  char *enc = b85(buf, n / 2);
  char script[8192];
  snprintf(script, sizeof script,
           "import lzma as L,base64 as B\nexec(L.decompress(B.b85decode(\"%s\"),format=L.FORMAT_RAW,"
           "filters=[{\"id\":L.FILTER_LZMA2}]))\n", enc);
  assert_int_equal(code_unwrap(script, strlen(script), "w.py", &w, &e), -1);
  assert_non_null(strstr(e.msg, "lzma"));
  free(enc);
  /* An unsupported codec is named. */
  const char *bz = "import bz2,base64\nexec(bz2.decompress(base64.b85decode('0123456789012345678901234')))\n";
  assert_int_equal(code_unwrap(bz, strlen(bz), "w.py", &w, &e), -1);
  assert_non_null(strstr(e.msg, "'bz2'"));
}

static void test_output_bound(void **st) {
  (void)st;
  /* 40 MiB of one byte compresses to a few KiB; decoding stops at the bound. */
  size_t big = 40u << 20;
  char *src = malloc(big + 1);
  memset(src, 'a', big);
  src[big] = 0;
  uint8_t *buf = malloc(1 << 20);
  size_t n = raw_lzma2(src, buf, 1 << 20);
  free(src);
  char *enc = b85(buf, n);
  free(buf);
  size_t cap = strlen(enc) + 256;
  char *script = malloc(cap);
  snprintf(script, cap,
           "import lzma as L,base64 as B\nexec(L.decompress(B.b85decode(\"%s\"),format=L.FORMAT_RAW,"
           "filters=[{\"id\":L.FILTER_LZMA2}]))\n", enc);
  code_wrapper w;
  pg_error e;
  assert_int_equal(code_unwrap(script, strlen(script), "w.py", &w, &e), -1);
  assert_non_null(strstr(e.msg, "more than"));
  free(enc);
  free(script);
}

static void test_b85_roundtrip(void **st) {
  (void)st;
  for (size_t n = 0; n < 40; n++) {
    uint8_t in[40] = {0};
    for (size_t i = 0; i < n; i++) in[i] = (uint8_t)(i * 37 + 250);
    char *enc = b85(in, n);
    uint8_t *out;
    size_t len;
    pg_error e;
    assert_int_equal(code_b85decode(enc, strlen(enc), "x", &out, &len, &e), 0);
    assert_int_equal(len, n);
    if (n) assert_memory_equal(out, in, n);
    free(out);
    free(enc);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_raw_lzma2_base85), cmocka_unit_test(test_xz_and_zlib),
      cmocka_unit_test(test_brotli),
      cmocka_unit_test(test_not_a_wrapper),    cmocka_unit_test(test_broken_payloads),
      cmocka_unit_test(test_output_bound),     cmocka_unit_test(test_b85_roundtrip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
