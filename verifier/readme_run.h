/* How a submission says it is run: the commands in its README.md's fenced
 * code blocks, and in the shell scripts those commands invoke that ship in
 * the folder (`bash run.sh`, `sh ./setup.sh`).
 *
 * From each command line pgolf takes environment assignments
 * (`export NGRAM_TILT_ENABLED=1`, `SEED=42 torchrun ...`), the Python
 * scripts launched (`torchrun ... train_gpt.py`, `python3 x.py`) and the
 * source files a compiler is given (`g++ ... kernel.cpp`, `nvcc x.cu`).
 * Markdown escapes such as `train\_gpt.py` are undone. Everything carries
 * the file and line it came from, for messages. Assignments in the
 * README's inline code are kept apart (stated): prose may describe a
 * setting without running it. */
#ifndef PGOLF_README_RUN_H
#define PGOLF_README_RUN_H

#include <stddef.h>

#define RUN_WORD_MAX 256
#define RUN_WHERE_MAX 160
#define RUN_MAX_ITEMS 1024
#define RUN_MAX_SCRIPT_BYTES (1u << 20)

typedef struct run_item {
  char word[RUN_WORD_MAX];   /* a script or source path as written; an env var's name */
  char value[RUN_WORD_MAX];  /* an env var's value, quotes removed ("" for the others) */
  char where[RUN_WHERE_MAX]; /* "README.md:131" */
  int torchrun;              /* a launch: torchrun (or torch.distributed.run) starts it */
} run_item;

typedef struct readme_run {
  run_item *env, *launch, *build;
  size_t n_env, n_launch, n_build;
  run_item *stated; /* NAME=VALUE in the README's inline code (`MATRIX_LR=0.020`), outside
                       fenced blocks: a configuration described, not a command run */
  size_t n_stated;
  int has_readme;
} readme_run;

/* Read dir/README.md and the shell scripts it runs (two levels deep).
 * A missing README gives an empty result; unreadable or oversized files
 * are skipped (the README rule reports a missing README). Never fails
 * except for memory (-1). */
int readme_run_read(const char *dir, readme_run *out);
void readme_run_free(readme_run *r);

/* The text of one README or shell-script line: exposed for the fuzz
 * target and tests. where labels the items it adds. */
void readme_run_line(readme_run *r, const char *line, size_t len, const char *where);

/* A Markdown text as README.md is read (fenced code as commands, inline
 * code as stated settings; scripts it names are not followed): exposed
 * for the fuzz target and tests. rel labels the items. */
void readme_run_markdown(readme_run *r, const char *text, size_t len, const char *rel);

/* The assignments of env var name, in reading order; NULL when none. */
const run_item *readme_run_env(const readme_run *r, const char *name, size_t *n);

/* Python's truthiness of an environment value as scripts read flags:
 * bool(int(v)) or v in ("1", "true", ...). "0", "", "false", "no", "off",
 * "none" (any case) and a zero number are false; a value that is not
 * known here ("$SEED") is true. */
int run_value_truthy(const char *v);

#endif
