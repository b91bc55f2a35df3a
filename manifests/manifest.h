/* Run manifests: an in-toto Statement v1 whose predicate (type
 * "pgolf/run/v1") records what a training run was — seed, configuration,
 * code, data, environment, schedule, per-step losses and their hash chain,
 * evaluation, artifact, timing — and whose subjects are the artifact and
 * the loss chain head.
 *
 * Values that must compare bit-for-bit are hex bit patterns ("0x" and 8
 * lowercase hex digits for a float32, 64 lowercase hex for a digest).
 * Environment, code identity and timings are recorded but never part of
 * the deterministic comparison (manifest_diff).
 *
 * Layout (keys in this order):
 *   _type, subject[{name, digest{sha256}}], predicateType,
 *   predicate{seed, derived_seeds{}, config{...},
 *     code{pgolf_version, source_digest, compiler, cuda, binary_sha256},
 *     data{tokenizer{path, sha256, vocab_size},
 *          shards[{name, path, split, tokens, sha256}], tokens_consumed},
 *     environment{...}, schedule{total_steps, wall_clock_budget_s},
 *     losses{chain, steps[{step, loss_bits, lr_mult_bits?, wall_ms?, chain}]},
 *     evaluation, artifact{name, path, bytes, sha256} | null, timing{...},
 *     init{sha256, tensors[{name, shape}]} (optional, written by pgolf train)}
 * pgolf train also writes schedule.planner{...}, data.tokens_consumed,
 * artifact{code_bytes, model_bytes, total_bytes, limit_bytes, code_rule}
 * and evaluation{mode, val_loss, val_bpb, *_bits, tokens, bytes}.
 * Each step's "chain" is the link c_i after that step, so a verifier can
 * name the first step whose loss no longer matches. */
#ifndef PGOLF_MANIFEST_H
#define PGOLF_MANIFEST_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "manifests/dsse.h"
#include "manifests/loss_file.h"
#include "common/sha256.h"

#define MANIFEST_MAX_BYTES ((size_t)256 << 20)
/* An envelope holds the manifest in base64 (4/3 of its size) plus a little. */
#define MANIFEST_ENVELOPE_MAX_BYTES (MANIFEST_MAX_BYTES / 3 * 4 + ((size_t)1 << 20))
#define MANIFEST_MAX_SHARDS 100000
#define MANIFEST_MAX_SUBJECTS 16
#define MANIFEST_MAX_STEPS ((size_t)1000000)
#define MANIFEST_STATEMENT_TYPE "https://in-toto.io/Statement/v1"
#define MANIFEST_PREDICATE_TYPE "pgolf/run/v1"
#define MANIFEST_CHAIN_SUBJECT "loss-chain"

/* ---- building ---- */

typedef struct manifest_inputs {
  const char *config_path;
  const char *tokenizer_path;
  const char *const *data_paths; /* shard files or directories of shards */
  size_t n_data;
  uint64_t seed;
  const char *losses_path;   /* NULL: no steps recorded */
  const char *artifact_path; /* NULL: no artifact */
  int64_t total_steps;       /* -1: unknown (then the loss file's step count) */
  unsigned threads;          /* the run's thread count; 0: online CPUs */

} manifest_inputs;

/* What a trainer holds in memory, for manifest_create_ex (all optional:
 * zero means absent). JSON values are borrowed. */
typedef struct manifest_extras {
  json_t *config;               /* used instead of config_path when set */
  const loss_record *loss_recs; /* used instead of losses_path when */
  size_t n_loss_recs;           /*   losses_in_memory is 1 */
  int losses_in_memory;
  json_t *derived_seeds;        /* predicate.derived_seeds ({} when NULL) */
  json_t *init;                 /* predicate.init: {sha256, tensors[{name, shape}]} */
  double wall_clock_budget_s;   /* > 0: predicate.schedule.wall_clock_budget_s */
  json_t *schedule;             /* further keys of predicate.schedule (the planner's numbers) */
  json_t *evaluation;           /* predicate.evaluation (null when NULL) */
  int64_t code_bytes;           /* > 0 with an artifact: predicate.artifact gets code_bytes, */
  const char *code_rule;        /*   model_bytes, total_bytes, limit_bytes and code_rule */
  json_t *artifact_extra;       /* further keys of predicate.artifact (how code was counted) */
  int64_t tokens_consumed;      /* > 0: predicate.data.tokens_consumed */
  json_t *timing;               /* further keys of predicate.timing (phase times) */
  json_t *environment;          /* further keys of predicate.environment, over its own (world
                                 * size, processes, the communication library) */
} manifest_extras;

