/* The training log in the official train_gpt.py line formats, so tools
 * that read challenge logs (verifier/log_parse.h among them) read ours:
 *
 *   seed:N
 *   Hyperparameters:            then one `  key: value` line per key
 *   model_params:N
 *   world_size:1 grad_accum_steps:G
 *   step:N/M train_loss:X train_time:Tms step_avg:Sms
 *   step:N/M val_loss:X val_bpb:Y train_time:Tms step_avg:Sms
 *   Serialized model int8+zlib: N bytes (payload:P raw:R payload_ratio:Qx)
 *   Code size: N bytes
 *   Total submission size int8+zlib: N bytes
 *   final_int8_zlib_roundtrip val_loss:X val_bpb:Y eval_time:Tms
 *   final_int8_zlib_roundtrip_exact val_loss:X val_bpb:Y
 *
 * Numbers are printed as the official f-strings print them (losses to 4
 * decimals, the _exact twins to 8, times in whole ms, averages to 2).
 * Every line goes to the file at once (flushed, so a killed run keeps its
 * log) and is kept in memory, so a checkpoint can carry the log and a
 * resumed run rewrites it before continuing. */
#ifndef PGOLF_TRAIN_LOG_H
#define PGOLF_TRAIN_LOG_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"

typedef struct train_log {
  FILE *f;      /* NULL: memory only */
  FILE *echo;   /* also print each line here (stdout), or NULL */
  char *text;   /* everything logged so far */
  size_t len, cap;
  int failed;   /* a write to the file failed; see train_log_close */
  char path[1024];
} train_log;

/* Open (truncate) path, write prior[0..prior_len) (a resumed run's log so
 * far) and keep it. path NULL: memory only. */
int train_log_open(train_log *L, const char *path, const char *prior, size_t prior_len, FILE *echo,
                   pg_error *err);
/* Close; -1 if any write failed. */
int train_log_close(train_log *L, pg_error *err);

void train_log_printf(train_log *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void train_log_hparams(train_log *L, const json_t *config);
void train_log_train_step(train_log *L, int64_t step, int64_t total, float loss, double train_ms);
void train_log_val_step(train_log *L, int64_t step, int64_t total, double val_loss, double val_bpb,
                        double train_ms);
void train_log_sizes(train_log *L, uint64_t model_bytes, uint64_t payload_bytes, uint64_t raw_bytes,
                     uint64_t baseline_bytes, uint64_t code_bytes);
void train_log_final(train_log *L, double val_loss, double val_bpb, double eval_ms);

#endif
