/* DSSE: PAE bytes, strict base64, Ed25519 sign/verify, wrong key,
 * tampering, and envelope parsing errors. */
#include "tests/test_util.h"

#include <openssl/x509.h>

#include "manifests/dsse.h"
#include "manifests/keys.h"

static void pae_known_bytes(void **state) {
  (void)state;
  uint8_t *p = NULL;
  size_t n = 0;
  /* The example from the DSSE protocol description. */
  assert_int_equal(dsse_pae("http://example.com/HelloWorld", (const uint8_t *)"hello world", 11, &p, &n), 0);
  const char *want = "DSSEv1 29 http://example.com/HelloWorld 11 hello world";
  assert_int_equal(n, strlen(want));
  assert_memory_equal(p, want, n);
  free(p);
  assert_int_equal(dsse_pae("", NULL, 0, &p, &n), 0);
  assert_int_equal(n, 12);
  assert_memory_equal(p, "DSSEv1 0  0 ", 12);
  free(p);
}

static void b64_vectors(void **state) {
  (void)state;
  const char *plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
  const char *enc[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
  for (int i = 0; i < 7; i++) {
    char *e = b64_encode((const uint8_t *)plain[i], strlen(plain[i]));
    assert_string_equal(e, enc[i]);
    free(e);
    uint8_t *d = NULL;
    size_t n = 0;
    const char *why = NULL;
    assert_int_equal(b64_decode(enc[i], strlen(enc[i]), &d, &n, &why), 0);
    assert_int_equal(n, strlen(plain[i]));
    assert_memory_equal(d, plain[i], n);
    free(d);
  }
}

static void b64_rejects(void **state) {
  (void)state;
  const char *bad[] = {"Zg=",  "Zg==\n", " Zg==", "Z===", "Zh==",  "Zm9=",
                       "Zm-v", "Zm_v",   "Zg==Zg==", "====", "Zm9v====", "Zm\0v"};
  size_t lens[] = {3, 5, 5, 4, 4, 4, 4, 4, 8, 4, 8, 4};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uint8_t *d = NULL;
    size_t n = 0;
    const char *why = NULL;
    if (b64_decode(bad[i], lens[i], &d, &n, &why) != -1) fail_msg("accepted bad base64 #%zu", i);
    assert_non_null(why);
    assert_null(d);
  }
}

static EVP_PKEY *new_key(void) {
  EVP_PKEY *k = NULL;
  pg_error e;
  assert_int_equal(key_generate(&k, &e), 0);
  return k;
}

static void signed_envelope(EVP_PKEY *k, const char *payload, dsse_envelope *env) {
  char *json = NULL;
  size_t len = 0;
  pg_error e;
  assert_int_equal(dsse_sign((const uint8_t *)payload, strlen(payload), k, &json, &len, &e), 0);
  assert_int_equal(dsse_parse((const uint8_t *)json, len, "env.json", env, &e), 0);
  free(json);
}

static void sign_verify_roundtrip(void **state) {
  (void)state;
  EVP_PKEY *k = new_key();
  dsse_envelope env;
  pg_error e;
  const char *payload = "{\"_type\": \"x\"}\n";
  signed_envelope(k, payload, &env);
  assert_string_equal(env.payload_type, DSSE_PAYLOAD_TYPE);
  assert_int_equal(env.payload_len, strlen(payload));
  assert_memory_equal(env.payload, payload, env.payload_len);
  assert_int_equal(env.n_sigs, 1);
  assert_int_equal(env.sigs[0].sig_len, 64);
  char id[SHA256_HEX_LEN + 1];
  assert_int_equal(key_id(k, id, &e), 0);
  assert_string_equal(env.sigs[0].keyid, id);
  assert_int_equal(dsse_verify(&env, k, "env.json", &e), 0);

  env.payload[2] ^= 1; /* tampered payload, same signature */
  assert_int_equal(dsse_verify(&env, k, "env.json", &e), 1);
  assert_non_null(strstr(e.msg, "does not verify"));
  env.payload[2] ^= 1;
  env.sigs[0].sig[10] ^= 0x80; /* tampered signature */
  assert_int_equal(dsse_verify(&env, k, "env.json", &e), 1);
  assert_non_null(strstr(e.msg, "does not verify"));
  dsse_free(&env);
  EVP_PKEY_free(k);
}

