/* LOG_CODE_MISMATCH. Challenge README, "Submission Process": a record
 * includes "A train log, automatically produced by your script" and "A
 * `train_gpt.py` script and any other dependencies"; FAQ: "Any
 * non-reproducible results can be disqualified."
 *
 * Many logs begin with the source of the script that wrote them. pgolf
 * compares that copy with the shipped scripts (verifier/log_code.h). A log
 * written by different code is evidence that the shipped code did not
 * produce the claimed numbers: an error when statements that run differ
 * (or a default the documented run does not override), a warning when
 * only comments, layout or the reading of hyperparameters the README sets
 * differ, or the log holds only part of the script.
 *
 * A log without a copy may still print the size of the script that wrote
 * it (`Code size: N bytes`, the official script's len(code)). When no
 * shipped script (nor a self-extracting one's payload) is that size, a
 * different version wrote the log, and the settings it prints that no
 * shipped script mentions say what it had (issue #1594: one seed's log of
 * an accepted record prints 16,630 bytes and ttt_hash_embed: True, the
 * shipped script is 16,594 bytes and has no such setting; the
 * maintainers' repro pass on PR #86 found its log from an older config).
 * A warning: an edit after the run (a comment, a renamed log line)
 * changes the size too, and the copy that would show what changed is not
 * in the log. Only logs the claim rests on are compared: a baseline or an
 * ablation beside them was often written by other code on purpose. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/code_count.h"
#include "verifier/rules.h"
#include "verifier/shipped_text.h"

#define UNKNOWN_SHOWN 4 /* settings named in the message, then "..." */

/* A log that does not back the claim (a rerun, an ablation, a baseline
 * beside the claimed runs; verifier/submission_runs.c) is not the
 * evidence the claim rests on: its differences are warnings. So on the
 * non-record track, which accepts a submission for what it shows, not its
 * number: the maintainers merged three non-record folders whose logs an
 * earlier version of the shipped script wrote (LeWM_Jepa_Mamba2,
 * HNet_ByteVsSubword, XNOR-Net). */
static void one(const submission *s, const sub_log *lg, const log_code_result *r, finding_list *f) {
  const char *what = r->decoded ? " (its decoded payload)" : "";
  severity sev = lg->backs_claim && s->track == TRACK_RECORD ? SEV_ERROR : SEV_WARNING;
  switch (r->cls) {
  case LC_NONE:
  case LC_SAME:
    return;
  case LC_LAYOUT:
    findings_add(f, "LOG_CODE_MISMATCH", SEV_WARNING, lg->rel, r->first,
                 "the script copied at lines %u-%u differs from %s%s only in comments, docstrings or "
                 "layout%s",
                 r->first, r->last, r->script, what, r->detail);
    return;
  case LC_PARTIAL:
    findings_add(f, "LOG_CODE_MISMATCH", SEV_WARNING, lg->rel, r->first,
                 "the script copied at lines %u-%u is a part of %s%s (%zu of its statements); the "
                 "rest cannot be compared",
                 r->first, r->last, r->script, what, r->statements);
    return;
  case LC_CONFIG:
    findings_add(
        f, "LOG_CODE_MISMATCH", SEV_WARNING, lg->rel, r->first,
        "the script copied at lines %u-%u differs from %s%s only in statements that read "
        "environment variables the README's run sets, whose shipped default the log prints "
        "or the README states, or that do not change the run: %s",
        r->first, r->last, r->script, what, r->detail);
    return;
  case LC_DEFAULTS:
    findings_add(f, "LOG_CODE_MISMATCH", sev, lg->rel, r->first,
                 "the script copied at lines %u-%u reads %s with a different default than %s%s, and "
                 "the README's run does not set it: the shipped script run as documented is not the "
                 "run this log shows",
                 r->first, r->last, r->detail, r->script, what);
    return;
  case LC_PRINTS:
    findings_add(f, "LOG_CODE_MISMATCH", SEV_WARNING, lg->rel, r->first,
                 "the script copied at lines %u-%u differs from %s%s only in what it prints or "
                 "an exception's message, in assignments nothing reads, in imports nothing "
                 "uses or their guards, or in reading settings the run sets: the same numbers, "
                 "other text; first: %s",
                 r->first, r->last, r->script, what, r->detail);
    return;
  case LC_CODE: {
    char some[64] = "";
    if (r->code_hunks < r->hunks)
      snprintf(some, sizeof some, ", %zu of them in code", r->code_hunks);
    findings_add(
        f, "LOG_CODE_MISMATCH", sev, lg->rel, r->first,
        "different code wrote this log: its script (lines %u-%u, %zu statements%s) differs "
        "from %s%s in %zu place%s%s; for example: %s",
        r->first, r->last, r->statements, r->partial ? ", a part of the script" : "", r->script,
        what, r->hunks, r->hunks == 1 ? "" : "s", some, r->detail);
    return;
  }
  case LC_OTHER:
    findings_add(f, "LOG_CODE_MISMATCH", sev, lg->rel, r->first,
                 "the script copied at lines %u-%u (%zu statements) is not a shipped script: the "
                 "closest, %s%s, shares %zu of them",
                 r->first, r->last, r->statements, r->script, what, r->common);
    return;
  }
}

