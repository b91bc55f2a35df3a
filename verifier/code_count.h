/* Which shipped files are the counted code of a submission, and why.
 *
 * Challenge README, FAQ "What exactly counts toward the 16MB artifact
 * size?": "The submission artifact is computed as code bytes plus
 * compressed model bytes. All counted code should live in the
 * `train_gpt.py` script." The counted code is therefore what the submitted
 * run executes: the entry script and everything it loads, and not a
 * readable companion copy that nothing runs.
 *
 * Entry scripts: the top-level train_gpt.py, and every shipped .py that
 * the README's run commands (or the shell scripts they run) launch with
 * torchrun; without either, the scripts launched with python; without
 * those, every top-level .py (said so in the reason).
 *
 * Loaded files, followed from each entry (decoding a self-extracting
 * wrapper first, verifier/code_wrapper.h):
 *   - a module the script imports (`import x`, `from x import y`,
 *     `from .x import y`) that resolves to a .py or package in the folder;
 *   - a file or folder of sources the script names in a string literal
 *     (`open(__file__.replace("train_gpt.py","impl.py"))`,
 *     `_HERE / "ngram" / "kernel.cpp"`): Python, C/C++/CUDA sources,
 *     shared objects and compressed blobs;
 *   - sources the README's or its shell scripts' compiler lines build.
 * An import inside `if`/`elif`/`else`/`while` counts when its condition
 * is a flag the documented run turns on: an environment variable read by
 * the script (directly, or through the attribute the script assigns it
 * to), set by the README, else printed in a log's hyperparameters, else
 * the script's default. A condition pgolf cannot decide makes the file
 * "possibly loaded": a reviewer's question, never an error alone. */
#ifndef PGOLF_CODE_COUNT_H
#define PGOLF_CODE_COUNT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "verifier/code_wrapper.h"
#include "verifier/log_code.h"
#include "verifier/readme_run.h"
#include "verifier/submission.h"

#define CODE_MAX_FILES 1024
#define CODE_MAX_SETS 16
#define CODE_MAX_SOURCE_BYTES (8u << 20)
#define CODE_WHY_MAX 400

typedef enum code_state {
  CODE_COUNTED,    /* the entry or a file it loads */
  CODE_MAYBE,      /* loaded under a condition pgolf cannot decide */
  CODE_NOT_LOADED, /* a conditional load the documented run turns off */
} code_state;

typedef struct code_file {
  char *rel;
  int64_t bytes;
  code_state state;
  char why[CODE_WHY_MAX];
} code_file;

/* One entry script and the files it loads (files[0] is the entry). */
typedef struct code_set {
  code_file *files;
  size_t n;
  int64_t counted; /* bytes of the CODE_COUNTED files */
  int64_t maybe;   /* bytes of the CODE_MAYBE files */
  code_wrapper wrap; /* the entry's decoded payload, if it is a wrapper */
} code_set;

/* A file the count could not read as code (a wrapper that does not
 * decode, a script too large): the reviewer cannot see what runs. */
typedef struct code_problem {
  char *rel;
  char msg[400];
} code_problem;

typedef struct code_count {
  code_set *sets;
  size_t n_sets;
  code_file *unused; /* shipped code no entry loads (state unused) */
  size_t n_unused;
  code_problem *problems;
  size_t n_problems;
  readme_run run;
  char entry_rule[160]; /* how the entries were chosen */
  log_code_result *logs; /* per s->logs[i]: which shipped script wrote it (log_code.h) */
  size_t n_logs;
} code_count;

/* Does set count (CODE_COUNTED) the file rel? */
int code_set_counts(const code_set *set, const char *rel);
/* Does any set of c count it? */
int code_count_counts(const code_count *c, const char *rel);

/* The set whose files include the script that wrote log i, or NULL. */
const code_set *code_count_set_of_log(const code_count *c, size_t i);

/* Count the code of s. Never fails on content (problems are recorded);
 * -1 only when memory runs out. */
int code_count_build(const submission *s, code_count *out, pg_error *err);
void code_count_free(code_count *c);

/* The import targets of one statement's text (`import a.b as c, d`,
 * `from .x import y`): calls fn(module, level, name, ctx) for each, where
 * module is dotted ("" for `from . import y`), level the number of leading
 * dots, and name the imported name for `from` imports (NULL otherwise).
 * Exposed for the fuzz target and tests; returns the number of targets. */
size_t code_import_targets(const char *stmt,
                           void (*fn)(const char *module, int level, const char *name, void *ctx),
                           void *ctx);

const char *code_state_name(code_state s);

/* The count for people: per entry, each file with its bytes and reason,
 * then the shipped code nothing loads (verifier/code_count_out.c). */
void code_count_print(FILE *out, const code_count *c);
/* {"entry_rule", "sets":[{"entry","counted_bytes","maybe_bytes","decoded":{...}|null,
 *  "files":[{"file","bytes","state","why"}]}], "not_counted":[...], "problems":[...]} */
json_t *code_count_json(const code_count *c);

#endif
