/* The tokenizer's byte-accounting hazards, in one place (see tokenizer.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "formats/tokenizer.h"

__attribute__((format(printf, 2, 3))) static void hazard(sp_hazards *h, const char *fmt, ...) {
  if (h->n >= SP_MAX_HAZARDS) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(h->text[h->n++], sizeof h->text[0], fmt, ap);
  va_end(ap);
}

void sp_accounting_hazards(const sp_model *m, const sp_summary *s, sp_hazards *h) {
  memset(h, 0, sizeof *h);
  if (!m->byte_fallback || !s->all_bytes)
    hazard(h,
           "no byte fallback (trainer flag %s, %ld/256 byte pieces): characters outside the "
           "vocabulary become the unknown piece, which counts 0 bytes, so val_bpb undercounts "
           "bytes",
           m->byte_fallback ? "true" : "false", (long)s->n_byte_values);
  if (s->space_piece < 0)
    hazard(h,
           "no standalone U+2581 piece: a space that cannot join the next piece becomes the "
           "unknown piece (0 bytes) or the 3 byte pieces of U+2581 (3 bytes, not 1)");
  if (s->n_type[SP_UNKNOWN] != 1)
    hazard(h, "%ld unknown pieces (sentencepiece expects exactly 1)",
           (long)s->n_type[SP_UNKNOWN]);
  if (s->first_unknown >= 0 && s->first_unknown != m->unk_id)
    hazard(h, "trainer unk_id %ld is not the unknown piece's id %ld", (long)m->unk_id,
           (long)s->first_unknown);
  if (s->n_type[SP_USER_DEFINED] > 0)
    hazard(h,
           "%ld user-defined pieces: they count their text's bytes like normal pieces, check "
           "that they are real text",
           (long)s->n_type[SP_USER_DEFINED]);
}