/* 1 if word w occurs in t (n bytes) outside a longer name, ignoring case
 * (a setting printed as ttt_hash_embed is read as TTT_HASH_EMBED). */
static int mentions(const char *t, size_t n, const char *w) {
  const size_t k = strlen(w);
  for (size_t i = 0; k && i + k <= n; i++) {
    if (strncasecmp(t + i, w, k)) continue;
    const int before = i > 0 && (isalnum((unsigned char)t[i - 1]) || t[i - 1] == '_');
    const int after = i + k < n && (isalnum((unsigned char)t[i + k]) || t[i + k] == '_');
    if (!before && !after) return 1;
  }
  return 0;
}

static int has_lower(const char *s) {
  for (; *s; s++)
    if (islower((unsigned char)*s)) return 1;
  return 0;
}

/* The settings lg prints that no shipped text mentions, ", "-separated;
 * none when a payload did not decode (its text is not there to search). A
 * URL (`https://...`) is no setting, nor a key without a lower-case
 * letter (`WARNING: ...`): the scripts print their settings in lower
 * case. */
static void unknown_settings(const sub_log *lg, const shipped_texts *st, char *out, size_t cap) {
  size_t len = 0, shown = 0, more = 0;
  out[0] = 0;
  for (size_t i = 0; i < lg->log.n_hparams && !st->undecoded; i++) {
    const char *key = lg->log.hparams[i].key, *value = lg->log.hparams[i].value;
    if ((value && !strncmp(value, "//", 2)) || !has_lower(key)) continue;
    int known = 0, dup = 0;
    for (size_t j = 0; j < i && !dup; j++) dup = !strcmp(lg->log.hparams[j].key, key);
    for (size_t j = 0; j < st->n && !known && !dup; j++)
      known = mentions(st->v[j].text, st->v[j].len, key);
    if (known || dup) continue;
    if (shown == UNKNOWN_SHOWN) {
      more++;
      continue;
    }
    int w = snprintf(out + len, cap - len, "%s%s", shown ? ", " : "", key);
    if (w < 0 || (size_t)w >= cap - len) break;
    len += (size_t)w;
    shown++;
  }
  if (more && len < cap) snprintf(out + len, cap - len, " and %zu more", more);
}

/* A log with no copy of its script whose printed script size no shipped
 * script has (see the top): the files' sizes first, then the decoded
 * payloads'. */
static void size_differs(const submission *s, const sub_log *lg, finding_list *f) {
  const log_code_size *c = NULL;
  for (size_t i = 0; i < lg->log.n_code; i++)
    if (lg->log.code[i].kind == CODE_SIZE_PLAIN) c = &lg->log.code[i];
  if (!c) return;
  for (size_t i = 0; i < s->n_code; i++)
    if (s->code[i].size == c->bytes) return;
  const shipped_texts *st = s->texts && s->texts->n ? s->texts : NULL;
  if (!st) return;
  for (size_t i = 0; i < st->n; i++)
    if ((int64_t)st->v[i].len == c->bytes) return;
  const shipped_text *near = &st->v[0]; /* the closest in size, for the message */
  for (size_t i = 1; i < st->n; i++)
    if (llabs((int64_t)st->v[i].len - c->bytes) < llabs((int64_t)near->len - c->bytes))
      near = &st->v[i];
  char unknown[300];
  unknown_settings(lg, st, unknown, sizeof unknown);
  findings_group(f, "LOG_CODE_MISMATCH", SEV_WARNING,
                 "a log prints the size of the script that wrote it, and no shipped script has "
                 "that size: a different version of the script wrote it",
                 lg->rel, c->line, "%lld bytes where the closest, %s%s, has %zu%s%s",
                 (long long)c->bytes, near->name, near->decoded ? "'s payload" : "", near->len,
                 unknown[0] ? "; it prints settings no shipped script mentions: " : "", unknown);
}

void rule_log_code(const submission *s, finding_list *f) {
  const code_count *cc = s->counted;
  if (!cc) return;
  for (size_t i = 0; i < s->n_logs && i < cc->n_logs; i++) {
    if (s->logs[i].copy_of >= 0) continue;
    one(s, &s->logs[i], &cc->logs[i], f);
    if (cc->logs[i].cls == LC_NONE && s->logs[i].backs_claim) size_differs(s, &s->logs[i], f);
  }
}
