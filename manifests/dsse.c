#include "manifests/dsse.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_read.h"
#include "manifests/keys.h"

int dsse_pae(const char *type, const uint8_t *body, size_t len, uint8_t **out, size_t *out_len) {
  char head[128];
  size_t tlen = strlen(type);
  int hn = snprintf(head, sizeof head, "DSSEv1 %zu ", tlen);
  char mid[64];
  int mn = snprintf(mid, sizeof mid, " %zu ", len);
  size_t total = (size_t)hn + tlen + (size_t)mn + len;
  uint8_t *p = malloc(total ? total : 1);
  if (!p) return -1;
  memcpy(p, head, (size_t)hn);
  memcpy(p + hn, type, tlen);
  memcpy(p + hn + tlen, mid, (size_t)mn);
  if (len) memcpy(p + hn + tlen + mn, body, len);
  *out = p;
  *out_len = total;
  return 0;
}

/* EVP_EncodeBlock/DecodeBlock take int lengths: work in chunks that are
 * whole base64 quanta and far below INT_MAX. */
#define B64_IN_CHUNK (3u << 20)
#define B64_OUT_CHUNK (4u << 20)

char *b64_encode(const uint8_t *in, size_t len) {
  size_t olen = (len + 2) / 3 * 4;
  char *out = malloc(olen + 1);
  if (!out) return NULL;
  size_t o = 0;
  for (size_t i = 0; i < len; i += B64_IN_CHUNK) {
    size_t n = len - i < B64_IN_CHUNK ? len - i : B64_IN_CHUNK;
    o += (size_t)EVP_EncodeBlock((unsigned char *)out + o, in + i, (int)n);
  }
  out[o] = 0;
  return out;
}

static int b64_val(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

/* Everything EVP_DecodeBlock would tolerate but a canonical encoding
 * never contains is refused here, before it runs. */
static int b64_check(const char *in, size_t len, size_t *pad, const char **why) {
  *pad = 0;
  if (len % 4) return *why = "base64 length is not a multiple of 4", -1;
  if (len && in[len - 1] == '=') *pad = 1 + (in[len - 2] == '=');
  for (size_t i = 0; i < len - *pad; i++)
    if (b64_val((unsigned char)in[i]) < 0)
      return *why = "invalid base64 character (standard alphabet, '=' only at the end)", -1;
  if (*pad == 1 && (b64_val((unsigned char)in[len - 2]) & 3))
    return *why = "non-canonical base64 padding bits", -1;
  if (*pad == 2 && (b64_val((unsigned char)in[len - 3]) & 15))
    return *why = "non-canonical base64 padding bits", -1;
  return 0;
}

int b64_decode(const char *in, size_t len, uint8_t **out, size_t *out_len, const char **why) {
  size_t pad;
  if (b64_check(in, len, &pad, why) != 0) return -1;
  uint8_t *p = malloc(len / 4 * 3 + 1);
  if (!p) return *why = "out of memory", -1;
  size_t o = 0;
  for (size_t i = 0; i < len; i += B64_OUT_CHUNK) {
    size_t n = len - i < B64_OUT_CHUNK ? len - i : B64_OUT_CHUNK;
    int r = EVP_DecodeBlock(p + o, (const unsigned char *)in + i, (int)n);
    if (r < 0) {
      free(p);
      return *why = "invalid base64", -1;
    }
    o += (size_t)r;
  }
  *out = p;
  *out_len = o - pad; /* DecodeBlock counts the padding as zero bytes */
  return 0;
}

int dsse_is_envelope(const json_t *root) {
  return json_is_object(root) &&
         (json_object_get(root, "payloadType") || json_object_get(root, "signatures"));
}

static const char *get_string(json_t *obj, const char *key, const char *path, const char *name,
                              pg_error *err) {
  json_t *v = json_object_get(obj, key);
  if (!json_is_string(v)) {
    pg_fail(err, name, -1, "%s%s: expected a string", path, key);
    return NULL;
  }
  return json_string_value(v);
}

static int parse_sig(json_t *s, size_t i, const char *name, dsse_sig *out, pg_error *err) {
  char path[64];
  snprintf(path, sizeof path, "signatures[%zu].", i);
  if (!json_is_object(s)) return pg_fail(err, name, -1, "signatures[%zu]: expected an object", i);
  const char *keyid = get_string(s, "keyid", path, name, err);
  const char *sig = get_string(s, "sig", path, name, err);
  if (!keyid || !sig) return -1;
  if (strlen(keyid) > DSSE_MAX_KEYID)
    return pg_fail(err, name, -1, "%skeyid: longer than %d characters", path, DSSE_MAX_KEYID);
  size_t sl = json_string_length(json_object_get(s, "sig"));
  if (sl > DSSE_MAX_SIG_B64)
    return pg_fail(err, name, -1, "%ssig: longer than %d characters", path, DSSE_MAX_SIG_B64);
  const char *why = NULL;
  if (b64_decode(sig, sl, &out->sig, &out->sig_len, &why) != 0)
    return pg_fail(err, name, -1, "%ssig: %s", path, why);
  out->keyid = keyid;
  return 0;
}

static int parse_sigs(json_t *arr, const char *name, dsse_envelope *env, pg_error *err) {
  if (!json_is_array(arr)) return pg_fail(err, name, -1, "signatures: expected an array");
  size_t n = json_array_size(arr);
  if (n == 0) return pg_fail(err, name, -1, "signatures: empty, the envelope is not signed");
  if (n > DSSE_MAX_SIGS)
    return pg_fail(err, name, -1, "signatures: more than %d entries", DSSE_MAX_SIGS);
  env->sigs = calloc(n, sizeof *env->sigs);
  if (!env->sigs) return pg_fail(err, name, -1, "out of memory");
  for (size_t i = 0; i < n; i++) {
    if (parse_sig(json_array_get(arr, i), i, name, &env->sigs[i], err) != 0) return -1;
    env->n_sigs = i + 1;
  }
  return 0;
}

int dsse_from_json(json_t *root, const char *name, dsse_envelope *env, pg_error *err) {
  memset(env, 0, sizeof *env);
  if (!json_is_object(root)) return pg_fail(err, name, -1, "envelope: expected a JSON object");
  env->root = json_incref(root);
  const char *type = get_string(root, "payloadType", "", name, err);
  const char *payload = type ? get_string(root, "payload", "", name, err) : NULL;
  if (!payload) goto fail;
  env->payload_type = type;
  const char *why = NULL;
  size_t plen = json_string_length(json_object_get(root, "payload"));
  if (b64_decode(payload, plen, &env->payload, &env->payload_len, &why) != 0) {
    pg_fail(err, name, -1, "payload: %s", why);
    goto fail;
  }
  if (parse_sigs(json_object_get(root, "signatures"), name, env, err) != 0) goto fail;
  return 0;
fail:
  dsse_free(env);
  return -1;
}

int dsse_parse(const uint8_t *buf, size_t len, const char *name, dsse_envelope *env, pg_error *err) {
  json_t *root = NULL;
  memset(env, 0, sizeof *env);
  if (json_read_buf(buf, len, name, &root, err) != 0) return -1;
  int rc = dsse_from_json(root, name, env, err);
  json_decref(root);
  return rc;
}

void dsse_free(dsse_envelope *env) {
  for (size_t i = 0; i < env->n_sigs; i++) free(env->sigs[i].sig);
  free(env->sigs);
  free(env->payload);
  json_decref(env->root);
  memset(env, 0, sizeof *env);
}

/* Ed25519 over msg; sig must hold 64 bytes. */
static int ed25519_sign(EVP_PKEY *key, const uint8_t *msg, size_t len, uint8_t sig[64]) {
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  size_t sl = 64;
  int ok = ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) == 1 &&
           EVP_DigestSign(ctx, sig, &sl, msg, len) == 1 && sl == 64;
  EVP_MD_CTX_free(ctx);
  return ok ? 0 : -1;
}

