/* DSSE envelopes (Dead Simple Signing Envelope) over run manifests:
 *   {"payloadType": "application/vnd.in-toto+json",
 *    "payload": BASE64(exact manifest bytes),
 *    "signatures": [{"keyid": KEYID, "sig": BASE64(Ed25519 signature)}]}
 * The signature covers the pre-authentication encoding
 *   PAE = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
 * (lengths in ASCII decimal), never the JSON around it. Base64 is the
 * standard alphabet with padding, decoded strictly: no whitespace, no
 * URL-safe characters, canonical padding bits. */
#ifndef PGOLF_DSSE_H
#define PGOLF_DSSE_H

#include <jansson.h>
#include <openssl/evp.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define DSSE_PAYLOAD_TYPE "application/vnd.in-toto+json"
#define DSSE_MAX_SIGS 64
#define DSSE_MAX_KEYID 256
#define DSSE_MAX_SIG_B64 1024

/* PAE bytes in a fresh malloc'd buffer; -1 on out of memory. */
int dsse_pae(const char *type, const uint8_t *body, size_t len, uint8_t **out, size_t *out_len);

/* Base64 of in[0..len), malloc'd and NUL-terminated; NULL on out of memory. */
char *b64_encode(const uint8_t *in, size_t len);
/* Strict decode of in[0..len) into a fresh malloc'd buffer (non-NULL
 * even for empty input). -1 with a static reason in *why on bad input. */
int b64_decode(const char *in, size_t len, uint8_t **out, size_t *out_len, const char **why);

typedef struct dsse_sig {
  const char *keyid; /* borrowed from the envelope's JSON */
  uint8_t *sig;
  size_t sig_len;
} dsse_sig;

typedef struct dsse_envelope {
  json_t *root; /* owned reference; strings below point into it */
  const char *payload_type;
  uint8_t *payload;
  size_t payload_len;
  dsse_sig *sigs;
  size_t n_sigs;
} dsse_envelope;

/* 1 if root is a JSON object that claims to be an envelope (has
 * "payloadType" or "signatures"), so readers can tell it from a manifest. */
int dsse_is_envelope(const json_t *root);
/* Validate and decode; takes its own reference to root. */
int dsse_from_json(json_t *root, const char *name, dsse_envelope *env, pg_error *err);
int dsse_parse(const uint8_t *buf, size_t len, const char *name, dsse_envelope *env, pg_error *err);
void dsse_free(dsse_envelope *env);

/* Sign payload with an Ed25519 private key; *out is the envelope JSON
 * (pretty, final newline), malloc'd. */
int dsse_sign(const uint8_t *payload, size_t len, EVP_PKEY *key, char **out, size_t *out_len,
              pg_error *err);

/* Check the envelope against a public key. Returns 0 when a signature with
 * the key's id verifies over the PAE of the exact payload bytes; 1 (err
 * says which) when no signature carries that key's id, or when the one
 * that does fails to verify; -1 on other errors. Also checks payloadType. */
int dsse_verify(const dsse_envelope *env, EVP_PKEY *pub, const char *name, pg_error *err);

#endif
