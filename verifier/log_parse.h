/* Challenge training logs: everything `pgolf check` and `pgolf replay`
 * read from them, each item with the 1-based line it came from.
 *
 * A log is what a submission's script printed (and often wrote to a file):
 * torchrun warnings, hyperparameters, per-step lines, the stop at the
 * wall-clock cap, artifact sizes and the final metrics. Many logs begin
 * with the full Python source of the script that wrote them, so a line is
 * taken as a result only if it has the exact shape the script prints, with
 * numbers where numbers belong: `log0(f"step:{step}/...")`, an indented
 * f-string continuation or a line inside the leading source block is never
 * a result. Recognised shapes (after the prefixes log_prefix_len strips:
 * a Unix time such as `1776142348.135 `, torchrun's `[default0]:`, a
 * logger's clock and level):
 *
 *   step:N/M train_loss:X train_time:Tms step_avg:Sms      (also `N/M ...`,
 *   N/M train_loss: X train_time: 8.8m tok/s: ...           spaces after ':')
 *   step:N/M val_loss:X val_bpb:Y [train_time:Tms step_avg:Sms]
 *   N/M val_loss: X val_bpb: Y
 *   stopping_early: wallclock_cap train_time:Tms step:N/M
 *   Serialized model[ LABEL]: N bytes[ (...)]
 *   Code size[ (compressed|uncompressed)]: N bytes
 *   Total submission size[ LABEL]: N bytes
 *   gptq:reserving Xs[, ...]
 *   GPTQ:collected N Hessians in Xs
 *   total_eval_time:Xs
 *   PREFIX val_loss:X val_bpb:Y[ ...eval_time:Tms]   (and PREFIX_exact twins;
 *                    PREFIX may hold a setting in parentheses: `(level=9)`)
 *   ttt_sliding:done val_loss=X val_bpb=Y[ elapsed=Xs]
 *   seed:N
 *   Hyperparameters:  followed by indented `  key: value` lines
 *   key:value key:value ...   (configuration lines before training starts)
 *
 * Limits: logs over LOG_MAX_BYTES are refused; lines over LOG_MAX_LINE
 * bytes, or holding a NUL byte, are counted and skipped. */
#ifndef PGOLF_LOG_PARSE_H
#define PGOLF_LOG_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define LOG_MAX_BYTES (256u << 20)
#define LOG_MAX_LINE (1u << 20)
#define LOG_LABEL_MAX 128

/* A decimal as printed: its value and the digits after the point, so a
 * claim can be compared "to the digits given". */
typedef struct log_num {
  double v;
  int decimals;
} log_num;

/* step:N/M train_loss:X train_time:... step_avg:... */
typedef struct log_train_step {
  uint32_t line;
  int64_t step, total;
  log_num loss;
  double train_ms;     /* NAN if the line has no train_time */
  double train_res_ms; /* resolution of train_ms as printed (1 for "Tms", 6000 for "8.8m") */
  double step_avg_ms;  /* NAN if absent */
} log_train_step;

/* step:N/M val_loss:X val_bpb:Y ... (validation during training) */
typedef struct log_val_step {
  uint32_t line;
  int64_t step, total;
  log_num val_loss, val_bpb;
  double train_ms, train_res_ms, step_avg_ms; /* NAN if absent */
} log_val_step;

/* What a `PREFIX val_loss:X val_bpb:Y` line measures. */
typedef enum log_metric_kind {
  METRIC_FINAL,      /* a score of the exported (quantized) model */
  METRIC_PRE_QUANT,  /* before quantization / export (prefix says pre-quant, pre-ema, post-ema) */
  METRIC_DIAGNOSTIC, /* prefix starts with "diagnostic" */
} log_metric_kind;

typedef struct log_metric {
  uint32_t line;
  char prefix[LOG_LABEL_MAX]; /* as printed, e.g. "final_sliding_window_eval_exact stride:64" */
  char base[LOG_LABEL_MAX];   /* prefix without "(tags)", "_exact" and trailing key:value words */
  int exact;                  /* the `_exact` twin (full precision) */
  log_metric_kind kind;
  log_num val_loss, val_bpb;
  double eval_ms;   /* eval_time:Tms or elapsed=Xs; NAN if absent */
  uint32_t segment; /* the training it follows (see pg_log.seg_first) */
} log_metric;

/* `Serialized model[ LABEL]: N bytes` and `Total submission size[ LABEL]: N bytes`.
 * An empty label is the raw (unquantized) model, not the artifact. */
typedef struct log_bytes {
  uint32_t line;
  char label[LOG_LABEL_MAX];
  int64_t bytes;
} log_bytes;

typedef enum log_code_kind {
  CODE_SIZE_PLAIN,        /* "Code size: N bytes" */
  CODE_SIZE_COMPRESSED,   /* "Code size (compressed): N bytes" (self-extracting script) */
  CODE_SIZE_UNCOMPRESSED, /* "Code size (uncompressed): N bytes" */
} log_code_kind;

