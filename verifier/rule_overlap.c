/* TRAIN_VAL_OVERLAP, VAL_SPLIT_MISMATCH and VAL_BYTES_MISMATCH: the data a
 * log says it used, against the published data (common/challenge.h).
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
 * (fineweb10B_sp1024); others are reported only by the fingerprint.
 *
 * The bytes, though, belong to the validation text, not to a tokenizer:
 * val_bpb = val_loss * tokens / (ln 2 * bytes), so a log that prints its
 * validation tokens and a final val_loss/val_bpb pair says how many bytes
 * its score divided by. Every tokenizer must arrive at the split's
 * CHALLENGE_VAL_BYTES; a byte table that counts more (the removed Scylla
 * record's counted 27 byte-fallback pieces as 3 bytes each) makes val_bpb
 * look better than it is. More bytes than the text has is an error on a
 * scored record; fewer is a warning (a subset, or an undercount that only
 * hurts the submitter). A run whose other metrics do divide by the
 * split's bytes while its final one does not scores some other way (a
 * byte-level mixture): a warning. A log on another export of the split (more tokens
 * than the published sp1024 split) is left to VAL_SPLIT_MISMATCH. */
#include <math.h>
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

/* Implied bytes may differ from the split's by the evaluation's cut to
 * whole sequences (VAL_TRUNCATION_SLACK tokens, up to ~0.35% at 4 bytes a
 * token) and by the printed digits; 1% covers both with room, and the
 * removed record was 21% over. */
#define VAL_BYTES_TOLERANCE 0.01

/* Half a unit in the last printed digit, relative to the value. */
static double rounding(log_num x) { return 0.5 * pow(10.0, -x.decimals) / fabs(x.v); }

/* The bytes metric m divided by, over tokens; its distance from the split's
 * bytes relative to them in *rel, and whether that is within the tolerance. */
static double implied_bytes(const log_metric *m, long long tokens, double *rel, int *near) {
  double implied = (double)tokens * m->val_loss.v / (m->val_bpb.v * log(2.0));
  *rel = implied / (double)CHALLENGE_VAL_BYTES - 1.0;
  *near = fabs(*rel) <= VAL_BYTES_TOLERANCE + rounding(m->val_loss) + rounding(m->val_bpb);
  return implied;
}

/* A metric of the final one's run whose bytes are the split's, or NULL.
 * Then the final val_bpb is not its val_loss over bytes at all (a mixture
 * with a byte-level model scores bytes directly), and its implied bytes
 * say nothing about the byte table. */
static const log_metric *agreeing_metric(const pg_log *l, const log_metric *fin, long long tokens) {
  for (size_t i = 0; i < l->n_metrics; i++) {
    const log_metric *m = &l->metrics[i];
    double rel;
    int near;
    if (m == fin || m->segment != fin->segment || !(m->val_loss.v > 0) || !(m->val_bpb.v > 0))
      continue;
    implied_bytes(m, tokens, &rel, &near);
    if (near) return m;
  }
  return NULL;
}

/* A claim recomputed over the split's bytes: within HONEST_TOLERANCE
 * (bpb) of the val_bpb the split's bytes give, beside the claim's own
 * rounding (the scripts print loss over the evaluation's tokens, cut to
 * whole sequences, while a claim may be recomputed over all of them: PR
 * #1771's differ by 3-4e-5). Overcounts move val_bpb by percents. */
#define HONEST_TOLERANCE 1e-4

/* Whether the claim for lg's run (its seed's claim, else the top-level
 * val_bpb) is the honest value, in *claim. */
static int claim_is_honest(const submission *s, const sub_log *lg, double honest, double *claim) {
  const sub_json *j = submission_claims(s);
  if (!j) return 0;
  for (size_t k = 0; k < j->n_claims; k++) {
    const sub_seed_claim *cl = &j->claims[k];
    if (cl->has_bpb && lg->seed >= 0 && cl->seed == lg->seed) {
      *claim = cl->val_bpb;
      return fabs(cl->val_bpb - honest) <= HONEST_TOLERANCE + 0.5 * pow(10.0, -cl->bpb_dec);
    }
  }
  *claim = j->val_bpb;
  return j->has_val_bpb &&
         fabs(j->val_bpb - honest) <= HONEST_TOLERANCE + 0.5 * pow(10.0, -j->val_bpb_dec);
}

