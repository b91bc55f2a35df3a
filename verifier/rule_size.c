/* SIZE_OVER_LIMIT. Challenge README, FAQ "What exactly counts toward the
 * 16MB artifact size?": "The submission artifact is computed as code bytes
 * plus compressed model bytes ... The cap is decimal 16MB, i.e. 16,000,000
 * total bytes, not 16 MiB / 16,777,216 bytes."
 *
 * Code bytes are counted under each convention that applies, and each is
 * named in the finding: the shipped code files (every .py in the folder),
 * the code size the log prints, and the compressed size a self-extracting
 * script prints. The compressed model bytes are the last labelled
 * `Serialized model LABEL:` line (an unlabelled one is the raw model). The
 * log's labelled `Total submission size LABEL:` is checked as printed.
 *
 * One finding per convention lists every log over the limit. A log that
 * does not back the claim (a rerun or ablation beside the claimed runs,
 * submission_runs.c) gets warnings: its artifact is not the one
 * submitted. Byte-identical copies of a log are skipped. */
#include <stdio.h>

#include "common/challenge.h"
#include "verifier/rules.h"

static const log_bytes *last_labelled(const log_bytes *v, size_t n) {
  const log_bytes *b = NULL;
  for (size_t i = 0; i < n; i++)
    if (v[i].label[0]) b = &v[i];
  return b;
}

static const log_code_size *last_code(const pg_log *l, log_code_kind k) {
  const log_code_size *c = NULL;
  for (size_t i = 0; i < l->n_code; i++)
    if (l->code[i].kind == k) c = &l->code[i];
  return c;
}

static void over(finding_list *f, const sub_log *lg, uint32_t line, const char *convention,
                 int64_t code, const log_bytes *model, severity sev) {
  int64_t total = code + model->bytes;
  if (total <= CHALLENGE_SIZE_LIMIT_BYTES) return;
  if (!lg->backs_claim) sev = SEV_WARNING;
  char head[200];
  snprintf(head, sizeof head, "%s%s", convention,
           lg->backs_claim ? "" : " (in runs that do not back the claim)");
  findings_group(f, "SIZE_OVER_LIMIT", sev, head, lg->rel, line,
                 "%lld code bytes + %lld model bytes (%s, line %u) = %lld > " CHALLENGE_SIZE_LIMIT_TEXT,
                 (long long)code, (long long)model->bytes, model->label, model->line,
                 (long long)total);
}

void rule_size(const submission *s, finding_list *f) {
  int64_t shipped = 0;
  for (size_t i = 0; i < s->n_code; i++) shipped += s->code[i].size;
  for (size_t i = 0; i < s->n_logs; i++) {
    const sub_log *lg = &s->logs[i];
    const pg_log *l = &lg->log;
    if (lg->copy_of >= 0) continue;
    const log_bytes *model = last_labelled(l->models, l->n_models);
    if (model) {
      const log_code_size *compressed = last_code(l, CODE_SIZE_COMPRESSED);
      /* A log that prints a compressed code size claims the self-extracting
       * convention; the readable files shipped beside it are then a
       * warning for the reviewer, not the deciding count. */
      if (s->n_code)
        over(f, lg, model->line,
             compressed ? "shipped code files (the log claims self-extracting compressed code)"
                        : "shipped code files",
             shipped, model, compressed ? SEV_WARNING : SEV_ERROR);
      const log_code_size *plain = last_code(l, CODE_SIZE_PLAIN);
      if (!plain && !compressed) plain = last_code(l, CODE_SIZE_UNCOMPRESSED);
      if (plain) over(f, lg, plain->line, "logged code size", plain->bytes, model, SEV_ERROR);
      if (compressed)
        over(f, lg, compressed->line, "self-extracting compressed code", compressed->bytes, model,
             SEV_ERROR);
    }
    const log_bytes *total = last_labelled(l->totals, l->n_totals);
    if (total && total->bytes > CHALLENGE_SIZE_LIMIT_BYTES) {
      char head[LOG_LABEL_MAX + 96];
      snprintf(head, sizeof head, "logged total submission size %s%s", total->label,
               lg->backs_claim ? "" : " (in runs that do not back the claim)");
      findings_group(f, "SIZE_OVER_LIMIT", lg->backs_claim ? SEV_ERROR : SEV_WARNING, head,
                     lg->rel, total->line, "%lld bytes > " CHALLENGE_SIZE_LIMIT_TEXT,
                     (long long)total->bytes);
    }
  }
  const sub_json *j = submission_claims(s);
  if (j && j->has_bytes_total && j->bytes_total > CHALLENGE_SIZE_LIMIT_BYTES)
    findings_add(f, "SIZE_OVER_LIMIT", SEV_ERROR, j->rel, 0,
                 "claimed bytes_total %lld > " CHALLENGE_SIZE_LIMIT_TEXT, (long long)j->bytes_total);
}
