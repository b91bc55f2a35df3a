/* libFuzzer: the challenge log parser. Every item carries a line within
 * the text, every metric a segment the log has, within that segment's
 * lines, and the score a log reports is one of its final metrics; a
 * line's prefix never runs past it. A file's parts (log_parts.h) begin at
 * its first line and go forward, and each parsed alone keeps its items
 * within its own lines. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "verifier/log_parse.h"
#include "verifier/log_parts.h"

/* The offset of line `line` (1-based) in t[0..n). */
static size_t line_at(const char *t, size_t n, uint32_t line) {
  size_t off = 0;
  for (uint32_t at = 1; at < line && off < n; at++) {
    const char *nl = memchr(t + off, '\n', n - off);
    off = nl ? (size_t)(nl - t) + 1 : n;
  }
  return off;
}

/* Each part parsed alone: its items on its own lines. */
static void check_parts(const char *t, size_t n, const pg_log *whole, const char *name) {
  log_part p[LOG_MAX_PARTS];
  size_t k = log_parts(whole, name, p);
  if (!k || k > LOG_MAX_PARTS || p[0].first_line != 1) __builtin_trap();
  for (size_t i = 0; i < k && k > 1; i++) {
    uint32_t end = i + 1 < k ? p[i + 1].first_line : whole->n_lines + 1;
    if (p[i].first_line >= end) __builtin_trap();
    size_t a = line_at(t, n, p[i].first_line), b = i + 1 < k ? line_at(t, n, end) : n;
    pg_log l;
    pg_error e;
    if (log_parse_part(t + a, b - a, p[i].first_line, name, &l, &e)) continue;
    for (size_t j = 0; j < l.n_metrics; j++)
      if (l.metrics[j].line < p[i].first_line || l.metrics[j].line >= end) __builtin_trap();
    for (size_t j = 0; j < l.n_train; j++)
      if (l.train[j].line < p[i].first_line || l.train[j].line >= end) __builtin_trap();
    if (l.first_line != p[i].first_line || l.n_lines >= end) __builtin_trap();
    log_free(&l);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pg_log l;
  pg_error e;
  const char *nl = memchr(data, '\n', size);
  size_t first = nl ? (size_t)(nl - (const char *)data) : size;
  if (log_prefix_len((const char *)data, first) > first) __builtin_trap();
  if (log_parse((const char *)data, size, "fuzz.log", &l, &e)) return 0;
  if (l.figure_line && (l.figure_line > l.n_lines || l.figure_line <= l.code_end_line))
    __builtin_trap();
  for (size_t i = 0; i < l.n_train; i++)
    if (!l.train[i].line || l.train[i].line > l.n_lines) __builtin_trap();
  for (size_t i = 0; i < l.n_metrics; i++)
    if (!l.metrics[i].line || l.metrics[i].line > l.n_lines ||
        l.metrics[i].line <= l.code_end_line || l.metrics[i].segment >= l.n_segs ||
        (i && l.metrics[i].segment < l.metrics[i - 1].segment))
      __builtin_trap();
  if (!l.n_segs || l.seg_first[0] != 1) __builtin_trap();
  for (size_t i = 1; i < l.n_segs; i++)
    if (l.seg_first[i] <= l.seg_first[i - 1] || l.seg_first[i] > l.n_lines) __builtin_trap();
  for (size_t i = 0; i < l.n_metrics; i++) {
    uint32_t g = l.metrics[i].segment;
    if (l.metrics[i].line < l.seg_first[g] ||
        (g + 1 < l.n_segs && l.metrics[i].line >= l.seg_first[g + 1]))
      __builtin_trap();
  }
  for (size_t i = 0; i < l.n_hparams; i++)
    if (!l.hparams[i].key[0] || l.hparams[i].line > l.n_lines) __builtin_trap();
  const log_metric *m = log_final_metric(&l);
  if (m && m->kind != METRIC_FINAL) __builtin_trap();
  double ms, res, step;
  uint32_t line;
  if (log_train_end(&l, &ms, &res, &line, &step) == 0 && (!line || line > l.n_lines))
    __builtin_trap();
  check_parts((const char *)data, size, &l, size % 2 ? "eval_seeds1_2.log" : "train.log");
  log_free(&l);
  return 0;
}
