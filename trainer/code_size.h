/* Code bytes of a pgolf run: the challenge counts "code bytes + compressed
 * model bytes" against 16,000,000, where code is the script that trained
 * and evaluates the model. pgolf's convention for its own runs:
 *
 *   code bytes = the summed sizes of exactly the source files whose
 *   digest is the binary's source digest (the Makefile's
 *   SOURCES_FOR_DIGEST: every .c, .h and .cu file in the Makefile's PARTS,
 *   which the binary carries as pgolf_source_parts(), and the Makefile).
 *
 * The files are found in the source tree the binary was built from (the
 * current directory, or the binary's directory and up to three parents,
 * whichever holds Makefile and common/pgolf.c), listed as the Makefile
 * lists them, and hashed the way it hashes them (`sha256sum FILES |
 * sha256sum`), so the result says whether the tree still matches the
 * binary. */
#ifndef PGOLF_CODE_SIZE_H
#define PGOLF_CODE_SIZE_H

#include <stdint.h>

#include "common/error.h"

#define CODE_SIZE_RULE                                                                      \
  "sum of the sizes of the source files in the binary's source digest: the .c and .h "   \
  "files of common/ trainer/ verifier/ manifests/ kernels/, the .cu files of kernels/, "  \
  "and the Makefile"

typedef struct code_size {
  char root[1024];
  uint64_t bytes;
  int n_files;
  char digest[65];      /* recomputed source digest */
  int matches_binary;   /* digest == pgolf_source_digest() */
} code_size;

int code_size_measure(code_size *cs, pg_error *err);

#endif
