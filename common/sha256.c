#include "common/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sha256_ctx {
  EVP_MD_CTX *md;
};

/* Allocation failure inside OpenSSL is not an input error; there is no
 * sensible way to continue hashing, so stop loudly. */
static void ossl_or_abort(int ok) {
  if (!ok) abort();
}

sha256_ctx *sha256_new(void) {
  sha256_ctx *c = malloc(sizeof *c);
  if (!c) abort();
  c->md = EVP_MD_CTX_new();
  ossl_or_abort(c->md != NULL);
  ossl_or_abort(EVP_DigestInit_ex(c->md, EVP_sha256(), NULL));
  return c;
}

void sha256_update(sha256_ctx *c, const void *data, size_t len) {
  if (len) ossl_or_abort(EVP_DigestUpdate(c->md, data, len));
}

void sha256_final(sha256_ctx *c, uint8_t out[SHA256_LEN]) {
  unsigned int n = 0;
  ossl_or_abort(EVP_DigestFinal_ex(c->md, out, &n) && n == SHA256_LEN);
  ossl_or_abort(EVP_DigestInit_ex(c->md, EVP_sha256(), NULL));
}

void sha256_free(sha256_ctx *c) {
  if (!c) return;
  EVP_MD_CTX_free(c->md);
  free(c);
}

void sha256_buf(const void *data, size_t len, uint8_t out[SHA256_LEN]) {
  sha256_ctx *c = sha256_new();
  sha256_update(c, data, len);
  sha256_final(c, out);
  sha256_free(c);
}

int sha256_file(const char *path, uint8_t out[SHA256_LEN], uint64_t *size_out, pg_error *err) {
  int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return pg_fail_errno(err, path, "cannot open");
  enum { CHUNK = 1 << 20 };
  uint8_t *buf = malloc(CHUNK);
  if (!buf) {
    if (fd) close(fd);
    return pg_fail(err, path, -1, "out of memory");
  }
  sha256_ctx *c = sha256_new();
  uint64_t total = 0;
  int rc = 0;
  for (;;) {
    ssize_t r = read(fd, buf, CHUNK);
    if (r < 0) {
      if (errno == EINTR) continue;
      rc = pg_fail_errno(err, path, "read failed");
      break;
    }
    if (r == 0) break;
    sha256_update(c, buf, (size_t)r);
    total += (uint64_t)r;
  }
  if (rc == 0) sha256_final(c, out);
  sha256_free(c);
  free(buf);
  if (fd) close(fd);
  if (rc == 0 && size_out) *size_out = total;
  return rc;
}

void sha256_hex(const uint8_t d[SHA256_LEN], char out[SHA256_HEX_LEN + 1]) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < SHA256_LEN; i++) {
    out[2 * i] = digits[d[i] >> 4];
    out[2 * i + 1] = digits[d[i] & 15];
  }
  out[SHA256_HEX_LEN] = 0;
}

static int hexval(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  return -1;
}

int sha256_from_hex(const char *hex, uint8_t out[SHA256_LEN]) {
  if (!hex || strlen(hex) != SHA256_HEX_LEN) return -1;
  for (int i = 0; i < SHA256_LEN; i++) {
    int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return -1;
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  return 0;
}
