/* libFuzzer target: the artifact reader against a tiny model (1 layer,
 * width 8, vocab 64). The first byte picks the mode:
 *   even: the rest is the artifact file as is (zlib stream);
 *   odd:  the rest is a decompressed payload, compressed here first, so
 *         the fuzzer explores the container parser instead of deflate.
 * Accepted inputs must dequantize, and re-encoding the parsed model must
 * give back exactly the payload that was read. Rejected inputs must say
 * why, at an offset inside (or at the end of) the input. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "trainer/artifact.h"

static gpt_layout layout;
static int have_layout;

static void init_layout(void) {
  if (have_layout) return;
  gpt_config c;
  gpt_config_preset("tiny", &c);
  c.vocab_size = 64, c.num_layers = 1, c.model_dim = 8, c.num_heads = 2, c.num_kv_heads = 1;
  c.seq_len = 16;
  if (gpt_layout_init(&layout, &c, NULL)) abort();
  have_layout = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  init_layout();
  if (size == 0) return 0;
  int raw_mode = data[0] & 1;
  data++, size--;
  uint8_t *in = NULL;
  size_t in_len = 0;
  if (raw_mode) {
    uLongf cap = compressBound((uLong)size);
    in = malloc(cap + 1);
    if (compress2(in, &cap, data, (uLong)size, 1) != Z_OK) abort();
    in_len = cap;
  } else {
    /* a private copy that ends exactly at size, so ASan sees overreads */
    in = malloc(size ? size : 1);
    memcpy(in, data, size);
    in_len = size;
  }
  quant_model m;
  pg_error err;
  if (artifact_parse(in, in_len, "fuzz.ptz", &layout, &m, &err) == 0) {
    float *flat = malloc(layout.n_params * sizeof *flat);
    assert(quant_model_dequantize(&m, &layout, flat, &err) == 0);
    free(flat);
    uint8_t *again;
    size_t again_len;
    assert(artifact_encode(&m, &again, &again_len, &err) == 0);
    if (raw_mode) assert(again_len == size && memcmp(again, data, size) == 0);
    free(again);
    quant_model_free(&m);
  } else {
    assert(err.msg[0] != 0);
    assert(err.pos >= -1 && err.pos <= (long long)in_len);
  }
  free(in);
  return 0;
}
