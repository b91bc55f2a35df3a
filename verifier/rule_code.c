/* CODE_UNREADABLE. Challenge README, "Submission Process": "A
 * `train_gpt.py` script and any other dependencies"; FAQ: "All counted
 * code should live in the `train_gpt.py` script."
 *
 * The counted code (verifier/code_count.h) is read to find what the run
 * loads. A script pgolf cannot read as code, such as a self-extracting
 * wrapper whose payload does not decode (or uses a codec pgolf does not
 * read) or a file over the size bound, hides what runs: the count may
 * miss files it loads. A warning: it shows no rule broken, only that a
 * reviewer must look. */
#include "verifier/code_count.h"
#include "verifier/rules.h"

void rule_code(const submission *s, finding_list *f) {
  const code_count *cc = s->counted;
  if (!cc) return;
  for (size_t i = 0; i < cc->n_problems; i++)
    findings_add(f, "CODE_UNREADABLE", SEV_WARNING, cc->problems[i].rel, 0,
                 "pgolf cannot read this code, so the files it loads may be missing from the "
                 "count: %s",
                 cc->problems[i].msg);
}