static void check_bytes(const submission *s, const sub_log *lg, const log_data *d, int other_export,
                        finding_list *f) {
  const log_metric *m = log_final_metric(&lg->log);
  if (!m || d->val_tokens <= 0 || other_export || !(m->val_loss.v > 0) || !(m->val_bpb.v > 0))
    return;
  double rel;
  int near;
  double implied = implied_bytes(m, d->val_tokens, &rel, &near);
  if (near) return;
  const log_metric *ok = agreeing_metric(&lg->log, m, d->val_tokens);
  if (ok) {
    findings_add(f, "VAL_BYTES_MISMATCH", SEV_WARNING, lg->rel, m->line,
                 "%s's val_bpb %.8g is not its val_loss %.8g over the validation split's %lld "
                 "bytes (it implies %.0f), while %s [line %u] of the same run is: the final score "
                 "is computed another way (a byte-level mixture?), which this check cannot follow",
                 m->prefix, m->val_bpb.v, m->val_loss.v, CHALLENGE_VAL_BYTES, implied, ok->prefix,
                 ok->line);
    return;
  }
  double honest = m->val_loss.v * (double)d->val_tokens / (log(2.0) * (double)CHALLENGE_VAL_BYTES);
  if (rel > 0) {
    double claim;
    if (claim_is_honest(s, lg, honest, &claim)) {
      findings_add(f, "VAL_BYTES_MISMATCH", SEV_WARNING, lg->rel, m->line,
                   "%s divides by %.0f bytes, %.1f%% more than the validation split's %lld, but "
                   "the claim %.8g is its val_loss over the split's bytes (%.8g): the log's "
                   "val_bpb is understated, the claim is not",
                   m->prefix, implied, 100.0 * rel, CHALLENGE_VAL_BYTES, claim, honest);
      return;
    }
    severity sev = s->track == TRACK_RECORD && lg->backs_claim ? SEV_ERROR : SEV_WARNING;
    findings_add(f, "VAL_BYTES_MISMATCH", sev, lg->rel, m->line,
                 "%s divides by %.0f bytes (%lld validation tokens [line %u] x val_loss %.8g / "
                 "(val_bpb %.8g x ln 2)), %.1f%% more than the validation split's %lld, and no "
                 "metric of the run divides by the split's bytes: the byte accounting overcounts or "
                 "the scored text is not the fixed validation split, and either way val_bpb is "
                 "understated; if the tokens are the split's, its bytes give %.4f bpb",
                 m->prefix, implied, d->val_tokens, d->tokens_line, m->val_loss.v, m->val_bpb.v,
                 100.0 * rel, CHALLENGE_VAL_BYTES, honest);
  } else {
    findings_add(f, "VAL_BYTES_MISMATCH", SEV_WARNING, lg->rel, m->line,
                 "%s divides by %.0f bytes (%lld validation tokens [line %u] x val_loss %.8g / "
                 "(val_bpb %.8g x ln 2)), %.1f%% fewer than the validation split's %lld: a subset "
                 "was scored or bytes were undercounted",
                 m->prefix, implied, d->val_tokens, d->tokens_line, m->val_loss.v, m->val_bpb.v,
                 -100.0 * rel, CHALLENGE_VAL_BYTES);
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
  if (lg->off > len || lg->len > len - lg->off) { /* changed since it was parsed */
    free(buf);
    return;
  }
  const uint32_t before = lg->log.first_line - 1; /* lines before the part */
  const uint32_t skip = lg->log.code_end_line ? lg->log.code_end_line - before : 0;
  log_data_scan((const char *)buf + lg->off, lg->len, skip, &d);
  free(buf);
  if (d.dataset_line) d.dataset_line += before;
  if (d.shards_line) d.shards_line += before;
  if (d.tokens_line) d.tokens_line += before;
  if (!d.dataset[0]) dataset_from_hparams(&lg->log, &d);
  int published = !strcmp(d.dataset, CHALLENGE_SP1024_DATASET);
  check_shards(lg, &d, published, f);
  if (published) check_val(s, lg, &d, f);
  check_bytes(s, lg, &d, published && d.val_tokens > CHALLENGE_SP1024_VAL_TOKENS - 1, f);
}

void rule_overlap(const submission *s, finding_list *f) {
  for (size_t i = 0; i < s->n_logs; i++) one(s, &s->logs[i], f);
}
