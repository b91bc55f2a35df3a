/* What `pgolf check` does to one folder, for verbs that check folders in
 * process (pgolf leaderboard): every rule, and the JSON summary that
 * `pgolf check --json` prints beside the findings (verifier/cmd_check.c). */
#ifndef PGOLF_CHECK_FOLDER_H
#define PGOLF_CHECK_FOLDER_H

#include <jansson.h>

#include "verifier/findings.h"
#include "verifier/submission.h"

/* Every rule_*.c on a loaded folder (s->counted set by the caller), then
 * the findings sorted, errors first. */
void check_run_rules(const submission *s, finding_list *f);
/* {"track", "errors", "warnings", "claimed_val_bpb", "logs", "runs", ...}:
 * the "summary" of `pgolf check --json` (a new reference). */
json_t *check_summary_json(const submission *s, const finding_list *f);

#endif
