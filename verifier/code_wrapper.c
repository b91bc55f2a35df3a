/* Decoding self-extracting scripts; see code_wrapper.h. */
#include "verifier/code_wrapper.h"

#include <brotli/decode.h>
#include <lzma.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "verifier/pysrc.h"

/* Payloads shorter than this are not taken for embedded code. */
#define MIN_PAYLOAD_CHARS 16
/* liblzma's memory limit: far above any dictionary a script needs, far
 * below what a hostile header could ask for. */
#define LZMA_MEMLIMIT (256u << 20)

static const char B85[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

int code_b85decode(const char *s, size_t n, const char *name, uint8_t **out, size_t *out_len,
                   pg_error *err) {
  int8_t val[256];
  memset(val, -1, sizeof val);
  for (int i = 0; i < 85; i++) val[(unsigned char)B85[i]] = (int8_t)i;
  size_t groups = (n + 4) / 5;
  uint8_t *o = malloc(groups * 4 + 1);
  if (!o) return pg_fail(err, name, -1, "out of memory decoding base85");
  for (size_t g = 0; g < groups; g++) {
    uint64_t acc = 0;
    for (size_t k = 0; k < 5; k++) {
      size_t i = g * 5 + k;
      int v = 84; /* '~' pads a short last group, as Python does */
      if (i < n) {
        v = val[(unsigned char)s[i]];
        if (v < 0) {
          free(o);
          return pg_fail(err, name, -1, "base85 payload: bad character 0x%02x at position %zu",
                         (unsigned char)s[i], i);
        }
      }
      acc = acc * 85 + (uint64_t)v;
    }
    if (acc > 0xffffffffu) {
      free(o);
      return pg_fail(err, name, -1, "base85 payload: group at position %zu overflows", g * 5);
    }
    for (int k = 0; k < 4; k++) o[g * 4 + (size_t)k] = (uint8_t)(acc >> (24 - 8 * k));
  }
  size_t pad = groups * 5 - n;
  *out = o;
  *out_len = groups * 4 - pad;
  return 0;
}

/* OpenSSL's base64 decoder (it skips whitespace and handles padding). */
static int b64decode(const char *s, size_t n, const char *name, uint8_t **out, size_t *out_len,
                     pg_error *err) {
  if (n > INT32_MAX / 2) return pg_fail(err, name, -1, "base64 payload too large");
  uint8_t *o = malloc(n / 4 * 3 + 8);
  EVP_ENCODE_CTX *ctx = EVP_ENCODE_CTX_new();
  int a = 0, b = 0;
  if (!o || !ctx) {
    free(o);
    EVP_ENCODE_CTX_free(ctx);
    return pg_fail(err, name, -1, "out of memory decoding base64");
  }
  EVP_DecodeInit(ctx);
  int rc = EVP_DecodeUpdate(ctx, o, &a, (const unsigned char *)s, (int)n);
  if (rc >= 0) rc = EVP_DecodeFinal(ctx, o + a, &b);
  EVP_ENCODE_CTX_free(ctx);
  if (rc < 0) {
    free(o);
    return pg_fail(err, name, -1, "base64 payload does not decode");
  }
  *out = o;
  *out_len = (size_t)a + (size_t)b;
  return 0;
}

/* Room for more output, up to the bound. */
static int grow_out(uint8_t **buf, size_t *cap, const char *name, pg_error *err) {
  if (*cap >= CODE_WRAP_MAX_OUT)
    return pg_fail(err, name, -1, "embedded code decodes to more than %u bytes", CODE_WRAP_MAX_OUT);
  size_t c = *cap * 2;
  if (c > CODE_WRAP_MAX_OUT) c = CODE_WRAP_MAX_OUT;
  uint8_t *nb = realloc(*buf, c + 1);
  if (!nb) return pg_fail(err, name, -1, "out of memory decoding embedded code");
  *buf = nb;
  *cap = c;
  return 0;
}

/* raw: 0 xz/.lzma (auto), 1 raw LZMA2, 2 raw LZMA1. */
static int unlzma(const uint8_t *in, size_t n, int raw, const char *name, uint8_t **out,
                  size_t *out_len, pg_error *err) {
  lzma_stream st = LZMA_STREAM_INIT;
  lzma_options_lzma opt;
  lzma_ret r;
  if (raw) {
    if (lzma_lzma_preset(&opt, LZMA_PRESET_DEFAULT))
      return pg_fail(err, name, -1, "liblzma: no default preset");
    lzma_filter f[2] = {{raw == 1 ? LZMA_FILTER_LZMA2 : LZMA_FILTER_LZMA1, &opt},
                        {LZMA_VLI_UNKNOWN, NULL}};
    r = lzma_raw_decoder(&st, f);
  } else {
    r = lzma_auto_decoder(&st, LZMA_MEMLIMIT, LZMA_CONCATENATED);
  }
  if (r != LZMA_OK) return pg_fail(err, name, -1, "liblzma: cannot start the decoder (%d)", (int)r);
  size_t cap = n * 4 < 4096 ? 4096 : n * 4;
  if (cap > CODE_WRAP_MAX_OUT) cap = CODE_WRAP_MAX_OUT;
  uint8_t *buf = malloc(cap + 1);
  if (!buf) {
    lzma_end(&st);
    return pg_fail(err, name, -1, "out of memory decoding embedded code");
  }
  st.next_in = in;
  st.avail_in = n;
  st.next_out = buf;
  st.avail_out = cap;
  for (;;) {
    r = lzma_code(&st, LZMA_FINISH);
    if (r == LZMA_STREAM_END) break;
    if (r == LZMA_OK && st.avail_out == 0) {
      size_t used = cap;
      if (grow_out(&buf, &cap, name, err)) goto fail;
      st.next_out = buf + used;
      st.avail_out = cap - used;
      continue;
    }
    if (r == LZMA_OK || r == LZMA_BUF_ERROR) {
      pg_fail(err, name, -1, "lzma payload is truncated");
      goto fail;
    }
    pg_fail(err, name, -1, "lzma payload does not decode (%s)",
            r == LZMA_MEMLIMIT_ERROR ? "it needs more than 256 MiB of memory"
            : r == LZMA_FORMAT_ERROR ? "not an xz or lzma stream"
                                     : "corrupt data");
    goto fail;
  }
  *out_len = cap - st.avail_out;
  lzma_end(&st);
  *out = buf;
  return 0;
fail:
  lzma_end(&st);
  free(buf);
  return -1;
}

/* zlib or gzip (zlib detects which from the header). */
static int unzlib(const uint8_t *in, size_t n, const char *name, uint8_t **out, size_t *out_len,
                  pg_error *err) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (n > UINT32_MAX || inflateInit2(&z, 15 + 32) != Z_OK)
    return pg_fail(err, name, -1, "zlib: cannot start the decoder");
  size_t cap = n * 4 < 4096 ? 4096 : n * 4;
  if (cap > CODE_WRAP_MAX_OUT) cap = CODE_WRAP_MAX_OUT;
  uint8_t *buf = malloc(cap + 1);
  if (!buf) {
    inflateEnd(&z);
    return pg_fail(err, name, -1, "out of memory decoding embedded code");
  }
  z.next_in = (Bytef *)(uintptr_t)in;
  z.avail_in = (uInt)n;
  size_t used = 0;
  for (;;) {
    z.next_out = buf + used;
    z.avail_out = (uInt)(cap - used);
    int r = inflate(&z, Z_NO_FLUSH);
    used = cap - z.avail_out;
    if (r == Z_STREAM_END) break;
    if (r == Z_OK && z.avail_out == 0) {
      if (grow_out(&buf, &cap, name, err)) goto fail;
      continue;
    }
    pg_fail(err, name, -1, "zlib payload %s", r == Z_OK || r == Z_BUF_ERROR ? "is truncated"
                                                                           : "does not decode");
    goto fail;
  }
  inflateEnd(&z);
  *out = buf;
  *out_len = used;
  return 0;
fail:
  inflateEnd(&z);
  free(buf);
  return -1;
}

