/* libFuzzer target: shard_parse on arbitrary bytes must either accept the
 * input with every invariant of a valid shard holding, or reject it with a
 * message and an offset inside (or at the end of) the input. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/shard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* The first byte picks the vocabulary size, so both the plain and the
   * vocabulary-checking paths are explored; the rest is the shard. */
  uint32_t vocab = 0;
  if (size > 0) {
    vocab = data[0] < 128 ? 0 : (uint32_t)(data[0] - 127) * 512; /* 512..65536 */
    data++;
    size--;
  }
  /* A private copy: the harness's buffer ends exactly at size, so ASan
   * sees any read past the end. */
  uint8_t *buf = size ? malloc(size) : NULL;
  if (size) memcpy(buf, data, size);
  shard s;
  pg_error err;
  if (shard_parse(buf, size, "fuzz", vocab, &s, &err) == 0) {
    assert(s.magic == SHARD_MAGIC && s.version == SHARD_VERSION);
    assert(SHARD_HEADER_BYTES + 2 * s.n_tokens == size);
    for (uint64_t i = 0; i < s.n_tokens; i++) {
      uint16_t t = shard_token(&s, i);
      assert(vocab == 0 || t < vocab);
    }
  } else {
    assert(err.msg[0] != 0);
    assert(err.pos >= -1 && err.pos <= (long long)size);
  }
  free(buf);
  return 0;
}
