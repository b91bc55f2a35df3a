/* SHA-256 through OpenSSL's EVP interface. Every digest pgolf prints or
 * stores is 64 lowercase hex characters. */
#ifndef PGOLF_SHA256_H
#define PGOLF_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define SHA256_LEN 32
#define SHA256_HEX_LEN 64

typedef struct sha256_ctx sha256_ctx; /* opaque, wraps EVP_MD_CTX */

sha256_ctx *sha256_new(void);
void sha256_update(sha256_ctx *c, const void *data, size_t len);
void sha256_final(sha256_ctx *c, uint8_t out[SHA256_LEN]); /* also resets for reuse */
void sha256_free(sha256_ctx *c);

void sha256_buf(const void *data, size_t len, uint8_t out[SHA256_LEN]);
/* Stream a file through SHA-256 (never maps or loads it whole). */
int sha256_file(const char *path, uint8_t out[SHA256_LEN], uint64_t *size_out, pg_error *err);

/* out must hold SHA256_HEX_LEN + 1 bytes. */
void sha256_hex(const uint8_t d[SHA256_LEN], char out[SHA256_HEX_LEN + 1]);
/* Parse exactly 64 lowercase hex characters; -1 on anything else. */
int sha256_from_hex(const char *hex, uint8_t out[SHA256_LEN]);

#endif