static json_t *envelope_json(const uint8_t *payload, size_t len, const char *keyid,
                             const uint8_t sig[64]) {
  char *p64 = b64_encode(payload, len);
  char *s64 = b64_encode(sig, 64);
  json_t *env = NULL;
  if (p64 && s64)
    env = json_pack("{s:s, s:s, s:[{s:s, s:s}]}", "payloadType", DSSE_PAYLOAD_TYPE, "payload", p64,
                    "signatures", "keyid", keyid, "sig", s64);
  free(p64);
  free(s64);
  return env;
}

int dsse_sign(const uint8_t *payload, size_t len, EVP_PKEY *key, char **out, size_t *out_len,
              pg_error *err) {
  char keyid[SHA256_HEX_LEN + 1];
  if (key_id(key, keyid, err) != 0) return -1;
  uint8_t *pae = NULL, sig[64];
  size_t pae_len = 0;
  if (dsse_pae(DSSE_PAYLOAD_TYPE, payload, len, &pae, &pae_len) != 0)
    return pg_fail(err, "", -1, "out of memory");
  int rc = ed25519_sign(key, pae, pae_len, sig);
  free(pae);
  if (rc != 0) return pg_fail(err, "", -1, "Ed25519 signing failed (is the key a private key?)");
  json_t *env = envelope_json(payload, len, keyid, sig);
  if (!env) return pg_fail(err, "", -1, "out of memory");
  rc = json_write_pretty(env, out, out_len, err);
  json_decref(env);
  return rc;
}

/* 1 verifies, 0 does not. */
static int ed25519_verify(EVP_PKEY *pub, const uint8_t *msg, size_t len, const dsse_sig *s) {
  if (s->sig_len != 64) return 0;
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  int ok = ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pub) == 1 &&
           EVP_DigestVerify(ctx, s->sig, s->sig_len, msg, len) == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}

int dsse_verify(const dsse_envelope *env, EVP_PKEY *pub, const char *name, pg_error *err) {
  char keyid[SHA256_HEX_LEN + 1];
  if (key_id(pub, keyid, err) != 0) return -1;
  if (strcmp(env->payload_type, DSSE_PAYLOAD_TYPE) != 0) {
    pg_fail(err, name, -1, "payloadType is '%.100s', expected '%s'", env->payload_type,
            DSSE_PAYLOAD_TYPE);
    return 1;
  }
  const dsse_sig *mine = NULL;
  for (size_t i = 0; i < env->n_sigs && !mine; i++)
    if (strcmp(env->sigs[i].keyid, keyid) == 0) mine = &env->sigs[i];
  if (!mine) {
    pg_fail(err, name, -1, "wrong key: the envelope is not signed by key %s (it is signed by %.64s%s)",
            keyid, env->sigs[0].keyid, env->n_sigs > 1 ? " and others" : "");
    return 1;
  }
  uint8_t *pae = NULL;
  size_t pae_len = 0;
  if (dsse_pae(env->payload_type, env->payload, env->payload_len, &pae, &pae_len) != 0)
    return pg_fail(err, name, -1, "out of memory");
  int ok = ed25519_verify(pub, pae, pae_len, mine);
  free(pae);
  if (!ok) {
    pg_fail(err, name, -1,
            "signature by key %s does not verify: the payload or the signature was modified", keyid);
    return 1;
  }
  return 0;
}
