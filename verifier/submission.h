/* A submission folder as `pgolf check` sees it: README.md, the
 * submission*.json claims (strictly typed), the shipped code, tokenizer
 * models and every training log, parsed.
 *
 * Layout (the challenge's records/<track>/<date>_<name>/): files at the
 * top level and one folder down (e.g. logs/train0.txt). Symbolic links and
 * hidden entries are not followed. Logs are *.log and *.txt files (not
 * requirements*.txt) in which the log parser finds at least one step or
 * metric line. */
#ifndef PGOLF_SUBMISSION_H
#define PGOLF_SUBMISSION_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/error.h"
#include "verifier/findings.h"
#include "verifier/log_parse.h"

#define SUB_MAX_JSON_BYTES (1u << 20)
#define SUB_MAX_ENTRIES 4096

typedef enum sub_track { TRACK_RECORD, TRACK_NONRECORD } sub_track;

typedef struct sub_file {
  char *rel; /* path relative to the folder */
  int64_t size;
} sub_file;

typedef struct sub_log {
  char *rel;
  pg_log log;
  int64_t seed;      /* -1 if unknown */
  uint32_t seed_line; /* 0 if the seed came from the file name or is unknown */
} sub_log;

/* A per-seed claim: submission.json "seed_results": {"42": {...}}. */
typedef struct sub_seed_claim {
  int64_t seed;
  int has_bpb, has_loss, has_bytes;
  double val_bpb, val_loss;
  int64_t artifact_bytes;
} sub_seed_claim;

/* One submission*.json, its typed fields (has_* says present and valid). */
typedef struct sub_json {
  char *rel;
  json_t *root; /* NULL if it did not parse */
  int has_val_bpb, has_val_loss, has_bytes_total, has_bytes_code, has_track;
  double val_bpb, val_loss;
  int64_t bytes_total, bytes_code;
  char track[64];
  int64_t *seeds;
  size_t n_seeds;
  sub_seed_claim *claims;
  size_t n_claims;
} sub_json;

typedef struct submission {
  char *dir;
  int has_readme;
  sub_file entry; /* train_gpt.py; rel NULL if absent */
  sub_file *code; /* every *.py shipped */
  size_t n_code;
  sub_file *tokenizers; /* *.model */
  size_t n_tokenizers;
  sub_file *other_logs; /* *.log / *.txt that hold no log lines */
  size_t n_other_logs;
  sub_log *logs; /* sorted by file name */
  size_t n_logs;
  sub_json *json;
  size_t n_json;
  sub_track track;
  const char *track_source; /* "--track", "submission.json", "folder path", "default" */
  const struct code_count *counted; /* the counted code (verifier/code_count.h), set by
                                    pgolf check after loading; NULL otherwise */
} submission;

/* Read the folder. Problems of the folder's content (bad JSON, a field of
 * the wrong type, an unreadable log) become findings in f: JSON_INVALID,
 * JSON_FIELD, LOG_UNREADABLE. Returns -1 with err only if dir cannot be
 * read as a folder at all. forced_track < 0 means "infer it". */
int submission_load(const char *dir, int forced_track, submission *s, finding_list *f,
                    pg_error *err);
void submission_free(submission *s);

/* Reading submission*.json (the JSON_INVALID and JSON_FIELD rules):
 * text[0..len) named rel. Exposed for the fuzz target. */
void submission_json_parse(const char *text, size_t len, const char *rel, sub_json *j,
                           finding_list *f);
void sub_json_free(sub_json *j);

/* The first claims file that parsed, or NULL. */
const sub_json *submission_claims(const submission *s);

const char *sub_track_name(sub_track t);

#endif
