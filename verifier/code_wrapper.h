/* Self-extracting scripts: a short train_gpt.py whose real code is an
 * embedded compressed blob, e.g.
 *
 *   import lzma as L,base64 as B
 *   exec(L.decompress(B.b85decode("..."),format=L.FORMAT_RAW,filters=[{"id":L.FILTER_LZMA2}]))
 *
 * Records ship these so that the counted code bytes are the compressed
 * ones. pgolf decodes the blob with the same libraries Python would use
 * (liblzma for lzma, zlib for zlib and gzip, libbrotlidec for brotli) to read the code that runs:
 * its imports (verifier/code_count.c), and its statements
 * (verifier/shipped_text.h): the copy at the top of a log is compared
 * with them, and the settings printed from the seed are found in them.
 *
 * Recognized: a statement calling NAME.decompress(...) on
 * base64.b85decode(...) or base64.b64decode(...) of string literals
 * (adjacent literals are joined as Python joins them), where NAME is lzma,
 * zlib, gzip or brotli or an alias of one (`import lzma as L`). lzma: xz and
 * .lzma streams, or raw LZMA1/LZMA2 when the call says FORMAT_RAW (preset
 * 6 options, as Python uses when the filter gives none). The decoded text
 * is bounded by CODE_WRAP_MAX_OUT bytes. */
#ifndef PGOLF_CODE_WRAPPER_H
#define PGOLF_CODE_WRAPPER_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define CODE_WRAP_MAX_OUT (32u << 20)

typedef struct code_wrapper {
  int found;          /* the text holds a recognized compressed payload */
  uint32_t line;      /* the line of the statement that holds it */
  char codec[48];     /* "lzma (xz)", "lzma (raw LZMA2)", "zlib" */
  char encoding[16];  /* "base85", "base64" */
  char library[48];   /* the decoder and its version, e.g. "liblzma 5.4.1" */
  size_t payload;     /* bytes after the base85/base64 step */
  char *text;         /* the decoded source, NUL-terminated; NULL if !found */
  size_t len;
} code_wrapper;

/* Look for a payload in the Python text[0..len) of file name and decode
 * it. Returns 0 with w->found = 0 when there is none, 0 with the decoded
 * text when there is one, -1 (err names the file and line) when a payload
 * is there but does not decode: a bad base85 character, a corrupt or
 * truncated stream, output over the bound, or a codec pgolf does not
 * read. */
int code_unwrap(const char *text, size_t len, const char *name, code_wrapper *w, pg_error *err);
void code_wrapper_free(code_wrapper *w);

/* Python's base64.b85decode: the RFC 1924 alphabet, groups of 5
 * characters to 4 bytes, a short last group padded. *out is malloc'd.
 * -1 with err (the offset of the bad character) on invalid input. */
int code_b85decode(const char *s, size_t n, const char *name, uint8_t **out, size_t *out_len,
                   pg_error *err);

#endif
