/* libFuzzer: the DSSE envelope parser (JSON, strict base64) and PAE;
 * any envelope that parses is checked against a fixed key, which must
 * never verify. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "manifests/dsse.h"
#include "manifests/keys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static EVP_PKEY *key;
  pg_error e;
  if (!key && key_generate(&key, &e) != 0) abort();
  dsse_envelope env;
  if (dsse_parse(data, size, "fuzz.json", &env, &e) == 0) {
    if (dsse_verify(&env, key, "fuzz.json", &e) == 0) __builtin_trap(); /* key is never the signer */
    dsse_free(&env);
  }
  uint8_t *out = NULL;
  size_t n = 0;
  const char *why = NULL;
  if (b64_decode((const char *)data, size, &out, &n, &why) == 0) {
    char *again = b64_encode(out, n); /* strict decoding means encoding gives the input back */
    for (size_t i = 0; i < size; i++)
      if (again[i] != (char)data[i]) __builtin_trap();
    free(again);
    free(out);
  }
  return 0;
}
