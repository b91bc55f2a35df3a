/* libFuzzer: the challenge log parser. Every item carries a line within
 * the text, every metric a segment the log has, and the score a log
 * reports is one of its final metrics; a line's prefix never runs past it. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "verifier/log_parse.h"

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
    if (!l.metrics[i].line || l.metrics[i].line > l.n_lines || l.metrics[i].line <= l.code_end_line ||
        l.metrics[i].segment >= (l.n_segments ? l.n_segments : 1) ||
        (i && l.metrics[i].segment < l.metrics[i - 1].segment))
      __builtin_trap();
  for (size_t i = 0; i < l.n_hparams; i++)
    if (!l.hparams[i].key[0] || l.hparams[i].line > l.n_lines) __builtin_trap();
  const log_metric *m = log_final_metric(&l);
  if (m && m->kind != METRIC_FINAL) __builtin_trap();
  double ms, res, step;
  uint32_t line;
  if (log_train_end(&l, &ms, &res, &line, &step) == 0 && (!line || line > l.n_lines))
    __builtin_trap();
  log_free(&l);
  return 0;
}