/* brotli (Python's brotli.decompress: a raw Brotli stream, no header to
 * tell it by, so only a call through the brotli module selects it). */
static int unbrotli(const uint8_t *in, size_t n, const char *name, uint8_t **out, size_t *out_len,
                    pg_error *err) {
  BrotliDecoderState *st = BrotliDecoderCreateInstance(NULL, NULL, NULL);
  if (!st) return pg_fail(err, name, -1, "brotli: cannot start the decoder");
  size_t cap = n * 4 < 4096 ? 4096 : n * 4;
  if (cap > CODE_WRAP_MAX_OUT) cap = CODE_WRAP_MAX_OUT;
  uint8_t *buf = malloc(cap + 1);
  if (!buf) {
    BrotliDecoderDestroyInstance(st);
    return pg_fail(err, name, -1, "out of memory decoding embedded code");
  }
  const uint8_t *next_in = in;
  size_t avail_in = n, used = 0;
  for (;;) {
    uint8_t *next_out = buf + used;
    size_t avail_out = cap - used;
    BrotliDecoderResult r =
        BrotliDecoderDecompressStream(st, &avail_in, &next_in, &avail_out, &next_out, NULL);
    used = cap - avail_out;
    if (r == BROTLI_DECODER_RESULT_SUCCESS) break;
    if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) {
      if (grow_out(&buf, &cap, name, err)) goto fail;
      continue;
    }
    pg_fail(err, name, -1, "brotli payload %s",
            r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT
                ? "is truncated"
                : BrotliDecoderErrorString(BrotliDecoderGetErrorCode(st)));
    goto fail;
  }
  BrotliDecoderDestroyInstance(st);
  *out = buf;
  *out_len = used;
  return 0;
