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

#include "verifier/code_count.h"
#include "verifier/log_evidence.h"
#include "verifier/rules.h"
#include "verifier/shipped_text.h"
#include "verifier/val_train.h"

/* log_evidence_match for a trainer's marks. */
static int marked(const char *s, size_t n, const void *t) {
  return val_train_mark_at(t, s, n) >= 0;
}

static void label(char *out, size_t cap, const shipped_text *t) {
  snprintf(out, cap, "%s%s", t->name, t->decoded ? " (decoded)" : "");
}

void rule_val_train(const submission *s, finding_list *f) {
  const code_count *cc = s->counted;
  const shipped_texts *st = s->texts;
  if (!cc || !st) return;
  py_src *src = calloc(st->n ? st->n : 1, sizeof *src); /* shallow copies of the counted ones */
  size_t *which = calloc(st->n ? st->n : 1, sizeof *which);
  val_trainer *vt = calloc(VT_MAX, sizeof *vt);
  size_t n = 0, found = 0;
  if (src && which && vt) {
    for (size_t i = 0; i < st->n; i++)
      if (st->v[i].lexed && shipped_text_runs(st, i) && code_count_counts(cc, st->v[i].name))
        src[n] = st->v[i].src, which[n++] = i;
    found = val_train_scan(src, n, vt, VT_MAX);
  }
  /* The first trainer a log backing the claim shows, else one any log
   * shows, else the first. */
  size_t pick = 0;
  log_evidence ev = {.log = -1};
  for (size_t k = 0; k < found && !ev.backs_claim; k++) {
    log_evidence e;
    log_evidence_find(s, marked, &vt[k], &e);
    if (e.log >= 0 && (ev.log < 0 || e.backs_claim)) pick = k, ev = e;
  }
  if (found) {
    const val_trainer *t = &vt[pick];
    const shipped_text *def = &st->v[which[t->text]], *call = &st->v[which[t->call_text]];
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
    if (ev.log >= 0) {
      const sub_log *g = &s->logs[ev.log];
      const log_metric *m = log_final_metric(&g->log);
      findings_add(f, "VAL_TRAIN_BEFORE_SCORE",
                   ev.backs_claim && s->track == TRACK_RECORD ? SEV_ERROR : SEV_WARNING, def->name,
                   def->decoded ? 0 : t->def_line,
                   "%s trains on the validation tokens before scoring them: %s; its log shows "
                   "it ran (%s:%u `%.120s`, printed by that function or the block calling it) "
                   "before the final metric (%s:%u `%s`); %s",
                   ev.backs_claim ? "the claimed run" : "a run that does not back the claim", what,
                   g->rel, ev.line, ev.text, g->rel, m ? m->line : 0, m ? m->prefix : "", rule);
    } else {
      findings_add(f, "VAL_TRAIN_BEFORE_SCORE", SEV_WARNING, def->name,
                   def->decoded ? 0 : t->def_line,
                   "the counted code trains on the validation tokens before scoring them: %s; no "
                   "log prints what it prints before a final metric, so whether the claimed run "
                   "used it is not shown; %s",
                   what, rule);
    }
  }
  free(src);
  free(which);
  free(vt);
}