static void wrong_key(void **state) {
  (void)state;
  EVP_PKEY *k = new_key(), *other = new_key();
  dsse_envelope env;
  pg_error e;
  signed_envelope(k, "payload", &env);
  assert_int_equal(dsse_verify(&env, other, "env.json", &e), 1);
  assert_non_null(strstr(e.msg, "wrong key"));
  /* Same keyid claimed, signature by another key: still refused. */
  char id[SHA256_HEX_LEN + 1];
  assert_int_equal(key_id(other, id, &e), 0);
  json_t *sig = json_array_get(json_object_get(env.root, "signatures"), 0);
  json_object_set_new(sig, "keyid", json_string(id));
  env.sigs[0].keyid = json_string_value(json_object_get(sig, "keyid"));
  assert_int_equal(dsse_verify(&env, other, "env.json", &e), 1);
  assert_non_null(strstr(e.msg, "does not verify"));
  dsse_free(&env);
  EVP_PKEY_free(k);
  EVP_PKEY_free(other);
}

/* keyid is SHA-256 of the DER SubjectPublicKeyInfo, the same whether the
 * key was read from the private or the public PEM. */
static void keyid_and_pem_files(void **state) {
  (void)state;
  char *dir = test_tmpdir(), kp[600], pp[600];
  snprintf(kp, sizeof kp, "%s/k.key", dir);
  snprintf(pp, sizeof pp, "%s/k.pub", dir);
  EVP_PKEY *k = new_key(), *a = NULL, *b = NULL;
  pg_error e;
  char *pem = NULL;
  size_t n = 0;
  assert_int_equal(key_private_pem(k, &pem, &n, &e), 0);
  assert_non_null(strstr(pem, "-----BEGIN PRIVATE KEY-----"));
  test_write_file(kp, pem, n);
  free(pem);
  assert_int_equal(key_public_pem(k, &pem, &n, &e), 0);
  assert_non_null(strstr(pem, "-----BEGIN PUBLIC KEY-----"));
  test_write_file(pp, pem, n);
  free(pem);
  assert_int_equal(key_load_private(kp, &a, &e), 0);
  assert_int_equal(key_load_public(pp, &b, &e), 0);
  char ia[65], ib[65], ik[65], want[65];
  assert_int_equal(key_id(a, ia, &e), 0);
  assert_int_equal(key_id(b, ib, &e), 0);
  assert_int_equal(key_id(k, ik, &e), 0);
  assert_string_equal(ia, ib);
  assert_string_equal(ia, ik);
  unsigned char *der = NULL;
  int dn = i2d_PUBKEY(k, &der);
  assert_int_equal(dn, 44); /* Ed25519 SPKI: 12 bytes of header, 32 of key */
  uint8_t d[SHA256_LEN];
  sha256_buf(der, (size_t)dn, d);
  sha256_hex(d, want);
  OPENSSL_free(der);
  assert_string_equal(ia, want);
  EVP_PKEY *c = NULL;
  assert_int_equal(key_load_private(pp, &c, &e), -1); /* a public key cannot sign */
  test_write_file(kp, "garbage", 7);
  assert_int_equal(key_load_public(kp, &c, &e), -1);
  assert_non_null(strstr(e.msg, "not a PEM"));
  EVP_PKEY_free(a);
  EVP_PKEY_free(b);
  EVP_PKEY_free(k);
  test_rmdir(dir);
}

static void expect_parse_error(const char *json, const char *what) {
  dsse_envelope env;
  pg_error e;
  memset(&e, 0, sizeof e);
  assert_int_equal(dsse_parse((const uint8_t *)json, strlen(json), "env.json", &env, &e), -1);
  if (!strstr(e.msg, what)) fail_msg("'%s' lacks '%s'", e.msg, what);
  assert_string_equal(e.file, "env.json");
}

static void envelope_errors(void **state) {
  (void)state;
  expect_parse_error("[]", "expected a JSON object");
  expect_parse_error("{\"payload\": \"\", \"signatures\": []}", "payloadType: expected a string");
  expect_parse_error("{\"payloadType\": \"t\", \"payload\": \"Zg=\", \"signatures\": []}",
                     "payload: base64 length");
  expect_parse_error("{\"payloadType\": \"t\", \"payload\": \"Zg==\", \"signatures\": []}",
                     "signatures: empty");
  expect_parse_error("{\"payloadType\": \"t\", \"payload\": \"Zg==\", \"signatures\": [{\"keyid\": \"k\"}]}",
                     "signatures[0].sig: expected a string");
  expect_parse_error("{\"payloadType\": \"t\", \"payload\": \"Zg==\", \"signatures\": [{\"keyid\": \"k\", \"sig\": \"A\"}]}",
                     "signatures[0].sig: base64 length");
  expect_parse_error("{\"payloadType\": \"t\", \"payloadType\": \"u\"}", "duplicate");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pae_known_bytes),       cmocka_unit_test(b64_vectors),
      cmocka_unit_test(b64_rejects),           cmocka_unit_test(sign_verify_roundtrip),
      cmocka_unit_test(wrong_key),             cmocka_unit_test(keyid_and_pem_files),
      cmocka_unit_test(envelope_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
