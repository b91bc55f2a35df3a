/* Evidence in a submission's logs that a piece of its code ran before the
 * score: rules that find code the README forbids but that a flag may
 * leave off (verifier/rule_val_train.c, verifier/rule_paid_prefix.c) ask
 * the logs whether the run printed what that code prints. */
#ifndef PGOLF_LOG_EVIDENCE_H
#define PGOLF_LOG_EVIDENCE_H

#include <stddef.h>
#include <stdint.h>

#include "verifier/submission.h"

/* Does the line s[0..n) (what the script printed, the logger's prefix
 * stripped) show it? */
typedef int (*log_evidence_match)(const char *s, size_t n, const void *ctx);

typedef struct log_evidence {
  long log;        /* index into s->logs; -1 when no log shows it */
  int backs_claim; /* that log backs the claim */
  uint32_t line;   /* the line */
  char text[200];  /* its text, cut, trailing blanks and CR dropped */
} log_evidence;

/* The first line that match accepts among the lines a run printed before
 * its log's final metric (after a leading copy of the script; logs with
 * no final metric and copies of other logs are skipped), in the logs
 * backing the claim first, then in the others. A log that cannot be read
 * shows nothing. */
void log_evidence_find(const submission *s, log_evidence_match match, const void *ctx,
                       log_evidence *out);

#endif
