/* Several runs in one log file; see log_parts.h. */
#include "verifier/log_parts.h"

#include <stdlib.h>
#include <string.h>

size_t log_name_seeds(const char *name, int64_t *out, size_t cap) {
  const char *p = name;
  while ((p = strcasestr(p, "seed"))) {
    p += 4;
    if (*p == 's' || *p == 'S') p++;
    while (*p == '_' || *p == '-' || *p == '=') p++;
    size_t n = 0;
    for (;;) {
      size_t k = strspn(p, "0123456789");
      const char c = p[k];
      /* a group of digits alone: "42_", "42.", "42" at the end; not "2048ctx" */
      if (!k || k > 18 || (c && c != '_' && c != '-' && c != '.')) break;
      if (n < cap) out[n] = strtoll(p, NULL, 10);
      n++;
      if (c != '_' && c != '-') break;
      p += k + 1;
    }
    if (n) return n < cap ? n : cap;
  }
  return 0;
}

/* Does l print a result (a step, a metric, a stop line) on a line in
 * [from, to)? */
static int results_in(const pg_log *l, uint32_t from, uint32_t to) {
#define IN(line) ((line) >= from && (line) < to)
  for (size_t i = 0; i < l->n_train; i++)
    if (IN(l->train[i].line)) return 1;
  for (size_t i = 0; i < l->n_val; i++)
    if (IN(l->val[i].line)) return 1;
  for (size_t i = 0; i < l->n_metrics; i++)
    if (IN(l->metrics[i].line)) return 1;
  return IN(l->stop.line);
#undef IN
}

/* Where segment k ends: the next one's first line, or past the file. */
static uint32_t seg_end(const pg_log *l, size_t k) {
  return k + 1 < l->n_segs ? l->seg_first[k + 1] : l->n_lines + 1;
}

/* A part per segment holding a result (the first from the file's first
 * line, so that what comes before its first result is its own). Returns
 * how many; 1 if at most one segment holds a result, or more than
 * LOG_MAX_PARTS do. */
static size_t by_results(const pg_log *l, log_part *out) {
  size_t n = 0;
  for (size_t k = 0; k < l->n_segs; k++) {
    if (!results_in(l, l->seg_first[k], seg_end(l, k))) continue;
    if (n == LOG_MAX_PARTS) return 1;
    uint32_t first = n ? l->seg_first[k] : l->first_line;
    out[n++] = (log_part){first, -1};
  }
  return n ? n : 1;
}

size_t log_parts(const pg_log *l, const char *name, log_part *out) {
  size_t n = l->n_segs > 1 ? by_results(l, out) : 1;
  if (n == 1) {
    out[0] = (log_part){l->first_line, -1};
    return 1;
  }
  int64_t seeds[LOG_MAX_PARTS];
  size_t k = log_name_seeds(name, seeds, LOG_MAX_PARTS);
  for (size_t i = 0; i < n; i++) out[i].name_seed = k == n ? seeds[i] : k == 1 ? seeds[0] : -1;
  return n;
}
