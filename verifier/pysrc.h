/* Python source text as the verifier reads it: statements, not meaning.
 *
 * Submissions ship Python (the entry script, the modules it imports) and
 * many logs begin with a copy of it. pgolf needs three things from that
 * text, none of which needs a Python interpreter: which files the script
 * imports or names (verifier/code_count.c), whether two copies differ in
 * code or only in comments and layout (verifier/rule_log_code.c), and the
 * payload of a self-extracting wrapper (verifier/code_wrapper.c).
 *
 * The lexer joins physical lines into logical ones the way Python does
 * (inside brackets, after a backslash, inside triple-quoted strings), drops
 * comments, and splits a logical line into simple statements at top-level
 * `;` and after the `:` of a compound header (`if x: import y` is two
 * statements, the second inside the first). Each statement keeps the line
 * it starts on, its block depth (counted by an indentation stack, so a
 * 3-space and a 4-space block are the same depth) and its enclosing
 * compound header. Its text is normalized: string literals verbatim,
 * blanks outside them removed except one between two word characters,
 * and the trailing comma of a call's or a definition's arguments
 * (`f(a,b,)`, which a formatter adds when it splits the call) dropped;
 * a tuple's (`(x,)`) kept; so are the parentheses around the names of
 * `from m import (a, b)`.
 *
 * Limits: inputs over PYSRC_MAX_BYTES are refused; nesting deeper than
 * PYSRC_MAX_DEPTH is clamped. Unterminated strings and brackets end at the
 * end of the text: the lexer never fails on content, only on size. */
#ifndef PGOLF_PYSRC_H
#define PGOLF_PYSRC_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define PYSRC_MAX_BYTES (16u << 20)
#define PYSRC_MAX_DEPTH 256

typedef struct py_stmt {
  uint32_t line;    /* 1-based physical line the statement starts on */
  uint32_t depth;   /* block depth, 0 at module level */
  int32_t parent;   /* index of the enclosing compound header, -1 if none */
  int header;       /* a compound header (`if c`, `def f(x)`, `else`), without its ':' */
  int docstring;    /* only string literals: a docstring or a bare string */
  char *text;       /* normalized text, NUL-terminated */
  size_t len;       /* strlen(text) */
} py_stmt;

typedef struct py_src {
  py_stmt *v;
  size_t n;
} py_src;

/* Lex text[0..len) (not necessarily NUL-terminated). name labels errors.
 * Fails only for size or memory. */
int pysrc_parse(const char *text, size_t len, const char *name, py_src *out, pg_error *err);
void pysrc_free(py_src *s);

/* The keyword a statement starts with, if it is one of Python's compound
 * or import keywords ("if", "elif", "else", "import", "from", ...), else
 * "". */
const char *pysrc_keyword(const py_stmt *s);

/* One string literal inside a statement's text. */
typedef struct py_str {
  const char *body; /* between the quotes, escapes not processed */
  size_t len;
  size_t at;        /* offset of the literal (its prefix) in the text */
  size_t end;       /* offset just past its closing quote */
} py_str;

/* The next string literal in text[0..n) (a statement's text) at or after
 * *pos: fills *out, advances *pos past it and returns 1; 0 when there is
 * none. */
int pysrc_next_string(const char *text, size_t n, size_t *pos, py_str *out);

/* A character of a Python name (letters, digits, '_', and any non-ASCII
 * byte, which only names use outside strings). */
int pysrc_word_char(char c);

/* The length of the dotted name (`a`, `self.b.c`) that starts t[0..n), 0
 * if none (it starts with a digit, or ends in '.'); *last is the offset
 * of its last part. */
size_t pysrc_dotted_name(const char *t, size_t n, size_t *last);

/* A statement that assigns one target, `a.b.c=EXPR` or `x:T=EXPR` in the
 * normalized text (not `==`, an augmented assignment or a tuple): 1 with
 * the target's length in *target_len (its last part at *last) and the
 * offset of EXPR in *value; 0 if s is no such statement. */
int pysrc_assignment(const py_stmt *s, size_t *target_len, size_t *last, size_t *value);

/* A malloc'd copy of text[0..n) with every string literal, prefix and
 * quotes included, replaced by blanks (what the code does, not what it
 * says); NULL for memory. */
char *pysrc_blank_strings(const char *text, size_t n);

/* In blanked code (pysrc_blank_strings) t[0..n): the index just past the
 * bracketed group that opens at t[i] ('(', '[' or '{'), or n if it does
 * not close. */
size_t pysrc_group_end(const char *t, size_t n, size_t i);

/* Is the name t[0..n) spelled as the target, as scripts name the token
 * to predict: tgt..., target..., label..., nxt..., next_..., y or y_...
 * (the `y` of `x, y` batches), case aside? */
int pysrc_target_name(const char *t, size_t n);

/* A statement's text for a message: s copied into dst[0..cap), cut with
 * "..." when it does not fit (cap >= 4). */
void pysrc_cut(char *dst, size_t cap, const char *s);

#endif
