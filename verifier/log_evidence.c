/* Evidence in a submission's logs (verifier/log_evidence.h). */
#include "verifier/log_evidence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"

/* The first accepted line of log i before its final metric: 1 and *out
 * filled, or 0. */
static int in_log(const submission *s, size_t i, log_evidence_match match, const void *ctx,
                  log_evidence *out) {
  const sub_log *lg = &s->logs[i];
  const log_metric *m = log_final_metric(&lg->log);
  if (!m) return 0;
  char path[8192];
  snprintf(path, sizeof path, "%s/%s", s->dir, lg->rel);
  uint8_t *buf = NULL;
  size_t len = 0;
  pg_error err;
  if (file_read_all(path, LOG_MAX_BYTES, &buf, &len, &err)) return 0;
  int found = 0;
  size_t off = lg->off < len ? lg->off : len;
  size_t stop = lg->len && off + lg->len <= len ? off + lg->len : len;
  uint32_t no = lg->log.first_line;
  for (size_t p = off; p < stop && no < m->line && !found; no++) {
    const char *l = (const char *)buf + p;
    const char *nl = memchr(l, '\n', stop - p);
    size_t n = nl ? (size_t)(nl - l) : stop - p;
    p += n + 1;
    if (no <= lg->log.code_end_line || n > LOG_MAX_LINE) continue;
    size_t pre = log_prefix_len(l, n);
    if (!match(l + pre, n - pre, ctx)) continue;
    found = 1;
    out->line = no;
    size_t k = n - pre < sizeof out->text - 1 ? n - pre : sizeof out->text - 1;
    memcpy(out->text, l + pre, k);
    out->text[k] = 0;
    while (k && (out->text[k - 1] == '\r' || out->text[k - 1] == ' ')) out->text[--k] = 0;
  }
  free(buf);
  return found;
}

void log_evidence_find(const submission *s, log_evidence_match match, const void *ctx,
                       log_evidence *out) {
  memset(out, 0, sizeof *out);
  out->log = -1;
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < s->n_logs; i++) {
      if (s->logs[i].copy_of >= 0 || s->logs[i].backs_claim != !pass) continue;
      if (!in_log(s, i, match, ctx, out)) continue;
      out->log = (long)i;
      out->backs_claim = !pass;
      return;
    }
}
