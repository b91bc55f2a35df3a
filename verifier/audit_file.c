/* A score dump audited from files (verifier/audit.h, "the audit from
 * files"): the dump, its tokenizer's byte tables, the validation split
 * and the event log loaded and validated, the defaults filled in, and
 * the outcomes as findings. Shared by `pgolf audit` and `pgolf verify`. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/shard.h"
#include "verifier/audit.h"

/* The shard files named by --val: files as given, directories expanded. */
static int val_paths(const audit_request *a, char ***out, size_t *n, pg_error *err) {
  char **paths = NULL;
  size_t count = 0;
  for (size_t i = 0; i < a->n_val; i++) {
    struct stat st;
    char **sub = NULL;
    size_t nsub = 1;
    if (stat(a->val[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      if (shard_glob(a->val[i], "fineweb_val_", &sub, &nsub, err)) goto fail;
    }
    char **grown = realloc(paths, (count + nsub) * sizeof *paths);
    if (!grown) {
      shard_paths_free(sub, sub ? nsub : 0);
      pg_fail(err, a->val[i], -1, "out of memory");
      goto fail;
    }
    paths = grown;
    for (size_t k = 0; k < nsub; k++) paths[count++] = sub ? sub[k] : strdup(a->val[i]);
    free(sub);
  }
  *out = paths;
  *n = count;
  return 0;
fail:
  shard_paths_free(paths, count);
  return -1;
}

void audit_loaded_free(audit_loaded *l) {
  score_dump_close(&l->dump);
  luts_free(&l->luts);
  val_data_close(&l->val);
  free(l->tokens);
  audit_log_free(&l->log);
}

/* The T to keep the split for: --seq-len, else the one a version 2 dump
 * records, else 1 (a version 1 dump does not say: every target). */
static uint32_t split_seq_len(const audit_request *a, const score_dump *d) {
  return a->seq_len ? a->seq_len : d->seq_len ? d->seq_len : 1;
}

static int load_luts(const audit_request *a, uint32_t vocab, byte_luts *luts, pg_error *err) {
  sp_model m;
  if (sp_model_load(a->tokenizer, &m, err)) return -1;
  int rc = luts_from_model(&m, vocab, luts, err);
  sp_model_free(&m);
  if (rc && !err->file[0]) snprintf(err->file, sizeof err->file, "%s", a->tokenizer);
  return rc;
}

int audit_load(const audit_request *a, audit_loaded *l, pg_error *err) {
  memset(l, 0, sizeof *l);
  if (score_dump_open(a->dump, &l->dump, err)) return -1;
  if (sha256_file(a->dump, l->dump_sha256, NULL, err)) return -1;
  if (load_luts(a, l->dump.vocab_size, &l->luts, err)) return -1;
  char **paths;
  size_t n;
  if (val_paths(a, &paths, &n, err)) return -1;
  l->seq_len = split_seq_len(a, &l->dump);
  int rc = val_data_open_paths(&l->val, paths, n, l->seq_len, l->dump.vocab_size, err);
  shard_paths_free(paths, n);
  if (rc) return -1;
  l->tokens = malloc(l->val.n_tokens * sizeof *l->tokens);
  if (!l->tokens) return pg_fail(err, "", -1, "out of memory for %" PRIu64 " tokens",
                                 l->val.n_tokens);
  if (val_data_copy(&l->val, 0, l->val.n_tokens, l->tokens, err)) return -1;
  return audit_log_load(a->dump, &l->dump, a->manifest, &l->log, err);
}

audit_input audit_make_input(const audit_request *a, const audit_loaded *l) {
  audit_input in = {a->dump, &l->dump, l->tokens, l->val.n_tokens, &l->luts, a->claim,
                    l->log.found ? &l->log.events : NULL, l->dump_sha256, l->seq_len,
                    l->log.missing[0] ? l->log.missing : NULL};
  if (!in.claim && in.events && in.events->val_bpb[0] && audit_events_match(&in, NULL, 0))
    in.claim = in.events->val_bpb;
  return in;
}

void audit_to_findings(const char *dump, const audit_outcome *o, finding_list *f) {
  for (int i = 0; i < AUDIT_N_CONDITIONS; i++) {
    if (o[i].status == AUDIT_PASS) continue;
    severity sev = o[i].status == AUDIT_FAIL ? SEV_ERROR : SEV_WARNING;
    if (o[i].position >= 0)
      findings_add(f, o[i].code, sev, dump, 0, "%s: position %" PRId64 ": %s",
                   o[i].condition, o[i].position, o[i].message);
    else
      findings_add(f, o[i].code, sev, dump, 0, "%s: %s%s", o[i].condition,
                   o[i].status == AUDIT_SKIP ? "not checked: " : "", o[i].message);
  }
}

