/* SentencePiece .model files, read with pgolf's own bounded protobuf
 * reader (trainer/protobuf.h), and the per-token byte tables that the
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
