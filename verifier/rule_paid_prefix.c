/* VAL_PAID_PREFIX. Challenge README, FAQ ("What are the restrictions on
 * evaluation?"): "You CANNOT access validation data during training, e.g.
 * by compressing it into your 16mb with 'paid prefix'". PRs #168, #262,
 * #272 and #278 shipped 0.34 to 12.9 million validation targets in the
 * artifact and scored every matching position at zero loss; none was
 * accepted.
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

#include "verifier/code_count.h"
#include "verifier/log_evidence.h"
#include "verifier/paid_prefix.h"
#include "verifier/rules.h"
#include "verifier/shipped_text.h"

/* log_evidence_match for a stored tensor's stem. */
static int loaded(const char *s, size_t n, const void *stem) {
  return paid_prefix_line(stem, s, n);
}

void rule_paid_prefix(const submission *s, finding_list *f) {
  const code_count *cc = s->counted;
  const shipped_texts *st = s->texts;
  if (!cc || !st) return;
  paid_prefix pp;
  const shipped_text *at = NULL;
  for (size_t i = 0; i < st->n && !at; i++)
    if (st->v[i].lexed && shipped_text_runs(st, i) && code_count_counts(cc, st->v[i].name) &&
        paid_prefix_scan(&st->v[i].src, &pp))
      at = &st->v[i];
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
    log_evidence ev;
    log_evidence_find(s, loaded, pp.stem, &ev);
    if (ev.log >= 0)
      findings_add(f, "VAL_PAID_PREFIX",
                   ev.backs_claim && s->track == TRACK_RECORD ? SEV_ERROR : SEV_WARNING, at->name,
                   at->decoded ? 0 : pp.mask_line,
                   "%s scores validation targets stored in the artifact: %s, and its log shows "
                   "a prefix loaded before the final metric (%s:%u `%.120s`); %s",
                   ev.backs_claim ? "the claimed run" : "a run that does not back the claim", what,
                   s->logs[ev.log].rel, ev.line, ev.text, rule);
    else
      findings_add(f, "VAL_PAID_PREFIX", SEV_WARNING, at->name, at->decoded ? 0 : pp.mask_line,
                   "%s; no log shows a prefix loaded (a line naming `%s` with a count of tokens "
                   "or bytes) before its final metric, so whether the claimed run used one is not "
                   "shown; %s",
                   what, pp.stem[0] ? pp.stem : "the stored tensor", rule);
  }
}
