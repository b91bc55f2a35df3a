/* The shortest edit script between two sequences of items compared by a
 * 64-bit hash (Myers, "An O(ND) Difference Algorithm and Its Variations",
 * 1986), as hunks: a[a0..a1) replaced by b[b0..b1). Used to compare a
 * log's copy of a script with the shipped script, statement by statement.
 * The work is bounded by max_d edits (memory grows as max_d squared). */
#ifndef PGOLF_SEQ_DIFF_H
#define PGOLF_SEQ_DIFF_H

#include <stddef.h>
#include <stdint.h>

typedef struct diff_hunk {
  size_t a0, a1, b0, b1;
} diff_hunk;

/* 0: *hunks (malloc'd, *n of them, in order) and *d (edits). 1: more than
 * max_d edits are needed (no hunks; *d = max_d + 1). -1: out of memory. */
int seq_diff(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, size_t max_d,
             diff_hunk **hunks, size_t *n, size_t *d);

/* FNV-1a, the hash callers put in the sequences. */
uint64_t seq_hash(const char *s, size_t n);

#endif