typedef struct log_code_size {
  uint32_t line;
  log_code_kind kind;
  int64_t bytes;
} log_code_size;

/* One hyperparameter: from a `Hyperparameters:` dump or a key:value
 * configuration line. key and value are NUL-terminated, owned by the log. */
typedef struct log_kv {
  uint32_t line;
  char *key;
  char *value;
} log_kv;

/* A single value and where it was printed; line 0 means absent. */
typedef struct log_value {
  uint32_t line;
  double v;
} log_value;

typedef struct pg_log {
  log_train_step *train;
  size_t n_train;
  log_val_step *val;
  size_t n_val;
  log_metric *metrics;
  size_t n_metrics;
  log_bytes *models; /* Serialized model lines */
  size_t n_models;
  log_bytes *totals; /* Total submission size lines */
  size_t n_totals;
  log_code_size *code;
  size_t n_code;
  log_kv *hparams; /* in log order; a later duplicate key is kept too */
  size_t n_hparams;

  /* stopping_early (the last one). */
  struct {
    uint32_t line;
    double train_ms, train_res_ms;
    int64_t step, total;
  } stop;
  log_value gptq_reserve_s;  /* gptq:reserving Xs */
  log_value gptq_hessian_s;  /* GPTQ:collected N Hessians in Xs */
  int64_t gptq_hessians;
  log_value total_eval_s;    /* total_eval_time:Xs */
  log_value seed;            /* first seed:N, or the hyperparameter `seed`: a whole
                                number below 2^53 in magnitude (others are no seed) */
  int seed_conflict;         /* a later seed line disagreed with the first */

  /* Runs in the file: one log can hold several runs one after the other
   * (each restarting its step count), or excerpts of other seeds' runs. A
   * step line whose step is below the last one printed, a seed other than
   * the last one printed, or a `Hyperparameters:` block after a metric of
   * the current segment starts a new segment, unless the current one
   * holds no result yet. seg_first holds the first line of each (one at
   * least, once parsed): the line after the last result of the segment
   * before, so the configuration a run prints before its first step is
   * its own. */
  uint32_t *seg_first;
  size_t n_segs;

  uint32_t first_line; /* the first line read: 1, or a part's (log_parse_part); never 0 */

  uint32_t n_lines;
  uint32_t code_end_line;     /* last line of a leading script-source block, 0 if none */
  uint32_t long_lines;        /* lines skipped for length or NUL bytes */
  uint32_t torchrun_warnings; /* W0318 ..., [W318 ...], [rank0]:[W...] lines */
  uint32_t figure_line;       /* first line printing a loss or bpb figure in no shape
                                 above ("loss 6.93", "Final BPB: 1.107"), 0 if none */
} pg_log;

/* Parse text[0..len) (which need not be NUL-terminated). name is used in
 * errors only. Fails only if len > LOG_MAX_BYTES or memory runs out; a log
 * with nothing recognisable parses to an empty pg_log. */
int log_parse(const char *text, size_t len, const char *name, pg_log *out, pg_error *err);

/* The same for a part of a file: text[0..len) are its lines from
 * first_line on, and every line number in out is the file's (a leading
 * script copy is looked for at the part's start). */
int log_parse_part(const char *text, size_t len, uint32_t first_line, const char *name, pg_log *out,
                   pg_error *err);

/* How many bytes of the line s[0..n) are what a logger or launcher put
 * before what the script printed (0 if none), any of these in a row:
 *   1776142348.135             a Unix time (9 to 11 digits), then a blank
 *   [default0]:  [rank3]:      torchrun's --tee and PyTorch's per-process tag
 *   [04:52:28]  [2026-03-23 04:39:13,123]  2026-04-30T12:00:00Z  2026-04-30 12:00:00+00:00
 *                              a clock, bracketed or not, then a blank and
 *                              optionally a level: "INFO: ", "INFO - ", "[INFO] "
 * Every reader of a log's lines (this parser, the script copy of
 * log_code.h, the data lines of log_data.h) strips the same. */
size_t log_prefix_len(const char *s, size_t n);
int log_parse_file(const char *path, pg_log *out, pg_error *err);
void log_free(pg_log *log);

/* The score a log reports: the last METRIC_FINAL line, its `_exact` twin
 * when one follows with the same base prefix. NULL if none. */
const log_metric *log_final_metric(const pg_log *log);

/* The value of hyperparameter key (the last one printed), or NULL. */
const log_kv *log_hparam(const pg_log *log, const char *key);

/* End of training as printed: the stopping_early line, else the last
 * training or validation step line with a train_time. Returns 0 and fills
 * *ms, *res_ms (resolution), *line, *step_ms (the step average there, or
 * train_ms / step; NAN if unknown); -1 if the log has no training clock. */
int log_train_end(const pg_log *log, double *ms, double *res_ms, uint32_t *line, double *step_ms);

const char *log_metric_kind_name(log_metric_kind k);
const char *log_code_kind_name(log_code_kind k);

#endif
