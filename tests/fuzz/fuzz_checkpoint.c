/* libFuzzer: the checkpoint reader. Digests are checked first, so the
 * fuzzer is also given the input re-sealed with a valid digest, which
 * lets it reach the structural checks. A checkpoint that reads must
 * serialise back to the same bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/sha256.h"
#include "trainer/checkpoint.h"

static void check(const uint8_t *buf, size_t len) {
  checkpoint c;
  pg_error e;
  if (ckpt_parse(buf, len, "fuzz.ckpt", &c, &e) != 0) return;
  uint8_t *out;
  size_t n;
  if (ckpt_serialize(&c, &out, &n, &e) != 0) __builtin_trap();
  if (n != len || memcmp(out, buf, len) != 0) __builtin_trap();
  free(out);
  ckpt_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check(data, size);
  if (size < 32) return 0;
  uint8_t *copy = malloc(size);
  memcpy(copy, data, size);
  sha256_buf(copy, size - 32, copy + size - 32);
  check(copy, size);
  free(copy);
  return 0;
}
