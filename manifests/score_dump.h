/* Score dumps: the evidence an evaluation leaves of what it scored.
 *
 * One record per scored target, in the order the evaluator scored them,
 * and optionally a few probes: the full next-token distribution at a
 * position. `pgolf audit` reads a dump and checks coverage (every target
 * of the split exactly once, in order), byte accounting, normalization
 * and, with a manifest, score-before-update (verifier/audit.h).
 *
 * Format (version 2; version 1 below), every integer and float
 * little-endian:
 *
 *   header, 96 bytes
 *     0  char[4] magic "PGSD"
 *     4  u32     version, 2
 *     8  u32     vocab size V, 1 .. 2^20
 *    12  u32     flags, 0 (no flag is defined; a reader rejects any bit it
 *                does not know)
 *    16  u64     record count R
 *    24  u64     probe count P
 *    32  u32     sequence length T >= 1: the evaluation scored the stream
 *                kept for T, its first n = ((N-1)/T)*T + 1 tokens
 *                (formats/val_data.h), so the audit knows which split to
 *                check coverage against; 1 when every target of the N
 *                tokens is scored
 *    36  u32     zero (reserved)
 *    40  u8[32]  the head of the evaluation's SCORE/ADAPT event chain
 *                (manifests/eval_chain.h) when it ended, or 32 zero bytes
 *                when the evaluator keeps no event log. The head commits
 *                to every event, so the audit can tell the dump's own
 *                log from any other. (The log holds the dump's SHA-256,
 *                so the dump cannot hold the log file's digest.)
 *    72  24 zero bytes (reserved)
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
 * Version 1 (still read; external evaluators may write it) has a 64-byte
 * header: bytes 0..32 as above with version 1, then 32 zero bytes; it
 * records neither T nor a chain head (seq_len reads as 0, has_chain 0).
 *
 * The file size is exactly H + 24R + P(16 + 8V), H the version's header
 * size. The reader maps the file and validates all of it before handing
 * out a record; every error names the file and the byte offset of the
 * offending field. An unknown version and a nonzero reserved byte are
 * errors: a reader never guesses at a layout it does not know.
 *
 * For the evaluators (trainer/ and test controls): write with
 * score_dump_writer_open / _add / _add_probe / _close; it writes version
 * 2. T is known when the evaluation starts (open takes it), the chain head
 * only when it ends (close takes it). Records go straight to a temporary
 * file next to the target; probes may be added at any time (they are kept
 * aside and appended at close); close patches the counts and the head
 * into the header, fsyncs and renames, so a killed evaluation leaves no
 * dump or the previous one, never half of one. One writer is used by one
 * thread. */
#ifndef PGOLF_SCORE_DUMP_H
#define PGOLF_SCORE_DUMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "common/fileio.h"

#define SCORE_DUMP_MAGIC "PGSD"
#define SCORE_DUMP_VERSION 2u        /* the version the writer writes */
#define SCORE_DUMP_HEADER_BYTES 96u  /* version 2's header */
#define SCORE_DUMP_V1_HEADER_BYTES 64u
#define SCORE_DUMP_CHAIN_BYTES 32u
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
  uint64_t probe_bytes;  /* 16 + 8V */
  uint32_t header_bytes; /* 64 (version 1) or 96 */
  uint32_t seq_len;      /* T; 0: not recorded (version 1) */
  int has_chain;         /* the header holds a nonzero chain head */
  uint8_t chain_head[SCORE_DUMP_CHAIN_BYTES]; /* zero when !has_chain */
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
uint64_t score_dump_record_offset(const score_dump *d, uint64_t i);
uint64_t score_dump_probe_offset(const score_dump *d, uint64_t j);

/* ---- writing ---- */

typedef struct score_dump_writer score_dump_writer;

/* Start a version 2 dump at path with vocabulary V (1 .. 2^20), flags 0,
 * for an evaluation of the stream kept for sequence length T (>= 1; 1 if
 * every target is scored). */
int score_dump_writer_open(score_dump_writer **w, const char *path, uint32_t vocab_size,
                           uint32_t seq_len, pg_error *err);
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
/* Finish: patch the counts and chain_head (the event chain's head when
 * the evaluation ended; NULL when it keeps no event log) into the header,
 * fsync, rename over path, fsync the directory. Frees w whatever happens;
 * on failure nothing is left at path's temporary name. */
int score_dump_writer_close(score_dump_writer *w, const uint8_t *chain_head, pg_error *err);
/* Give up: remove the temporary file, free w (NULL is fine). */
void score_dump_writer_abort(score_dump_writer *w);

#endif
