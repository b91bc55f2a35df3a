/* Ed25519 signing keys in PEM, through OpenSSL's EVP_PKEY.
 * Private keys are PKCS#8 ("BEGIN PRIVATE KEY"), public keys
 * SubjectPublicKeyInfo ("BEGIN PUBLIC KEY"). A key's id is the SHA-256
 * (64 lowercase hex) of its public key's DER SubjectPublicKeyInfo, so the
 * same key has the same id whichever file it was read from. */
#ifndef PGOLF_KEYS_H
#define PGOLF_KEYS_H

#include <openssl/evp.h>
#include <stddef.h>

#include "common/error.h"
#include "common/sha256.h"

#define KEY_MAX_FILE_BYTES (64u << 10)

int key_generate(EVP_PKEY **out, pg_error *err);
/* PEM text in a fresh malloc'd buffer (*len bytes, NUL-terminated). The
 * private one should be wiped with OPENSSL_cleanse before free. */
int key_private_pem(EVP_PKEY *k, char **pem, size_t *len, pg_error *err);
int key_public_pem(EVP_PKEY *k, char **pem, size_t *len, pg_error *err);
/* Read a PEM key file; anything but an Ed25519 key is an error. The
 * public loader also accepts a private key file (its public half). */
int key_load_private(const char *path, EVP_PKEY **out, pg_error *err);
int key_load_public(const char *path, EVP_PKEY **out, pg_error *err);
int key_id(EVP_PKEY *k, char out[SHA256_HEX_LEN + 1], pg_error *err);

#endif
