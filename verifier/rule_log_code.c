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
 * differ, or the log holds only part of the script. */
#include "verifier/code_count.h"
#include "verifier/rules.h"

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
                 "an exception's message, in assignments nothing reads, in imports nothing uses or their guards, or in "
                 "reading settings the run sets: the same numbers, other text; first: %s",
                 r->first, r->last, r->script, what, r->detail);
    return;
  case LC_CODE:
    findings_add(f, "LOG_CODE_MISMATCH", sev, lg->rel, r->first,
                 "different code wrote this log: its script (lines %u-%u, %zu statements%s) differs "
                 "from %s%s in %zu place%s; first: %s",
                 r->first, r->last, r->statements, r->partial ? ", a part of the script" : "",
                 r->script, what, r->hunks, r->hunks == 1 ? "" : "s", r->detail);
    return;
  case LC_OTHER:
    findings_add(f, "LOG_CODE_MISMATCH", sev, lg->rel, r->first,
                 "the script copied at lines %u-%u (%zu statements) is not a shipped script: the "
                 "closest, %s%s, shares %zu of them",
                 r->first, r->last, r->statements, r->script, what, r->common);
    return;
  }
}

void rule_log_code(const submission *s, finding_list *f) {
  const code_count *cc = s->counted;
  if (!cc) return;
  for (size_t i = 0; i < s->n_logs && i < cc->n_logs; i++)
    if (s->logs[i].copy_of < 0) one(s, &s->logs[i], &cc->logs[i], f);
}
