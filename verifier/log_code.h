/* Which shipped script wrote a log: many logs begin with a copy of the
 * script's source (the official logger writes the code, then a row of
 * '='). pgolf compares that copy with every shipped .py, and with the
 * decoded payload of a self-extracting one, statement by statement
 * (verifier/pysrc.h, verifier/seq_diff.h), and classifies the closest:
 *
 *   LC_SAME      identical text;
 *   LC_LAYOUT    the same statements; only comments, docstrings, blank
 *                lines or spacing differ;
 *   LC_PARTIAL   the log holds a contiguous part of the script;
 *   LC_CONFIG    only statements that read environment variables differ
 *                (one added or removed, or a default changed where the
 *                README's run sets the variable, or the seed);
 *   LC_DEFAULTS  as LC_CONFIG, but a default changed that the README does
 *                not set: the documented run would not be the logged one;
 *   LC_PRINTS    besides those, only what the script prints (or an
 *                exception's message), an assignment nothing reads, an
 *                import nothing uses or the guard around an import
 *                (verifier/inert_stmt.h): the same numbers, other text;
 *   LC_CODE      other statements differ: different code wrote the log;
 *   LC_OTHER     no shipped script shares half its statements with it.
 *
 * A log without a copy of a script (LC_NONE) is not compared. */
#ifndef PGOLF_LOG_CODE_H
#define PGOLF_LOG_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "verifier/submission.h"

/* Fewer statements than this above the '=' row are not a script copy. */
#define LOG_CODE_MIN_STATEMENTS 20
/* Diffs needing more edits than this are reported as "differs
 * throughout" without an alignment. */
#define LOG_CODE_MAX_EDITS 1500

typedef enum log_code_class {
  LC_NONE,
  LC_SAME,
  LC_LAYOUT,
  LC_PARTIAL,
  LC_CONFIG,
  LC_DEFAULTS,
  LC_PRINTS,
  LC_CODE,
  LC_OTHER
} log_code_class;

typedef struct log_code_result {
  log_code_class cls;
  char script[512];   /* the closest shipped file, "" if none */
  int decoded;        /* compared with its decoded payload */
  uint32_t first, last; /* the copy's lines in the log */
  size_t statements;  /* statements in the log's copy */
  size_t common;      /* statements shared with the script */
  size_t hunks;       /* places where they differ */
  size_t code_hunks;  /* of those, the places in code (LC_CODE): not what is
                         printed, settings read, or inert statements */
  int partial;        /* the copy holds only part of the script */
  char detail[700];   /* an example difference (LC_CODE: the first in a statement that
                         runs, else in a definition), or the variables, for messages */
} log_code_result;

struct code_count;

/* Compare every log of s with the shipped scripts: out[i] for s->logs[i]
 * (out has s->n_logs entries). run supplies the README's environment.
 * Unreadable logs or scripts give LC_NONE. -1 only for memory. */
int log_code_match_all(const submission *s, const struct code_count *cc, log_code_result *out);

/* Compare one log text (its copy at lines [first, last]) with scripts
 * given as texts: exposed for tests and the fuzz target. names[i] labels
 * texts[i]; env_set(var, dflt) says whether the README sets var or states
 * the value dflt (the shipped default's text; NULL when none) for it. A
 * changed default whose shipped value the log prints as a hyperparameter
 * (`matrix_lr:0.02`) is no difference either. */
int log_code_compare(const char *log, size_t len, uint32_t first, uint32_t last,
                     const char *const *names, const char *const *texts, const size_t *lens,
                     size_t n, int (*env_set)(const char *var, const char *dflt, void *ctx),
                     void *ctx, log_code_result *out);

const char *log_code_class_name(log_code_class c);

#endif
