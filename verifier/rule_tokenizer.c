/* TOKENIZER_ACCOUNTING. Challenge README, "Submission Process", criterion
 * 2: "If changes are made to the tokenizer or dataset, prove with
 * certainty that the val_bpb is correctly calculated. Submissions that
 * edit the tokenizer will be examined much more carefully, since bugs may
 * unjustly improve your score."
 *
 * A shipped .model is read with pgolf's own SentencePiece reader and
 * checked for the byte-accounting hazards of formats/tokenizer_hazards.c,
 * the same list `pgolf tokenizer info` prints. They are warnings (a reviewer must look); a model
 * that does not parse is an error. */
#include "formats/tokenizer.h"
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
  sp_hazards h;
  sp_accounting_hazards(&m, &sm, &h);
  for (int i = 0; i < h.n; i++)
    findings_add(f, "TOKENIZER_ACCOUNTING", SEV_WARNING, t->rel, 0, "%s", h.text[i]);
  sp_model_free(&m);
}

void rule_tokenizer(const submission *s, finding_list *f) {
  for (size_t i = 0; i < s->n_tokenizers; i++) check_model(s, &s->tokenizers[i], f);
}
