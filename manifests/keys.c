#include "manifests/keys.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"

int key_generate(EVP_PKEY **out, pg_error *err) {
  *out = NULL;
  EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
  int ok = ctx && EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_keygen(ctx, out) == 1;
  EVP_PKEY_CTX_free(ctx);
  if (!ok) return pg_fail(err, "", -1, "Ed25519 key generation failed");
  return 0;
}

/* Copy a memory BIO's contents into a NUL-terminated malloc'd buffer. */
static int bio_take(BIO *b, char **out, size_t *len, pg_error *err) {
  char *p = NULL;
  long n = BIO_get_mem_data(b, &p);
  if (n < 0 || !(*out = malloc((size_t)n + 1))) return pg_fail(err, "", -1, "out of memory");
  memcpy(*out, p, (size_t)n);
  (*out)[n] = 0;
  *len = (size_t)n;
  OPENSSL_cleanse(p, (size_t)n); /* the BIO may hold private key text */
  return 0;
}

int key_private_pem(EVP_PKEY *k, char **pem, size_t *len, pg_error *err) {
  BIO *b = BIO_new(BIO_s_mem());
  int rc = -1;
  if (b && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) == 1)
    rc = bio_take(b, pem, len, err);
  else
    pg_fail(err, "", -1, "cannot encode the private key as PEM");
  BIO_free(b);
  return rc;
}

int key_public_pem(EVP_PKEY *k, char **pem, size_t *len, pg_error *err) {
  BIO *b = BIO_new(BIO_s_mem());
  int rc = -1;
  if (b && PEM_write_bio_PUBKEY(b, k) == 1)
    rc = bio_take(b, pem, len, err);
  else
    pg_fail(err, "", -1, "cannot encode the public key as PEM");
  BIO_free(b);
  return rc;
}

static int check_ed25519(EVP_PKEY *k, const char *path, pg_error *err) {
  if (EVP_PKEY_get_base_id(k) != EVP_PKEY_ED25519)
    return pg_fail(err, path, -1, "not an Ed25519 key");
  return 0;
}

/* Never prompt on a terminal for an encrypted key's passphrase. */
static int no_passphrase(char *buf, int size, int rwflag, void *u) {
  (void)buf, (void)size, (void)rwflag, (void)u;
  return -1;
}

/* Read path and try each PEM reader in turn on a fresh BIO over it. */
static int load_pem(const char *path, int want_private, EVP_PKEY **out, pg_error *err) {
  uint8_t *buf = NULL;
  size_t len = 0;
  *out = NULL;
  if (file_read_all(path, KEY_MAX_FILE_BYTES, &buf, &len, err) != 0) return -1;
  BIO *b = BIO_new_mem_buf(buf, (int)len);
  if (b) *out = PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL);
  BIO_free(b);
  if (!*out && !want_private && (b = BIO_new_mem_buf(buf, (int)len))) {
    *out = PEM_read_bio_PUBKEY(b, NULL, no_passphrase, NULL);
    BIO_free(b);
  }
  OPENSSL_cleanse(buf, len);
  free(buf);
  ERR_clear_error(); /* failed attempts leave entries that mean nothing here */
  if (!*out)
    return pg_fail(err, path, -1, "not a PEM %s key", want_private ? "private" : "public or private");
  if (check_ed25519(*out, path, err) != 0) {
    EVP_PKEY_free(*out);
    *out = NULL;
    return -1;
  }
  return 0;
}

int key_load_private(const char *path, EVP_PKEY **out, pg_error *err) {
  return load_pem(path, 1, out, err);
}

int key_load_public(const char *path, EVP_PKEY **out, pg_error *err) {
  return load_pem(path, 0, out, err);
}

int key_id(EVP_PKEY *k, char out[SHA256_HEX_LEN + 1], pg_error *err) {
  unsigned char *der = NULL;
  int n = i2d_PUBKEY(k, &der);
  if (n <= 0) return pg_fail(err, "", -1, "cannot encode the public key as DER");
  uint8_t d[SHA256_LEN];
  sha256_buf(der, (size_t)n, d);
  OPENSSL_free(der);
  sha256_hex(d, out);
  return 0;
}
