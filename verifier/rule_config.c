/* CONFIG_MISMATCH. The seed logs of one claim must be runs of one
 * configuration: a claimed mean over seeds is only a mean over seeds if
 * nothing else changed (challenge README, "Submission Process": "enough
 * run logs to show at p < 0.01"; records have been removed for logs of a
 * different configuration). Keys that differ by nature between runs are
 * not compared. */
#include <string.h>

#include "verifier/rules.h"

#define MAX_PER_LOG 10

static int per_run_key(const char *k) {
  static const char *skip[] = {"seed", "run_id", "logfile", "log_path", "rank", "local_rank",
                               "is_main_process", "output_dir", "out_dir", "model_path",
                               "quantized_model_path"};
  for (size_t i = 0; i < sizeof skip / sizeof *skip; i++)
    if (strcmp(k, skip[i]) == 0) return 1;
  return 0;
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Paths differ between machines and runs (/workspace/run_seed1/...): for a
 * path-valued key only the last component (the file or folder name) must
 * agree, so a different tokenizer file is still caught. */
static int same_value(const char *key, const char *a, const char *b) {
  if (ends_with(key, "_dir") || ends_with(key, "_path") || ends_with(key, "_file") ||
      ends_with(key, "_files")) {
    const char *x = strrchr(a, '/'), *y = strrchr(b, '/');
    return strcmp(x ? x + 1 : a, y ? y + 1 : b) == 0;
  }
  return strcmp(a, b) == 0;
}

void rule_config(const submission *s, finding_list *f) {
  if (s->n_logs < 2) return;
  const sub_log *ref = &s->logs[0];
  for (size_t i = 1; i < s->n_logs; i++) {
    const sub_log *o = &s->logs[i];
    if (!ref->log.n_hparams || !o->log.n_hparams) continue;
    int reported = 0;
    for (size_t k = 0; k < ref->log.n_hparams && reported < MAX_PER_LOG; k++) {
      const log_kv *a = &ref->log.hparams[k];
      if (per_run_key(a->key) || log_hparam(&ref->log, a->key) != a) continue;
      const log_kv *b = log_hparam(&o->log, a->key);
      if (!b) {
        findings_add(f, "CONFIG_MISMATCH", SEV_ERROR, o->rel, 0,
                     "hyperparameter %s (%s in %s:%u) is not printed in this log", a->key,
                     a->value, ref->rel, a->line);
        reported++;
      } else if (!same_value(a->key, a->value, b->value)) {
        findings_add(f, "CONFIG_MISMATCH", SEV_ERROR, o->rel, b->line,
                     "hyperparameter %s is %s here but %s in %s:%u", a->key, b->value, a->value,
                     ref->rel, a->line);
        reported++;
      }
    }
    for (size_t k = 0; k < o->log.n_hparams && reported < MAX_PER_LOG; k++) {
      const log_kv *b = &o->log.hparams[k];
      if (per_run_key(b->key) || log_hparam(&o->log, b->key) != b) continue;
      if (!log_hparam(&ref->log, b->key)) {
        findings_add(f, "CONFIG_MISMATCH", SEV_ERROR, o->rel, b->line,
                     "hyperparameter %s=%s is not printed in %s", b->key, b->value, ref->rel);
        reported++;
      }
    }
  }
}
