/* TRAIN_VAL_OVERLAP and VAL_SPLIT_MISMATCH: the data a log says it used,
 * against the published data (common/challenge.h).
 *
 * Challenge README: "You CANNOT access validation data during training"
 * and "You can't cheat by training on the validation set before you
 * evaluate on the validation set" [FAQ: evaluation]; "Validation always
 * runs on the full `fineweb_val_*` split, which is the fixed
 * first-50k-document set" [Getting started].
 *
 * Logs print what the script found on disk: `train_loader:dataset:NAME
 * train_shards:N` and `val_loader:shards pattern=P tokens:N` (the
 * baseline's logger), or `train_shards: N` and `val_tokens: N` (later
 * scripts). pgolf reads them (after the script copy a log may begin with)
 * and compares:
 *   - train_shards equal to the maintainers' overlap fingerprint (1,499)
 *     is an error: their ruling excluded such submissions;
 *   - more training shards than the published set of the named dataset
 *     has is a warning: the data were prepared locally, which can put
 *     validation documents into training (`pgolf data overlap` settles it);
 *   - validation tokens: the scripts print the split's length less one,
 *     cut to whole evaluation sequences. More than the published split
 *     holds is a different export (the first baseline ran on an earlier
 *     one): a warning. Fewer than the published split by more than
 *     VAL_TRUNCATION_SLACK tokens is a subset: an error when a record's
 *     log reports a final score on it, else a warning (a non-record
 *     submission is not accepted for its number).
 * Only datasets whose published figures pgolf has are compared
 * (fineweb10B_sp1024); others are reported only by the fingerprint. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/challenge.h"
#include "common/fileio.h"
#include "verifier/log_data.h"
#include "verifier/rules.h"

/* Evaluation cuts the split to whole sequences: up to one sequence (the
 * records use 1,024 to 65,536 tokens; 2^17 leaves room) may be left out. */
#define VAL_TRUNCATION_SLACK 131072LL

/* The dataset from the printed hyperparameters when no loader line names it. */
static void dataset_from_hparams(const pg_log *l, log_data *d) {
  static const char *keys[] = {"datasets_dir", "data_path", "train_files", "val_files", "data_dir"};
  for (size_t k = 0; k < sizeof keys / sizeof *keys && !d->dataset[0]; k++) {
    const log_kv *kv = log_hparam(l, keys[k]);
    if (!kv) continue;
    log_data_dataset(kv->value, strlen(kv->value), d->dataset, sizeof d->dataset);
    if (d->dataset[0]) d->dataset_line = kv->line;
  }
}

static void check_shards(const sub_log *lg, const log_data *d, int published, finding_list *f) {
  if (d->train_shards == CHALLENGE_OVERLAP_TRAIN_SHARDS) {
    findings_add(f, "TRAIN_VAL_OVERLAP", SEV_ERROR, lg->rel, d->shards_line,
                 "train_shards: %lld is the maintainers' fingerprint of data prepared with 10,000 "
                 "validation documents instead of 50,000: validation documents 10,000-49,999 are "
                 "then in training (openai/parameter-golf issue #2127; PR #2146 excluded such runs)",
                 d->train_shards);
  } else if (published && d->train_shards > CHALLENGE_SP1024_TRAIN_FILES) {
    findings_add(f, "TRAIN_VAL_OVERLAP", SEV_WARNING, lg->rel, d->shards_line,
                 "%lld training shards of %s, but the published set has %d: the data were "
                 "prepared locally, and a preparation with fewer than %d validation documents "
                 "trains on validation documents; check them with `pgolf data overlap`",
                 d->train_shards, d->dataset, CHALLENGE_SP1024_TRAIN_FILES, CHALLENGE_VAL_DOCS);
  }
}

static void check_val(const submission *s, const sub_log *lg, const log_data *d, finding_list *f) {
  long long full = CHALLENGE_SP1024_VAL_TOKENS - 1; /* targets of the whole split */
  if (d->val_tokens > full) {
    findings_add(f, "VAL_SPLIT_MISMATCH", SEV_WARNING, lg->rel, d->tokens_line,
                 "%lld validation tokens, more than the published %s split holds (%lld): the "
                 "score is on another export of the validation data",
                 d->val_tokens, d->dataset, CHALLENGE_SP1024_VAL_TOKENS);
  } else if (d->val_tokens >= 0 && full - d->val_tokens > VAL_TRUNCATION_SLACK) {
    /* A record's score is compared with the leaderboard's; a non-record
     * submission is accepted for what it shows, not its number. */
    int scored = log_final_metric(&lg->log) != NULL;
    severity sev = scored && s->track == TRACK_RECORD ? SEV_ERROR : SEV_WARNING;
    findings_add(f, "VAL_SPLIT_MISMATCH", sev, lg->rel, d->tokens_line,
                 "%lld validation tokens, %.2f%% of the published %s split (%lld)%s",
                 d->val_tokens, 100.0 * (double)d->val_tokens / (double)CHALLENGE_SP1024_VAL_TOKENS,
                 d->dataset, CHALLENGE_SP1024_VAL_TOKENS,
                 scored ? ": the final score is not over the whole validation split" : "");
  }
}

static void one(const submission *s, const sub_log *lg, finding_list *f) {
  char path[8192];
  snprintf(path, sizeof path, "%s/%s", s->dir, lg->rel);
  uint8_t *buf;
  size_t len;
  pg_error err;
  if (file_read_all(path, LOG_MAX_BYTES, &buf, &len, &err)) return; /* LOG_UNREADABLE's case */
  log_data d;
  log_data_scan((const char *)buf, len, lg->log.code_end_line, &d);
  free(buf);
  if (!d.dataset[0]) dataset_from_hparams(&lg->log, &d);
  int published = !strcmp(d.dataset, CHALLENGE_SP1024_DATASET);
  check_shards(lg, &d, published, f);
  if (published) check_val(s, lg, &d, f);
}

void rule_overlap(const submission *s, finding_list *f) {
  for (size_t i = 0; i < s->n_logs; i++) one(s, &s->logs[i], f);
}
