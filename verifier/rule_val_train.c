/* VAL_TRAIN_BEFORE_SCORE. Challenge README, FAQ ("What are the
 * restrictions on evaluation?"): "You can't cheat by training on the
 * validation set before you evaluate on the validation set ... you are
 * only allowed to test-time train on validation set tokens you've already
 * evaluated your model on". The maintainers closed PR #1376 (2026-04-10)
 * for "pre-quant TTT", epochs of fine-tuning on the validation tokens
 * before the evaluation that scores them, and the PRs of the same code
 * that followed (#1487, #1488; the list in openai/parameter-golf issue
 * #677); none is on the leaderboard, whose TTT records all score each
 * chunk before training on it.
 *
 * The counted code's trainers (verifier/val_train.h) are functions that
 * train on the whole validation stream with nothing scored first. Code
 * keeps them behind flags its documented run may leave off (PR #1489's
 * NoTTT folder ships the same function, never called in its run), so the
 * code alone is a warning. An error on the record track needs the run to
 * show it: a log backing the claim printing what the trainer (or the
 * block calling it) prints, before the log's final metric. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "verifier/code_count.h"
#include "verifier/rules.h"
#include "verifier/shipped_text.h"
#include "verifier/val_train.h"

/* The first line of log i, outside a leading script copy and before the
 * log's final metric, that begins with a mark of t; its number into
 * *line and its text into out. 0 if none. */
static int mark_in_log(const submission *s, size_t i, const val_trainer *t, uint32_t *line,
                       char *out, size_t cap) {
  const sub_log *lg = &s->logs[i];
  const log_metric *m = log_final_metric(&lg->log);
  if (!m || !t->n_marks) return 0;
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
    if (val_train_mark_at(t, l + pre, n - pre) < 0) continue;
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

/* A log showing trainer t ran: one backing the claim if any (*backs 1),
 * else any other. Index or -1. */
static long shown_in(const submission *s, const val_trainer *t, int *backs, uint32_t *line,
                     char *text, size_t cap) {
  long other = -1;
  uint32_t oline = 0;
  char otext[200] = "";
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < s->n_logs; i++) {
      if (s->logs[i].copy_of >= 0 || s->logs[i].backs_claim != !pass) continue;
      if (!mark_in_log(s, i, t, line, pass ? otext : text, pass ? sizeof otext : cap)) continue;
      if (!pass) return *backs = 1, (long)i;
      if (other < 0) other = (long)i, oline = *line;
    }
  *backs = 0;
  if (other >= 0) {
    *line = oline;
    snprintf(text, cap, "%s", otext);
  }
  return other;
}

static void label(char *out, size_t cap, const shipped_text *t) {
  snprintf(out, cap, "%s%s", t->name, t->decoded ? " (decoded)" : "");
}

void rule_val_train(const submission *s, finding_list *f) {
  const code_count *cc = s->counted;
  if (!cc) return;
  shipped_texts st;
  if (shipped_texts_load(s, &st)) {
    shipped_texts_free(&st);
    return;
  }
  py_src *src = calloc(st.n ? st.n : 1, sizeof *src);
  size_t *which = calloc(st.n ? st.n : 1, sizeof *which);
  val_trainer *vt = calloc(VT_MAX, sizeof *vt);
  size_t n = 0, found = 0;
  if (src && which && vt) {
    for (size_t i = 0; i < st.n; i++) {
      pg_error err;
      if (!shipped_text_runs(&st, i) || !code_count_counts(cc, st.v[i].name)) continue;
      if (pysrc_parse(st.v[i].text, st.v[i].len, st.v[i].name, &src[n], &err)) continue;
      which[n++] = i;
    }
    found = val_train_scan(src, n, vt, VT_MAX);
  }
  /* The first trainer a log backing the claim shows, else one any log
   * shows, else the first. */
  size_t pick = 0;
  long lg = -1;
  int backs = 0;
  uint32_t line = 0;
  char text[200] = "";
  for (size_t k = 0; k < found; k++) {
    int b;
    uint32_t l;
    char x[200];
    long i = shown_in(s, &vt[k], &b, &l, x, sizeof x);
    if (i >= 0 && (lg < 0 || (b && !backs))) {
      pick = k, lg = i, backs = b, line = l;
      snprintf(text, sizeof text, "%s", x);
    }
    if (backs) break;
  }
  if (found) {
    const val_trainer *t = &vt[pick];
    const shipped_text *def = &st.v[which[t->text]], *call = &st.v[which[t->call_text]];
    char dl[600], cl[600], what[2400];
    label(dl, sizeof dl, def);
    label(cl, sizeof cl, call);
    snprintf(what, sizeof what,
             "`%s` (%s:%u) runs backward passes and optimizer steps over the validation "
             "tokens (%s:%u `%s`) with nothing scored first, and %s:%u calls it on the whole "
             "stream `%s`",
             t->func, dl, t->def_line, dl, t->read_line, t->read, cl, t->call_line, t->stream);
    const char *rule =
        "the README: \"You can't cheat by training on the validation set before "
        "you evaluate on the validation set\", test-time training only on tokens "
        "already scored; the maintainers closed PR #1376 and the pre-quant TTT "
        "PRs after it for this (openai/parameter-golf issue #677)";
    if (lg >= 0) {
      const sub_log *g = &s->logs[lg];
      const log_metric *m = log_final_metric(&g->log);
      findings_add(f, "VAL_TRAIN_BEFORE_SCORE",
                   backs && s->track == TRACK_RECORD ? SEV_ERROR : SEV_WARNING, def->name,
                   def->decoded ? 0 : t->def_line,
                   "%s trains on the validation tokens before scoring them: %s; its log shows "
                   "it ran (%s:%u `%.120s`, printed by that function or the block calling it) "
                   "before the final metric (%s:%u `%s`); %s",
                   backs ? "the claimed run" : "a run that does not back the claim", what, g->rel,
                   line, text, g->rel, m ? m->line : 0, m ? m->prefix : "", rule);
    } else {
      findings_add(f, "VAL_TRAIN_BEFORE_SCORE", SEV_WARNING, def->name,
                   def->decoded ? 0 : t->def_line,
                   "the counted code trains on the validation tokens before scoring them: %s; no "
                   "log prints what it prints before a final metric, so whether the claimed run "
                   "used it is not shown; %s",
                   what, rule);
    }
  }
  for (size_t i = 0; i < n; i++) pysrc_free(&src[i]);
  free(src);
  free(which);
  free(vt);
  shipped_texts_free(&st);
}
