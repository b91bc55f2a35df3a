/* Validation documents inside training shards.
 *
 * The challenge's data are one token stream per split, cut into shards
 * (formats/shard.h); each document is the tokenizer's BOS id followed by
 * its tokens, with no end marker (data manifest: "bos_id": 1,
 * "append_eos": false; common/challenge.h). Preparing the data with fewer
 * validation documents than the published 50,000 puts the rest of the
 * validation set into training (the maintainers excluded two pull
 * requests for it; CHALLENGE_OVERLAP_TRAIN_SHARDS).
 *
 * data_overlap splits both streams into documents at the BOS id (a
 * document may span shards), hashes every validation document, and looks
 * up every training document: a match is equal length and equal under two
 * independent 64-bit hashes (a false match needs a 128-bit collision).
 * Documents with fewer than min_tokens tokens after the BOS are not
 * compared (every empty document equals every other). Training shards are
 * scanned in parallel; the result does not depend on the thread count. */
#ifndef PGOLF_DATA_OVERLAP_H
#define PGOLF_DATA_OVERLAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define OVERLAP_SHOW 10              /* matches listed in the report */
#define OVERLAP_MAX_VAL_DOCS (1u << 24) /* the hash table's bound */

typedef struct overlap_match {
  size_t val_shard, train_shard; /* indices into the report's path lists */
  uint64_t val_offset, train_offset; /* token index of the document's BOS in its shard */
  uint64_t tokens;                   /* tokens after the BOS */
} overlap_match;

typedef struct overlap_report {
  char **val_paths, **train_paths;
  size_t n_val, n_train;
  uint64_t val_tokens, train_tokens;
  uint64_t val_docs, train_docs;  /* documents compared (at least min_tokens long) */
  uint64_t val_short, train_short; /* documents left out as too short */
  uint64_t matched_val_docs;      /* distinct validation documents found in training */
  uint64_t matched_train_docs;    /* training documents equal to a validation one */
  overlap_match first[OVERLAP_SHOW]; /* the first matches in training-stream order */
  size_t n_first;
} overlap_report;

/* Compare DIR/fineweb_val_*.bin with DIR/fineweb_train_*.bin. Errors (-1,
 * err names the file and offset): no shards, a bad shard, too many
 * validation documents, out of memory. */
int data_overlap(const char *train_dir, const char *val_dir, uint16_t bos, uint64_t min_tokens,
                 overlap_report *r, pg_error *err);
void overlap_report_free(overlap_report *r);

#endif
