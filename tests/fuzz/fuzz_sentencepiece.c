/* libFuzzer target: SentencePiece .model parsing and the byte tables.
 * Any input must either parse (and then give tables) or fail with an
 * error naming the input; never crash, leak or read out of bounds. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "formats/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sp_model m;
  pg_error err;
  if (sp_model_parse(data, size, "fuzz.model", &m, &err) != 0) {
    if (err.file[0] == 0) abort(); /* every parse error must name the input */
    return 0;
  }
  sp_summary s;
  sp_model_summarize(&m, &s);
  byte_luts l;
  /* Once at the model's size and once padded, as --vocab does. */
  if (luts_from_model(&m, 0, &l, &err) != 0) abort();
  luts_free(&l);
  if (luts_from_model(&m, m.n_pieces + 7, &l, &err) != 0) abort();
  for (uint32_t i = m.n_pieces; i < l.vocab_size; i++)
    if (!l.is_boundary[i] || l.base_bytes[i]) abort();
  luts_free(&l);
  sp_model_free(&m);
  return 0;
}
