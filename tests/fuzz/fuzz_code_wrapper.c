/* libFuzzer: decoding self-extracting scripts. The fuzzer's bytes are
 * used twice: as a whole script, and as a base85 payload inside an lzma
 * and a zlib wrapper, so the decoders see arbitrary streams. Decoded text
 * never exceeds the bound. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/code_wrapper.h"

static void one(const char *text, size_t len) {
  code_wrapper w;
  pg_error e;
  if (code_unwrap(text, len, "fuzz.py", &w, &e)) return;
  if (w.found && (!w.text || w.len > CODE_WRAP_MAX_OUT || strlen(w.text) > w.len)) __builtin_trap();
  code_wrapper_free(&w);
}

static const char B85[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  one((const char *)data, size);
  /* The bytes as a base85 payload (the encoder is trivial: one alphabet
   * character per input byte, so every byte string maps to some blob). */
  char *blob = malloc(size + 1);
  if (!blob) return 0;
  for (size_t i = 0; i < size; i++) blob[i] = B85[data[i] % 85];
  blob[size] = 0;
  static const char *shapes[] = {
      ("import lzma as L,base64 as B\nexec(L.decompress(B.b85decode(\"%s\"),format=L.FORMAT_RAW,"
       "filters=[{\"id\":L.FILTER_LZMA2}]))\n"),
      "import lzma,base64\nexec(lzma.decompress(base64.b85decode(b'%s')))\n",
      "import zlib,base64\nexec(zlib.decompress(base64.b85decode('%s')))\n"};
  for (size_t k = 0; k < 3; k++) {
    size_t cap = size + 200;
    char *script = malloc(cap);
    if (!script) break;
    int n = snprintf(script, cap, shapes[k], blob);
    if (n > 0) one(script, (size_t)n);
    free(script);
  }
  free(blob);
  return 0;
}
