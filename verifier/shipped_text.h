/* The texts of a submission's shipped Python scripts, for the rules that
 * read their statements (verifier/log_code.c compares a log's copy with
 * them, verifier/rule_config.c looks for settings printed from the seed,
 * the rules of the counted code's evaluation read its builders and loops):
 * each .py of the counted code (submission.code), read once, and after a
 * self-extracting one its decoded payload (verifier/code_wrapper.h), the
 * code that runs. A file that cannot be read, or a payload that does not
 * decode, is left out here; the code count reports both. */
#ifndef PGOLF_SHIPPED_TEXT_H
#define PGOLF_SHIPPED_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "verifier/code_wrapper.h"
#include "verifier/pysrc.h"
#include "verifier/submission.h"

typedef struct shipped_text {
  const char *name; /* the file's path in the folder (the submission's string) */
  int decoded;      /* the payload of a self-extracting script, not the file */
  const char *text; /* NUL-terminated */
  size_t len;
  py_src src; /* its statements, when lexed */
  int lexed;  /* 0: over PYSRC_MAX_BYTES or out of memory (src empty) */
} shipped_text;

typedef struct shipped_texts {
  shipped_text *v; /* in submission.code order, a payload after its file */
  size_t n;
  uint8_t **raw;      /* owned: each file's bytes */
  code_wrapper *wrap; /* owned: each file's payload */
  size_t files;
  size_t undecoded; /* files whose payload is there but does not decode */
} shipped_texts;

/* Is v[i] the code that runs for its file: a self-extracting script's
 * decoded payload, or a file that has none (or one that does not
 * decode)? */
int shipped_text_runs(const shipped_texts *t, size_t i);

/* Fill *out, each text lexed (free with shipped_texts_free, also after a
 * failure); -1 only when memory runs out. pgolf check loads them once per
 * folder (submission.texts) for every rule that reads the code. */
int shipped_texts_load(const submission *s, shipped_texts *out);
void shipped_texts_free(shipped_texts *t);

#endif
