/* A submission folder as `pgolf check` sees it: README.md, the
 * submission*.json claims (strictly typed), the shipped code, tokenizer
 * models and every training log, parsed.
 *
 * Layout (the challenge's records/<track>/<date>_<name>/): files at the
 * top level and one folder down (e.g. logs/train0.txt). Symbolic links and
 * hidden entries are not followed. Logs are *.log and *.txt files (not
 * requirements*.txt) in which the log parser finds at least one step or
 * metric line.
 *
 * Logs are grouped into runs (submission_runs.c): a run is one seed's
 * training with every evaluation of it, however many files hold them
 * (train_seed0.log + ttt_seed0.log), byte-identical copies (train.log
 * beside train_seed1337.log) and reruns of that seed included. The claims
 * of submission.json are then linked to the runs whose final metrics they
 * use: those runs back the claim, and the rules judge them strictly. */
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
  uint32_t figure_line; /* other_logs: a line printing a loss or bpb figure
                           in a shape pgolf does not read (pg_log), 0 if none */
} sub_file;

typedef struct sub_log {
  char *rel;
  pg_log log;
  int64_t seed;       /* the printed seed, else the file name's; -1 if unknown */
  uint32_t seed_line; /* 0 if the seed came from the file name or is unknown */
  int64_t name_seed;  /* the seed the file name gives (train_seed42.log, log_42.txt), -1 none */
  uint8_t digest[32]; /* SHA-256 of the file */
  long copy_of;       /* index of an earlier byte-identical log, -1 if none; rules skip
                         copies so that one file's problem is reported once */
  size_t run;         /* index into submission.runs */
  uint32_t part, n_parts; /* a file holding several runs is read as n_parts logs, one
                             per run (verifier/log_parts.h); 0 and 1 otherwise */
  size_t off, len;        /* the bytes of the file this log reads (all of them for one part) */
  int trains;         /* has step lines or a stop line: a training, not an evaluation only */
  int backs_claim;    /* the claim rests on it (see sub_run.claimed) */
} sub_log;

/* One seed's training and its evaluations (see above). */
typedef struct sub_run {
  int64_t seed;   /* -1: unknown seed, the run is one log and its copies */
  size_t *logs;   /* indices into submission.logs, in file-name order */
  size_t n_logs;
  int n_trainings; /* distinct training logs (copies counted once) */
  int claimed;    /* a claim uses a final metric of this run */
} sub_run;

/* One value a claim rests on: a final metric line of one log of a run. */
typedef struct sub_use {
  size_t run, log;
  const log_metric *m;
} sub_use;

/* How the claimed val_bpb is supported by the logs. */
typedef enum sub_fit {
  FIT_NONE,        /* nothing to link: no val_bpb claim or no final metric in any log */
  FIT_MEAN,        /* the mean over uses, one final metric per run (a single run too) */
  FIT_ONE_RUN,     /* one run's final metric, while other runs are shown beside it */
  FIT_UNSUPPORTED, /* in no log at the claim's precision, and not a mean over runs */
} sub_fit;

typedef struct sub_link {
  sub_fit fit;
  sub_use *uses; /* FIT_MEAN, FIT_ONE_RUN: what the claim uses */
  size_t n_uses;
  int seeds_twice; /* FIT_UNSUPPORTED: the claim is a mean over logs that counts a seed twice */
} sub_link;

/* A per-seed claim: submission.json "seed_results": {"42": {...}} (or
 * "seeds" written as such an object). */
typedef struct sub_seed_claim {
  int64_t seed;
  int has_bpb, has_loss, has_bytes;
  double val_bpb, val_loss;
  int bpb_dec, loss_dec; /* decimals as written ("1.06400": 5) */
  int64_t artifact_bytes;
  int linked;        /* val_bpb is a final metric of a log of this seed: use */
  int by_file_name;  /* ... of a log whose file name (not its printed seed) gives the seed */
  int by_unseeded;   /* ... of a log that gives no seed at all (printed or in its path) */
  sub_use use;
} sub_seed_claim;

/* One submission*.json, its typed fields (has_* says present and valid). */
typedef struct sub_json {
  char *rel;
  json_t *root; /* NULL if it did not parse */
  int has_val_bpb, has_val_loss, has_bytes_total, has_bytes_code, has_track;
  const char *val_bpb_key; /* "val_bpb", or the field read in its place ("mean_val_bpb") */
  double val_bpb, val_loss;
  int val_bpb_dec, val_loss_dec; /* decimals as written ("1.06400": 5) */
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
  char *readme_alt; /* without README.md: a top-level readme.md, README.MD,
                       README.txt ... (the first by name), else NULL */
  sub_file entry; /* train_gpt.py; rel NULL if absent */
  sub_file *code; /* every *.py shipped */
  size_t n_code;
  sub_file *tokenizers; /* *.model */
  size_t n_tokenizers;
  sub_file *other_logs; /* *.log / *.txt that hold no log lines */
  size_t n_other_logs;
  sub_log *logs; /* sorted by file name */
  size_t n_logs;
  sub_run *runs;
  size_t n_runs;
  sub_link link; /* the top-level val_bpb claim */
  sub_json *json;
  size_t n_json;
  sub_track track;
  const char *track_source;         /* "--track", "submission.json", "README.md", "folder path",
                                       "default" */
  const struct code_count *counted; /* the counted code (verifier/code_count.h), set by
                                    pgolf check after loading; NULL otherwise */
  const struct shipped_texts *texts; /* the shipped Python texts, read, decoded and lexed once
                                        (verifier/shipped_text.h), set with counted; NULL
                                        otherwise or when memory ran out */
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

/* Does a decimal claim c (written with c_dec digits after the point)
 * agree with a printed value v (v_dec digits)? They agree when they
 * differ by less than one unit in the last digit of the less precise of
 * the two, so both rounding and truncation by the submitter are accepted. */
int claim_agrees(double c, int c_dec, double v, int v_dec);
/* Digits after the point in the shortest decimal that reads back as x. */
int decimals_of(double x);

/* Group the logs into runs and link the claims to them (submission_runs.c;
 * called by submission_load). Sets runs, link, the claims' uses and each
 * run's claimed and log's backs_claim. Without a linked claim every run
 * counts as claimed: the rules then judge every log strictly. */
void submission_link(submission *s, finding_list *f);
void submission_runs_free(submission *s);

/* Does submission.json list seed (in "seeds" or as a per-seed claim)? */
int sub_json_lists_seed(const sub_json *j, int64_t seed);
/* Does some log of run r print a final metric? */
int sub_run_has_final(const submission *s, const sub_run *r);

/* The evaluations of one trained model in run r with final metric base:
 * the lines of that base (the `_exact` twins where a log prints them) in
 * segment of log and in the run's other logs, or, when the run holds
 * several trainings, in that segment of log only. Fills at most cap of
 * out; returns how many there are. */
size_t submission_evals(const submission *s, size_t r, size_t log, uint32_t segment,
                        const char *base, sub_use *out, size_t cap);

/* The values a folder's result rests on, one final metric per run (what
 * `pgolf stats`, `check --against` and the leaderboard test): the claim's
 * uses when the claimed val_bpb is their mean ("claim"); else the
 * per-seed claims' lines when each is linked to its own run ("claim");
 * else each run with a final metric gives the claim's line for it, or its
 * last final metric in file order ("runs"). out has room for s->n_runs
 * entries; returns how many it holds, *from says which. */
size_t submission_run_values(const submission *s, sub_use *out, const char **from);

const char *sub_track_name(sub_track t);

#endif