fail:
  BrotliDecoderDestroyInstance(st);
  free(buf);
  return -1;
}

/* ---- finding the payload ---- */

#define MAX_ALIASES 64

typedef struct alias {
  char name[64], module[64];
} alias;

static void copy_word(char *dst, size_t cap, const char *s, size_t n) {
  if (n >= cap) n = cap - 1;
  memcpy(dst, s, n);
  dst[n] = 0;
}

static int word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

/* `import a as b,c` statements: each imported module under its local name. */
static size_t collect_aliases(const py_src *src, alias *a) {
  size_t n = 0;
  for (size_t i = 0; i < src->n; i++) {
    const char *t = src->v[i].text;
    if (strncmp(t, "import ", 7)) continue;
    const char *p = t + 7;
    while (*p && n < MAX_ALIASES) {
      const char *m = p;
      while (word_char(*p)) p++;
      size_t mlen = (size_t)(p - m);
      const char *nm = m;
      size_t nlen = mlen;
      if (!strncmp(p, " as ", 4)) {
        nm = p + 4;
        p = nm;
        while (word_char(*p)) p++;
        nlen = (size_t)(p - nm);
      }
      if (mlen) {
        copy_word(a[n].module, sizeof a[n].module, m, mlen);
        copy_word(a[n].name, sizeof a[n].name, nm, nlen);
        n++;
      }
      if (*p != ',') break;
      p++;
    }
  }
  return n;
}

static const char *resolve(const alias *a, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(a[i].name, name)) return a[i].module;
  return name;
}

/* The joined string literals inside the call whose '(' is at open. */
static char *call_literals(const py_stmt *s, size_t open, size_t *len) {
  size_t depth = 0, end = s->len, pos = open;
  py_str str;
  /* Find the matching ')' while skipping literals. */
  for (size_t i = open; i < s->len; i++) {
    char c = s->text[i];
    if (c == '"' || c == '\'') {
      size_t p = i;
      if (!pysrc_next_string(s->text, s->len, &p, &str)) break;
      i = p - 1;
      continue;
    }
    if (c == '(') depth++;
    if (c == ')' && --depth == 0) {
      end = i;
      break;
    }
  }
  char *out = malloc(end - open + 1);
  if (!out) return NULL;
  *len = 0;
  while (pysrc_next_string(s->text, end, &pos, &str)) {
    memcpy(out + *len, str.body, str.len);
    *len += str.len;
  }
  out[*len] = 0;
  return out;
}

/* The module whose decompress() takes the payload: the word before the
 * last ".decompress(" ahead of the decode call, resolved through the
 * script's import aliases. */
static void codec_module(const py_stmt *s, size_t decode_at, const alias *a, size_t na,
                         char *module, size_t cap) {
  module[0] = 0;
  const char *hit = NULL;
  for (const char *p = s->text; (p = strstr(p, "decompress(")) && (size_t)(p - s->text) < decode_at;
       p++)
    hit = p;
  if (!hit || hit == s->text || hit[-1] != '.') return;
  const char *e = hit - 1, *b = e;
  while (b > s->text && word_char(b[-1]) && b[-1] != '.') b--;
  char name[64];
  copy_word(name, sizeof name, b, (size_t)(e - b));
  snprintf(module, cap, "%s", resolve(a, na, name));
}

