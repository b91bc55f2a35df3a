/* VAL_PAID_PREFIX. Challenge README, FAQ ("What are the restrictions on
 * evaluation?"): "You CANNOT access validation data during training, e.g.
 * by compressing it into your 16mb with 'paid prefix'". PRs #168, #262,
 * #272 and #278 shipped millions of validation targets in the artifact
 * and scored every matching position at zero loss; none was accepted.
 *
 * The counted code's evaluation (verifier/paid_prefix.h) compares a
 * stored tensor with the targets and zeroes the loss where they agree.
 * Code keeps it behind a file the run may not give (PRs #290 and #806
 * ship it and print `Paid prefix blob: 0 bytes`), so the code alone is a
 * warning. An error on the record track needs a log backing the claim to
 * show a prefix loaded: a line before its final metric naming the stored
 * tensor's stem with a positive count of tokens or bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "verifier/code_count.h"
#include "verifier/paid_prefix.h"
#include "verifier/rules.h"
#include "verifier/shipped_text.h"

/* The first line of log i, outside a leading script copy and before its
 * final metric, that shows a prefix of stem loaded; into *line and out. */
static int loaded_in(const submission *s, size_t i, const char *stem, uint32_t *line, char *out,
                     size_t cap) {
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
    if (!paid_prefix_line(stem, l + pre, n - pre)) continue;
    found = 1;
    *line = no;
    size_t k = n - pre < cap - 1 ? n - pre : cap - 1;
    memcpy(out, l + pre, k);
    out[k] = 0;
    while (k && (out[k - 1] == '\r' || out[k - 1] == ' ')) out[--k] = 0;
  }
  free(buf);
  return found;
}

void rule_paid_prefix(const submission *s, finding_list *f) {
  const code_count *cc = s->counted;
  if (!cc) return;
  shipped_texts st;
  if (shipped_texts_load(s, &st)) {
    shipped_texts_free(&st);
    return;
  }
  paid_prefix pp;
  const shipped_text *at = NULL;
  for (size_t i = 0; i < st.n && !at; i++) {
    if (!shipped_text_runs(&st, i) || !code_count_counts(cc, st.v[i].name)) continue;
    py_src src;
    pg_error err;
    if (pysrc_parse(st.v[i].text, st.v[i].len, st.v[i].name, &src, &err)) continue;
    if (paid_prefix_scan(&src, &pp)) at = &st.v[i];
    pysrc_free(&src);
  }
  if (at) {
    char label[600], what[2400];
    snprintf(label, sizeof label, "%s%s", at->name, at->decoded ? " (decoded)" : "");
    snprintf(what, sizeof what,
             "the evaluation compares stored tokens with the validation targets (%s:%u `%s`) and "
             "zeroes the loss where they agree (%s:%u `%s`)",
             label, pp.mask_line, pp.mask, label, pp.zero_line, pp.zero);
    const char *rule =
        "the README: \"You CANNOT access validation data during training, e.g. "
        "by compressing it into your 16mb with 'paid prefix'\" (PRs #168, #262, "
        "#272, #278, none accepted)";
    long lg = -1;
    uint32_t line = 0;
    char text[200] = "";
    int backs = 0;
    for (int pass = 0; pass < 2 && lg < 0; pass++)
      for (size_t i = 0; i < s->n_logs && lg < 0; i++)
        if (s->logs[i].copy_of < 0 && s->logs[i].backs_claim == !pass &&
            loaded_in(s, i, pp.stem, &line, text, sizeof text))
          lg = (long)i, backs = !pass;
    if (lg >= 0)
      findings_add(f, "VAL_PAID_PREFIX",
                   backs && s->track == TRACK_RECORD ? SEV_ERROR : SEV_WARNING, at->name,
                   at->decoded ? 0 : pp.mask_line,
                   "%s scores validation targets stored in the artifact: %s, and its log shows "
                   "a prefix loaded before the final metric (%s:%u `%.120s`); %s",
                   backs ? "the claimed run" : "a run that does not back the claim", what,
                   s->logs[lg].rel, line, text, rule);
    else
      findings_add(f, "VAL_PAID_PREFIX", SEV_WARNING, at->name, at->decoded ? 0 : pp.mask_line,
                   "%s; no log shows a prefix loaded (a line naming `%s` with a count of tokens "
                   "or bytes) before its final metric, so whether the claimed run used one is not "
                   "shown; %s",
                   what, pp.stem[0] ? pp.stem : "the stored tensor", rule);
  }
  shipped_texts_free(&st);
}
