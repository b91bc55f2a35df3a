/* Score dumps: the evidence an evaluation leaves of what it scored.
 *
 * One record per scored target, in the order the evaluator scored them,
 * and optionally a few probes: the full next-token distribution at a
 * position. `pgolf audit` reads a dump and checks coverage (every target
 * of the split exactly once, in order), byte accounting, normalization
 * and, with a manifest, score-before-update (verifier/audit.h).
 *
 * Format (version 1), every integer and float little-endian:
 *
 *   header, 64 bytes
 *     0  char[4] magic "PGSD"
 *     4  u32     version, 1
 *     8  u32     vocab size V, 1 .. 2^20
 *    12  u32     flags, 0 (no flag is defined in version 1; a reader
 *                rejects any bit it does not know)
 *    16  u64     record count R
 *    24  u64     probe count P
 *    32  32 zero bytes (reserved)
 *   R records, 24 bytes each
 *     0  u64     position p in the validation stream: the record scores
 *                target t[p], predicted from t[0..p), so p >= 1
 *     8  u32     target id (t[p]), < V
 *    12  u32     zero (reserved)
 *    16  f64     nll in nats, -ln P(t[p] | t[0..p)); finite and >= 0
 *   P probes, 16 + 8V bytes each
 *     0  u64     position p (a position that has a record)
 *     8  u32     target id, < V
 *    12  u32     vocab size, == V
 *    16  f64[V]  the probability of every id at p, as the evaluator had
 *                it when it scored p (checked by the audit, not here)
 *
 * The file size is exactly 64 + 24R + P(16 + 8V). The reader maps the file
 * and validates all of it before handing out a record; every error names
 * the file and the byte offset of the offending field.
 *
 * For the evaluators (trainer/ and test controls): write with
 * score_dump_writer_open / _add / _add_probe / _close. Records go straight
 * to a temporary file next to the target; probes may be added at any time
 * (they are kept aside and appended at close); close patches the counts
 * into the header, fsyncs and renames, so a killed evaluation leaves no
 * dump or the previous one, never half of one. One writer is used by one
 * thread. This API is stable: other parts write dumps with it. */
#ifndef PGOLF_SCORE_DUMP_H
#define PGOLF_SCORE_DUMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "common/fileio.h"

#define SCORE_DUMP_MAGIC "PGSD"
#define SCORE_DUMP_VERSION 1u
#define SCORE_DUMP_HEADER_BYTES 64u
#define SCORE_DUMP_RECORD_BYTES 24u
#define SCORE_DUMP_PROBE_HEAD_BYTES 16u
#define SCORE_DUMP_MAX_VOCAB (1u << 20)
#define SCORE_DUMP_KNOWN_FLAGS 0u

/* ---- reading ---- */

typedef struct score_record {
  uint64_t position;
  uint32_t target;
  double nll;
} score_record;

typedef struct score_probe {
  uint64_t position;
  uint32_t target;
  uint32_t vocab_size;
  const uint8_t *probs; /* vocab_size little-endian f64, inside the mapping */
} score_probe;

typedef struct score_dump {
  mapped_file map;  /* empty when parsed from a caller's buffer */
  const uint8_t *data;
  size_t size;
  uint32_t version, vocab_size, flags;
  uint64_t n_records, n_probes;
  uint64_t probe_bytes; /* 16 + 8V */
} score_dump;

/* Validate a dump held in memory (name is used in error messages); d
 * points into buf, which must outlive it. */
int score_dump_parse(const uint8_t *buf, size_t len, const char *name, score_dump *d,
                     pg_error *err);
/* mmap and validate a dump file. */
int score_dump_open(const char *path, score_dump *d, pg_error *err);
void score_dump_close(score_dump *d);

/* Record i < n_records; probe j < n_probes (validated by open/parse). */
score_record score_dump_record(const score_dump *d, uint64_t i);
score_probe score_dump_probe(const score_dump *d, uint64_t j);
/* Probability of id (< p->vocab_size) in a probe. */
double score_probe_prob(const score_probe *p, uint32_t id);

/* Byte offsets, for messages that point into the file. */
uint64_t score_dump_record_offset(uint64_t i);
uint64_t score_dump_probe_offset(const score_dump *d, uint64_t j);

/* ---- writing ---- */

typedef struct score_dump_writer score_dump_writer;

/* Start a dump at path with vocabulary V (1 .. 2^20), flags 0. */
int score_dump_writer_open(score_dump_writer **w, const char *path, uint32_t vocab_size,
                           pg_error *err);
/* Append one record. Refuses (err, -1) what the reader would reject: a
 * non-finite or negative nll, a target >= V. Positions are not checked:
 * that is the audit's job (test controls write bad ones on purpose). */
int score_dump_writer_add(score_dump_writer *w, uint64_t position, uint32_t target, double nll,
                          pg_error *err);
/* Append one probe: probs[0..V) as the evaluator had them. Not checked
 * for normalization (the audit does that). */
int score_dump_writer_add_probe(score_dump_writer *w, uint64_t position, uint32_t target,
                                const double *probs, pg_error *err);
/* Records added so far. */
uint64_t score_dump_writer_records(const score_dump_writer *w);
/* Finish: patch counts, fsync, rename over path, fsync the directory.
 * Frees w whatever happens; on failure nothing is left at path's
 * temporary name. */
int score_dump_writer_close(score_dump_writer *w, pg_error *err);
/* Give up: remove the temporary file, free w (NULL is fine). */
void score_dump_writer_abort(score_dump_writer *w);

#endif
