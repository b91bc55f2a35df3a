/* TOKENIZER_ACCOUNTING. Challenge README, "Submission Process", criterion
 * 2: "If changes are made to the tokenizer or dataset, prove with
 * certainty that the val_bpb is correctly calculated. Submissions that
 * edit the tokenizer will be examined much more carefully, since bugs may
 * unjustly improve your score."
 *
 * A shipped .model is read with pgolf's own SentencePiece reader and
 * checked for the byte-accounting hazards `pgolf tokenizer info` warns
 * about (the same conditions): characters that fall to the unknown piece
 * count 0 bytes, a missing standalone U+2581 piece, unknown-piece count,
 * user-defined pieces. They are warnings (a reviewer must look); a model
 * that does not parse is an error. */
#include "trainer/tokenizer.h"
#include "verifier/rules.h"

static void check_model(const submission *s, const sub_file *t, finding_list *f) {
  char path[8192];
  snprintf(path, sizeof path, "%s/%s", s->dir, t->rel);
  sp_model m;
  pg_error err;
  if (sp_model_load(path, &m, &err)) {
    findings_add(f, "TOKENIZER_ACCOUNTING", SEV_ERROR, t->rel, 0,
                 "shipped tokenizer does not parse: %s", err.msg);
    return;
  }
  sp_summary sm;
  sp_model_summarize(&m, &sm);
  if (!m.byte_fallback || !sm.all_bytes)
    findings_add(f, "TOKENIZER_ACCOUNTING", SEV_WARNING, t->rel, 0,
                 "no byte fallback (%u/256 byte pieces): characters outside the vocabulary "
                 "become the unknown piece, which counts 0 bytes, so val_bpb undercounts bytes",
                 sm.n_byte_values);
  if (sm.space_piece < 0)
    findings_add(f, "TOKENIZER_ACCOUNTING", SEV_WARNING, t->rel, 0,
                 "no standalone U+2581 piece: a lone space becomes the unknown piece (0 bytes) "
                 "or three byte pieces (3 bytes, not 1)");
  if (sm.n_type[SP_UNKNOWN] != 1)
    findings_add(f, "TOKENIZER_ACCOUNTING", SEV_WARNING, t->rel, 0,
                 "%u unknown pieces (sentencepiece expects exactly 1)", sm.n_type[SP_UNKNOWN]);
  if (sm.n_type[SP_USER_DEFINED] > 0)
    findings_add(f, "TOKENIZER_ACCOUNTING", SEV_WARNING, t->rel, 0,
                 "%u user-defined pieces count their text's bytes like normal pieces; check "
                 "that they are real text",
                 sm.n_type[SP_USER_DEFINED]);
  sp_model_free(&m);
}

void rule_tokenizer(const submission *s, finding_list *f) {
  for (size_t i = 0; i < s->n_tokenizers; i++) check_model(s, &s->tokenizers[i], f);
}
