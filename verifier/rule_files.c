/* MISSING_FILE. Challenge README, "Submission Process": a submission
 * "includes the following files ... 1. A README.md file ... 2. A
 * submission.json file ... 3. A train log, automatically produced by your
 * script ... 4. A train_gpt.py script and any other dependencies.
 * Submissions without the full set of requirements will not be accepted."
 *
 * The train log is missing when the folder holds no log at all; logs that
 * hold no final metric are NO_FINAL_METRIC's (one finding per cause). A
 * .log/.txt that prints loss or bpb figures in shapes pgolf does not read
 * ("step 1/9999 | loss 6.9311", "Final BPB: 1.1070") is a train log all
 * the same: the README fixes no format, so its absence is not shown, and
 * that pgolf cannot check the claims against it is LOG_UNREADABLE's
 * warning, as an unreadable script is CODE_UNREADABLE's. A README under
 * another name (readme.md, README.MD, README.md.txt) is a formality: a
 * warning. */
#include <string.h>

#include "verifier/rules.h"

/* A non-empty top-level .py or .sh other than train_gpt.py. */
static const sub_file *other_entry(const submission *s) {
  for (size_t i = 0; i < s->n_code; i++)
    if (!strchr(s->code[i].rel, '/') && s->code[i].size > 0) return &s->code[i];
  return NULL;
}

void rule_files(const submission *s, finding_list *f) {
  if (!s->has_readme && s->readme_alt)
    findings_add(f, "MISSING_FILE", SEV_WARNING, s->readme_alt, 0,
                 "the README is named %s, not README.md as the challenge asks (a formality: "
                 "a reader finds it all the same)",
                 s->readme_alt);
  else if (!s->has_readme)
    findings_add(f, "MISSING_FILE", SEV_ERROR, "README.md", 0,
                 "README.md is missing: the folder must explain the submission");
  if (!s->n_json)
    findings_add(f, "MISSING_FILE", SEV_ERROR, "submission.json", 0,
                 "no submission*.json with the claims (name, GitHub ID, val_bpb)");
  if (s->entry.rel && s->entry.size == 0) {
    findings_add(f, "MISSING_FILE", SEV_ERROR, s->entry.rel, 0, "train_gpt.py is empty");
  } else if (!s->entry.rel) {
    const sub_file *o = other_entry(s);
    if (o)
      findings_add(f, "MISSING_FILE", SEV_WARNING, "train_gpt.py", 0,
                   "no train_gpt.py; %s is taken as the entry script", o->rel);
    else
      findings_add(f, "MISSING_FILE", SEV_ERROR, "train_gpt.py", 0,
                   "no train_gpt.py and no other non-empty entry script");
  }
  if (s->n_logs) return;
  int figures = 0;
  for (size_t i = 0; i < s->n_other_logs; i++) {
    const sub_file *o = &s->other_logs[i];
    if (!o->figure_line) continue;
    figures++;
    findings_group(f, "LOG_UNREADABLE", SEV_WARNING,
                   "train logs in a format pgolf does not read: they print loss or bpb figures "
                   "but no `step:N/M ...` or `PREFIX val_loss:X val_bpb:Y` line, so none of the "
                   "claims (score, time, size, seeds) is checked against them; the first figure",
                   o->rel, o->figure_line, "%s", "");
  }
  if (!figures)
    findings_add(f, "MISSING_FILE", SEV_ERROR, NULL, 0,
                 "no train log: no .log or .txt file with step or metric lines%s",
                 s->n_other_logs ? " (the .log/.txt files here hold none)" : "");
}
