/* SentencePiece .model files, read with pgolf's own bounded protobuf
 * reader (formats/protobuf.h), and the per-token byte tables that the
 * challenge's evaluation derives from them. */
#ifndef PGOLF_TOKENIZER_H
#define PGOLF_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* ModelProto.SentencePiece.Type, as numbered in sentencepiece_model.proto. */
typedef enum sp_piece_type {
  SP_NORMAL = 1,
  SP_UNKNOWN = 2,
  SP_CONTROL = 3,
  SP_USER_DEFINED = 4,
  SP_BYTE = 6,
  SP_UNUSED = 5,
} sp_piece_type;

typedef struct sp_piece {
  char *text;    /* NUL-terminated, validated UTF-8 */
  uint32_t len;  /* bytes in text, without the NUL */
  float score;
  sp_piece_type type;
} sp_piece;

typedef struct sp_model {
  sp_piece *pieces;
  uint32_t n_pieces;
  /* From TrainerSpec, with sentencepiece's defaults when absent. */
  int32_t model_type; /* 1 unigram, 2 bpe, 3 word, 4 char */
  int32_t unk_id, bos_id, eos_id, pad_id;
  int32_t trainer_vocab_size; /* TrainerSpec.vocab_size, as trained (default 8000) */
  bool byte_fallback;
  /* From NormalizerSpec. */
  bool add_dummy_prefix;
  char normalizer_name[64];
} sp_model;

/* Hard limits on what a .model file may contain. */
#define SP_MAX_FILE_BYTES (64u << 20)
#define SP_MAX_PIECES (1u << 20)
#define SP_MAX_PIECE_BYTES 4096

int sp_model_parse(const uint8_t *buf, size_t len, const char *name, sp_model *m, pg_error *err);
int sp_model_load(const char *path, sp_model *m, pg_error *err);
void sp_model_free(sp_model *m);

/* Strict UTF-8: rejects overlong forms, surrogates, code points past
 * U+10FFFF and truncated sequences. Returns 0 if s[0..n) is valid, else
 * -1 with *bad_at the offset of the offending sequence and *why a reason. */
int sp_utf8_check(const uint8_t *s, size_t n, size_t *bad_at, const char **why);

/* The byte a byte piece stands for: 0..255 if text is exactly "<0xNN>"
 * with two uppercase hex digits (the only spelling sentencepiece
 * recognises), else -1. */
int sp_byte_piece_value(const char *text, size_t len);

/* Facts about a model that matter for byte accounting (`pgolf tokenizer
 * info`). */
typedef struct sp_summary {
  uint32_t n_type[7];     /* pieces of each sp_piece_type (index 0 unused) */
  uint32_t n_byte_values; /* distinct bytes with a <0xNN> BYTE piece */
  bool all_bytes;         /* all 256 present: byte fallback can encode anything */
  int32_t first_unknown;  /* id of the first UNKNOWN piece, -1 if none */
  int32_t space_piece;    /* id of the piece that is exactly U+2581, -1 if none */
} sp_summary;

void sp_model_summarize(const sp_model *m, sp_summary *s);
/* "unigram", "bpe", "word", "char". */
const char *sp_model_type_name(int32_t model_type);
/* "normal", "unknown", "control", "user_defined", "unused", "byte". */
const char *sp_piece_type_name(sp_piece_type t);

/* Byte-accounting hazards of a model: the ways a tokenizer can make
 * val_bpb wrong without anyone noticing (no byte fallback, no standalone
 * U+2581 piece, unknown-piece count, unk id mismatch, user-defined pieces).
 * One message each; `pgolf tokenizer info` and `pgolf check`
 * (TOKENIZER_ACCOUNTING) both report exactly these. */
#define SP_MAX_HAZARDS 8
typedef struct sp_hazards {
  int n;
  char text[SP_MAX_HAZARDS][320];
} sp_hazards;

void sp_accounting_hazards(const sp_model *m, const sp_summary *s, sp_hazards *out);

/* The official byte tables, one entry per token id in [0, vocab_size):
 * control, unknown and unused pieces (and ids past the model's pieces)
 * are boundaries with 0 bytes; byte pieces count 1; any other piece
 * counts the UTF-8 length of its text after removing one leading U+2581,
 * whose presence sets has_leading_space. */
typedef struct byte_luts {
  uint32_t vocab_size;
  uint16_t *base_bytes;
  bool *has_leading_space;
  bool *is_boundary;
} byte_luts;

/* vocab_size 0 means "the model's piece count". A vocab_size smaller than
 * the piece count is an error (ids would be lost). */
int luts_from_model(const sp_model *m, uint32_t vocab_size, byte_luts *out, pg_error *err);
void luts_free(byte_luts *l);

#endif
