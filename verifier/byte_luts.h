/* How a submission's own code counts the bytes val_bpb divides by.
 *
 * The official train_gpt.py counts the validation text's bytes from three
 * tables built by build_sentencepiece_luts, one entry per piece: base
 * bytes (the piece's UTF-8 length without its leading `▁`; 1 for a
 * byte-fallback piece; 0 for control, unknown and unused pieces), "has a
 * leading space" and "is a boundary" (control, unknown, unused). Its
 * evaluation then counts a target's base bytes plus 1 when the target has
 * a leading space and the previous token is no boundary. Submissions copy
 * and rewrite that function, and some rewrites count another total: the
 * GDN-Hybrid line kept the space in the base bytes (`len(piece[1:]
 * .encode()) + 1`) while its evaluation still added it (openai/parameter-
 * golf PRs #1545 and #1576, closed for it).
 *
 * This reads the builder without running Python: each `def` whose body
 * asks the SentencePiece object for a piece (`id_to_piece`, `IdToPiece`)
 * and stores into tables indexed by the loop's token id is executed by a
 * small evaluator once per kind of piece, with the piece's text and type
 * standing in for the tokenizer (a plain piece `abc`, a word-initial
 * `▁abc`, a byte-fallback `<0x41>`, a control `<s>`, the unknown `<unk>`).
 * It knows the few operations such builders use: string slicing,
 * startswith, encode, replace, lstrip, len, arithmetic and comparisons,
 * if/elif/else, continue, the arrays numpy and torch make (zeros, ones,
 * full) and Python lists. Anything else makes the kind's value unknown,
 * never a guess: a finding is only made from values it computed.
 *
 * The tables' roles come from the values: the base-bytes table is the one
 * holding 3 for `abc`, the space table the one true for `▁abc` and false
 * for `abc`. Whether the evaluation adds the space table is read from the
 * code that calls the builder: the names its result is unpacked into, and
 * a statement anywhere in the counted code that indexes the space table's
 * name and adds (`+`, `+=`). */
#ifndef PGOLF_BYTE_LUTS_H
#define PGOLF_BYTE_LUTS_H

#include <stddef.h>
#include <stdint.h>

#include "verifier/pysrc.h"

/* The kinds of piece the builder is run on, with the official table
 * values (base bytes, leading space, boundary). */
enum {
  BL_PLAIN,   /* "abc": 3, no, no */
  BL_SPACE,   /* "▁abc": 3, yes, no */
  BL_BYTE,    /* "<0x41>", a byte-fallback piece: 1, no, no */
  BL_CONTROL, /* "<s>": 0, no, yes */
  BL_UNKNOWN, /* "<unk>": 0, no, yes */
  BL_KINDS
};
extern const char *const byte_luts_kind_text[BL_KINDS];
extern const int byte_luts_official_base[BL_KINDS];

#define BL_UNSET INT64_MIN /* the evaluator could not tell */
#define BL_MAX_NAME 64

/* One builder as read. */
typedef struct byte_lut_fn {
  char name[BL_MAX_NAME];       /* the def's name */
  uint32_t line, end_line;      /* its def line and its body's last line */
  char base_table[BL_MAX_NAME]; /* the tables it fills ("" if none found) */
  char space_table[BL_MAX_NAME];
  int64_t base[BL_KINDS];        /* base bytes per kind, BL_UNSET if unknown */
  uint32_t base_line[BL_KINDS];  /* the statement that stored it (0: the table's initial value) */
  char base_stmt[BL_KINDS][120]; /* its text, cut */
  int space_pos;                 /* its index in the builder's returned tuple, -1 if unknown */
  uint32_t test_line;            /* its first `startswith(` statement, the word-initial test */
  char test_stmt[120];
} byte_lut_fn;

/* Builders found in one source, up to BL_MAX_FNS. */
#define BL_MAX_FNS 8
typedef struct byte_luts {
  byte_lut_fn fn[BL_MAX_FNS];
  size_t n;
} byte_luts;

/* Find and run the builders of a lexed source. Never fails: what it
 * cannot read is BL_UNSET or not found. */
void byte_luts_scan(const py_src *src, byte_luts *out);

/* The names a builder's space table is known by in src: the tuple targets
 * its calls unpack into (`a,b,c=build_sentencepiece_luts(...)`) at
 * fn->space_pos, and the builder's own table name. Appends to names
 * (each BL_MAX_NAME bytes), up to max; returns the new count. */
size_t byte_luts_space_names(const py_src *src, const byte_lut_fn *fn, char (*names)[BL_MAX_NAME],
                             size_t n, size_t max);

/* The first statement of src that indexes one of names (`name[`) and
 * adds (`+` outside string literals), outside the lines of skip (the
 * builder itself, when it is in src; may be NULL): its index, or -1. */
long byte_luts_space_added(const py_src *src, char (*names)[BL_MAX_NAME], size_t n,
                           const byte_lut_fn *skip);

/* A statement of src that makes a bits-per-byte value from a constant
 * bytes-per-token ratio instead of the scored text's bytes: an assignment
 * to a name holding "bpb" (not an estimate, `est...`) whose value divides
 * by ln 2 (`log(2)`, `LN2`, `log2`) and takes a float literal between
 * 1.5 and 8 bytes a token (or its inverse, 0.125 to 0.67 tokens a byte),
 * written there or bound to a name holding "byte" or "token" (`BYTES_PER_TOKEN
 * = 3.67`). Its index, and the ratio as bytes a token in *bytes_per_token;
 * -1 if none. */
long byte_luts_constant_ratio(const py_src *src, double *bytes_per_token);

#endif