static int decode_payload(const py_stmt *s, const char *module, const uint8_t *bin, size_t n,
                          const char *name, code_wrapper *w, pg_error *err) {
  uint8_t *out = NULL;
  size_t len = 0;
  int rc;
  int is_xz = n >= 6 && !memcmp(bin, "\xfd" "7zXZ\0", 6);
  if (!strcmp(module, "lzma") || (!module[0] && (is_xz || strstr(s->text, "FORMAT_RAW")))) {
    int raw = strstr(s->text, "FORMAT_RAW") ? (strstr(s->text, "FILTER_LZMA1") ? 2 : 1) : 0;
    snprintf(w->codec, sizeof w->codec, "lzma (%s)", raw == 2 ? "raw LZMA1" : raw ? "raw LZMA2" : "xz");
    snprintf(w->library, sizeof w->library, "liblzma %s", lzma_version_string());
    rc = unlzma(bin, n, raw, name, &out, &len, err);
  } else if (!strcmp(module, "zlib") || !strcmp(module, "gzip") ||
             (!module[0] && n >= 2 && (bin[0] == 0x78 || (bin[0] == 0x1f && bin[1] == 0x8b)))) {
    snprintf(w->codec, sizeof w->codec, "%s", !strcmp(module, "gzip") ? "gzip" : "zlib");
    snprintf(w->library, sizeof w->library, "zlib %s", zlibVersion());
    rc = unzlib(bin, n, name, &out, &len, err);
  } else if (!strcmp(module, "brotli")) {
    uint32_t v = BrotliDecoderVersion();
    snprintf(w->codec, sizeof w->codec, "brotli");
    snprintf(w->library, sizeof w->library, "libbrotlidec %u.%u.%u", v >> 24, (v >> 12) & 0xfff,
             v & 0xfff);
    rc = unbrotli(bin, n, name, &out, &len, err);
  } else {
    return pg_fail_line(err, name, s->line,
                        "embedded code is compressed with '%s', which pgolf does not decode "
                        "(lzma, zlib, gzip and brotli are read)",
                        module[0] ? module : "an unnamed codec");
  }
  if (rc) {
    char msg[PG_ERR_MSG];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return pg_fail_line(err, name, s->line, "embedded code (%s): %s", w->codec, msg);
  }
  out[len] = 0;
  w->text = (char *)out;
  w->len = len;
  w->found = 1;
  w->line = s->line;
  return 0;
}

/* One statement: a payload there? 0 none, 1 decoded, -1 error. */
static int try_stmt(const py_stmt *s, const alias *a, size_t na, const char *name,
                    code_wrapper *w, pg_error *err) {
  const char *d85 = strstr(s->text, "b85decode("), *d64 = strstr(s->text, "b64decode(");
  const char *d = d85 ? d85 : d64;
  if (!d || !strstr(s->text, "decompress(")) return 0;
  size_t open = (size_t)(d - s->text) + 9, chars;
  char *lit = call_literals(s, open, &chars);
  if (!lit) return pg_fail(err, name, -1, "out of memory");
  if (chars < MIN_PAYLOAD_CHARS) {
    free(lit);
    return 0;
  }
  snprintf(w->encoding, sizeof w->encoding, "%s", d == d85 ? "base85" : "base64");
  uint8_t *bin;
  size_t n;
  int rc = d == d85 ? code_b85decode(lit, chars, name, &bin, &n, err)
                    : b64decode(lit, chars, name, &bin, &n, err);
  free(lit);
  if (rc) {
    char msg[PG_ERR_MSG];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return pg_fail_line(err, name, s->line, "embedded code: %s", msg);
  }
  char module[64];
  codec_module(s, (size_t)(d - s->text), a, na, module, sizeof module);
  w->payload = n;
  rc = decode_payload(s, module, bin, n, name, w, err);
  free(bin);
  return rc ? -1 : 1;
}

int code_unwrap(const char *text, size_t len, const char *name, code_wrapper *w, pg_error *err) {
  memset(w, 0, sizeof *w);
  py_src src;
  if (pysrc_parse(text, len, name, &src, err)) return -1;
  alias a[MAX_ALIASES];
  size_t na = collect_aliases(&src, a);
  int rc = 0;
  for (size_t i = 0; i < src.n && rc == 0; i++) rc = try_stmt(&src.v[i], a, na, name, w, err);
  pysrc_free(&src);
  if (rc < 0) {
    code_wrapper_free(w);
    return -1;
  }
  return 0;
}

void code_wrapper_free(code_wrapper *w) {
  free(w->text);
  memset(w, 0, sizeof *w);
}