/* The challenge's size limit on code bytes + compressed model bytes. */

/* Build the manifest JSON text (pretty, final newline) in *out. */
int manifest_create(const manifest_inputs *in, char **out, size_t *out_len, pg_error *err);
/* The same with a trainer's in-memory records (x may be NULL). */
int manifest_create_ex(const manifest_inputs *in, const manifest_extras *x, char **out,
                       size_t *out_len, pg_error *err);

/* ---- reading ---- */

typedef struct manifest_step {
  uint64_t step;
  uint32_t loss_bits;
  uint32_t lr_mult_bits;
  int has_lr_mult;
  uint8_t chain[SHA256_LEN];
} manifest_step;

/* A file the manifest identifies by digest (strings borrowed from root). */
typedef struct manifest_file {
  const char *name, *path, *split;
  uint64_t tokens, bytes;
  uint8_t sha256[SHA256_LEN];
} manifest_file;

typedef struct manifest {
  json_t *root; /* owned reference; everything borrowed below lives in it */
  uint64_t seed;
  json_t *config, *code, *environment, *evaluation, *timing;
  manifest_file tokenizer;
  uint32_t vocab_size;
  manifest_file *shards;
  size_t n_shards;
  int64_t total_steps; /* -1 when null */
  uint8_t head[SHA256_LEN];
  manifest_step *steps;
  size_t n_steps;
  int has_artifact;
  manifest_file artifact;
  int has_init; /* predicate.init present (optional) */
  uint8_t init_sha256[SHA256_LEN];
  json_t *subjects;
} manifest;

/* Validate a parsed statement (takes its own reference to root). Every
 * error names the JSON path, e.g. "predicate.losses.steps[17].loss_bits". */
int manifest_from_json(json_t *root, const char *name, manifest *m, pg_error *err);
int manifest_parse(const uint8_t *buf, size_t len, const char *name, manifest *m, pg_error *err);
void manifest_free(manifest *m);

/* A manifest file or a DSSE envelope around one (signature not checked
 * here: see dsse_verify). An envelope whose payload is not a valid
 * manifest still loads, with payload_ok 0 and the reason in payload_err,
 * so that verify can report a bad signature before a bad payload. */
typedef struct manifest_doc {
  int is_envelope;
  dsse_envelope env;
  int payload_ok;
  pg_error payload_err;
  manifest m;
  char name[PG_ERR_PATH]; /* what errors about the manifest are reported as */
} manifest_doc;

int manifest_load(const char *path, manifest_doc *d, pg_error *err);
void manifest_doc_free(manifest_doc *d);

/* ---- checking ---- */

/* Findings of a verification, in the order found. A failed item makes
 * verify exit 1; the others say what was checked or skipped. */
typedef struct verify_item {
  int failed;
  pg_error e;
} verify_item;

typedef struct verify_report {
  verify_item *items;
  size_t n, cap, n_failed, n_skipped, n_checked;
} verify_report;

void verify_report_free(verify_report *r);

/* The parts that need no files: every step's chain link, the head, and
 * the subjects' digests against the predicate. */
void manifest_verify_chain(const manifest *m, const char *name, verify_report *r);
/* Recompute the digest of every recorded file present under root (paths
 * relative to root; absolute paths as they are); absent files are
 * reported as skipped. */
void manifest_verify_files(const manifest *m, const char *root, verify_report *r);

typedef struct manifest_difference {
  int equal;         /* 1: every deterministic field agrees */
  char field[160];   /* first differing field, e.g. "predicate.config.lr" */
  char detail[512];  /* human sentence about it */
  int is_step;       /* the difference is a step's loss */
  uint64_t step;
  uint32_t a_bits, b_bits;
  char info[256];    /* non-deterministic parts that differ, e.g. "environment, timing" */
} manifest_difference;

void manifest_diff(const manifest *a, const manifest *b, manifest_difference *d);

/* ---- reporting (cmd_manifest prints with these) ---- */

void manifest_show_text(const manifest_doc *d, FILE *out);
json_t *manifest_show_json(const manifest_doc *d);
void manifest_diff_text(const manifest_difference *d, FILE *out);
json_t *manifest_diff_json(const manifest_difference *d);

/* Float32 bits as a decimal for humans ("nan" and "inf" spelled out). */
void manifest_f32_text(uint32_t bits, char *buf, size_t cap);

#endif
