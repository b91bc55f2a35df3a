/* The model artifact: the official int8 export (trainer/quantize.h) in
 * pgolf's own container, compressed with zlib at level 9.
 *
 * WHY OUR OWN CONTAINER. The official script pickles a dict of tensors with
 * torch.save and zlib-compresses it; a pickle is a program, not a format,
 * and cannot be read safely without torch. pgolf stores the same values
 * (the same int8 bytes, fp16 scale bits, fp16/fp32 passthrough bits, the
 * same dtypes to restore) in a fixed little-endian layout, so any reader
 * can check it byte by byte. The compressed size is the artifact's model
 * bytes; it differs from the official .ptz size only by the container
 * overhead (a few hundred bytes of names and shapes instead of a pickle).
 *
 * FILE. The whole file is one zlib stream (RFC 1950: deflate, level 9,
 * window 15 bits, memLevel 8 — what Python's zlib.compress(b, 9) makes, so
 * `zlib.decompress(open(f, "rb").read())` returns the payload). Nothing may
 * follow the stream.
 *
 * PAYLOAD (decompressed), every integer and float little-endian:
 *   offset size  field
 *   0      8     magic "PGOLFQ8\0" (50 47 4f 4c 46 51 38 00)
 *   8      4     u32 format version = 1
 *   12     4     u32 header size = 72
 *   16     8     u64 payload size: the whole decompressed payload, header
 *                included; a reader refuses more or less
 *   24     4     i32 vocab_size           \
 *   28     4     i32 num_layers            |
 *   32     4     i32 model_dim             |
 *   36     4     i32 num_heads             |  the model configuration
 *   40     4     i32 num_kv_heads          |  (trainer/model.h gpt_config),
 *   44     4     i32 mlp_mult              |  which fixes the tensor list
 *   48     4     i32 seq_len               |
 *   52     4     f32 rope_base             |
 *   56     4     f32 logit_softcap         |
 *   60     4     f32 qk_gain_init          |
 *   64     4     f32 tied_embed_init_std  /
 *   68     4     u32 tensor count (= the layout's, in state_dict order)
 *   72           tensor records, back to back:
 *     2    u16 name length L, 1..47
 *     L    name, ASCII, no NUL (the official state_dict name)
 *     1    u8 kind: 0 int8 per row, 1 int8 per tensor, 2 fp32, 3 fp16
 *     1    u8 dtype restored on loading: 0 fp32, 1 bf16
 *     1    u8 ndim, 1 or 2
 *     1    u8 reserved, 0
 *     4    u32 rows (1 for ndim 1)
 *     4    u32 cols (numel for ndim 1)
 *     then by kind:
 *       0: rows x u16 fp16 scale bits, then rows*cols int8 (row-major)
 *       1: f32 scale, then rows*cols int8
 *       2: rows*cols f32
 *       3: rows*cols u16 fp16 bits
 *   The last record ends exactly at the payload size.
 *
 * READING validates everything before returning a value: the compressed
 * size (at most ARTIFACT_MAX_FILE_BYTES), the zlib stream (a truncated or
 * corrupt stream, and trailing bytes, are errors at their compressed
 * offset), magic, version, header size, the configuration against the
 * layout's, the tensor count, every name, shape and kind, finite scales and
 * passthrough values, and the exact payload size. Decompression is bounded:
 * the promised payload size may not exceed what the layout can need, and
 * inflating stops with an error as soon as the stream yields more than it
 * promised, so a small file cannot make pgolf allocate without limit.
 * Errors name the file, and the compressed offset or "decompressed byte N".
 *
 * SIZE ACCOUNTING (the challenge's rule): artifact bytes = code bytes +
 * compressed model bytes, at most 16,000,000 (decimal). */
#ifndef PGOLF_ARTIFACT_H
#define PGOLF_ARTIFACT_H

#include <stddef.h>
#include <stdint.h>

#include "common/challenge.h"
#include "common/error.h"
#include "trainer/model.h"
#include "trainer/quantize.h"

#define ARTIFACT_MAGIC "PGOLFQ8"  /* 8 bytes with the NUL */
#define ARTIFACT_VERSION 1
#define ARTIFACT_HEADER_BYTES 72
#define ARTIFACT_NAME_MAX 47
#define ARTIFACT_MAX_FILE_BYTES (256u << 20)

/* The uncompressed payload of a quantized model (malloc'd). */
int artifact_encode(const quant_model *m, uint8_t **out, size_t *len, pg_error *err);
/* zlib level 9 of buf (malloc'd). */
int artifact_compress(const uint8_t *buf, size_t len, uint8_t **out, size_t *out_len,
                      pg_error *err);

/* The most payload bytes a model of this layout can need (any kind per
 * tensor): the cap on what a reader will inflate. */
uint64_t artifact_payload_bound(const gpt_layout *l);

/* Decompress and validate an artifact held in memory (name for errors)
 * against the layout; on success m owns the values (quant_model_free). */
int artifact_parse(const uint8_t *buf, size_t len, const char *name, const gpt_layout *l,
                   quant_model *m, pg_error *err);
int artifact_read(const char *path, const gpt_layout *l, quant_model *m, pg_error *err);

/* The challenge's size accounting. */
typedef struct artifact_accounting {
  uint64_t code_bytes;  /* as given by the caller (the counted source) */
  uint64_t model_bytes; /* the compressed artifact file */
  uint64_t total_bytes;
  uint64_t limit;       /* (uint64_t)CHALLENGE_SIZE_LIMIT_BYTES */
  int fits;             /* total_bytes <= limit */
} artifact_accounting;

void artifact_account(uint64_t code_bytes, uint64_t model_bytes, artifact_accounting *a);

/* What an export produced. */
typedef struct artifact_info {
  uint64_t payload_bytes; /* the official stats' int8_payload_bytes */
  uint64_t raw_bytes;     /* the uncompressed container */
  uint64_t baseline_bytes;
  char sha256[65];        /* of the compressed file */
  artifact_accounting acct;
} artifact_info;

/* Quantize flat parameters (dtypes as quant_model_build), write the
 * compressed artifact atomically to path and account it with code_bytes. */
int artifact_export(const char *path, const gpt_layout *l, const float *flat,
                    const quant_dtype *dtypes, uint64_t code_bytes, artifact_info *info,
                    pg_error *err);
/* Read, validate and dequantize into flat (l->n_params floats). */
int artifact_load(const char *path, const gpt_layout *l, float *flat, pg_error *err);

/* The official log lines, without newline:
 *   "Serialized model int8+zlib: N bytes (payload:P raw:R payload_ratio:X.XXx)"
 *   "Total submission size int8+zlib: T bytes" */
void artifact_log_serialized(const artifact_info *info, char *buf, size_t cap);
void artifact_log_total(const artifact_info *info, char *buf, size_t cap);

#endif
