/* SIZE_OVER_LIMIT. Challenge README, FAQ "What exactly counts toward the
 * 16MB artifact size?": "The submission artifact is computed as code bytes
 * plus compressed model bytes ... The cap is decimal 16MB, i.e. 16,000,000
 * total bytes, not 16 MiB / 16,777,216 bytes." and "All counted code
 * should live in the `train_gpt.py` script."
 *
 * Code bytes are counted under each convention that applies, and each is
 * named in the finding: the counted code (the entry script and the files
 * the documented run loads, verifier/code_count.h), the code size the log
 * prints plus the loaded files it does not include, and the compressed
 * size a self-extracting script prints plus those files. The compressed
 * model bytes are the last labelled `Serialized model LABEL:` line (an
 * unlabelled one is the raw model). The log's labelled `Total submission
 * size LABEL:` is checked as printed. Without a code count (a caller that
 * did not build one) every shipped .py is counted, as before.
 *
 * One finding per convention lists every log over the limit. A log that
 * does not back the claim (a rerun or ablation beside the claimed runs,
 * submission_runs.c) gets warnings: its artifact is not the one
 * submitted. Byte-identical copies of a log are skipped. */
#include <stdio.h>
#include <string.h>

#include "common/challenge.h"
#include "verifier/code_count.h"
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
  char head[600];
  snprintf(head, sizeof head, "%s%s", convention,
           lg->backs_claim ? "" : " (in runs that do not back the claim)");
  findings_group(f, "SIZE_OVER_LIMIT", sev, head, lg->rel, line,
                 "%lld code bytes + %lld model bytes (%s, line %u) = %lld > " CHALLENGE_SIZE_LIMIT_TEXT,
                 (long long)code, (long long)model->bytes, model->label, model->line,
                 (long long)total);
}

/* The entry script (and its loaded files) that made this log: the one
 * whose copy the log begins with, else the one whose size the log prints,
 * else the only one, else the smallest count (pgolf cannot tell, and an
 * error must rest on what the log shows). *how says which. */
static const code_set *set_of_log(const code_count *cc, const submission *s, const sub_log *lg,
                                  const char **how) {
  *how = "";
  if (!cc || !cc->n_sets) return NULL;
  if (cc->n_sets == 1) return &cc->sets[0];
  const code_set *by_copy = code_count_set_of_log(cc, (size_t)(lg - s->logs));
  if (by_copy) return by_copy;
  const log_code_size *plain = last_code(&lg->log, CODE_SIZE_PLAIN);
  for (size_t i = 0; plain && i < cc->n_sets; i++)
    if (cc->sets[i].files[0].bytes == plain->bytes) return &cc->sets[i];
  const code_set *best = &cc->sets[0];
  for (size_t i = 1; i < cc->n_sets; i++)
    if (cc->sets[i].counted < best->counted) best = &cc->sets[i];
  *how = "; the entry script that wrote this log is not known, the smallest count is used";
  return best;
}

/* The counted bytes a logged code size leaves out. A script logs the size
 * of its own source: for a plain size, the counted file closest in size to
 * the printed number (the entry, or the file a small loader exec's); a
 * compressed size is the entry's own. The others are added to it. */
static int64_t unlogged(const code_set *set, int64_t logged, int compressed) {
  const code_file *own = &set->files[0];
  for (size_t i = 1; i < set->n && !compressed; i++) {
    const code_file *c = &set->files[i];
    if (c->state != CODE_COUNTED) continue;
    int64_t d = c->bytes - logged, b = own->bytes - logged;
    if ((d < 0 ? -d : d) < (b < 0 ? -b : b)) own = c;
  }
  return set->counted - own->bytes;
}

/* ", online_ngram_tilt.py, online_ngram_state.c" for the loaded files a
 * logged size leaves out (all counted files but own). */
static void others_list(const code_set *set, int64_t logged, int compressed, char *out, size_t cap) {
  const code_file *own = &set->files[0];
  for (size_t i = 1; i < set->n && !compressed; i++) {
    const code_file *c = &set->files[i];
    int64_t d = c->bytes - logged, b = own->bytes - logged;
    if (c->state == CODE_COUNTED && (d < 0 ? -d : d) < (b < 0 ? -b : b)) own = c;
  }
  size_t k = 0, shown = 0, more = 0;
  out[0] = 0;
  for (size_t i = 0; i < set->n; i++) {
    const code_file *c = &set->files[i];
    if (c == own || c->state != CODE_COUNTED) continue;
    if (shown == 3) {
      more++;
      continue;
    }
    int w = snprintf(out + k, cap - k, "%s%s", shown ? ", " : "", c->rel);
    if (w < 0 || (size_t)w >= cap - k) break;
    k += (size_t)w;
    shown++;
  }
  if (more && k < cap) snprintf(out + k, cap - k, " and %zu more", more);
}

/* "counted code (train_gpt.py and 2 files it loads)". */
static void set_label(const code_set *set, const char *how, char *out, size_t cap) {
  size_t loaded = 0;
  for (size_t i = 1; i < set->n; i++) loaded += set->files[i].state == CODE_COUNTED;
  if (loaded)
    snprintf(out, cap, "counted code (%s and %zu file%s it loads%s)", set->files[0].rel, loaded,
             loaded == 1 ? "" : "s", how);
  else
    snprintf(out, cap, "counted code (%s%s)", set->files[0].rel, how);
}

/* The code a logged size stands for: the size plus the loaded files it
 * leaves out. */
static int64_t logged_code(const code_set *set, const log_code_size *c, int compressed) {
  return c->bytes + (set ? unlogged(set, c->bytes, compressed) : 0);
}

/* Each convention is judged alone, but where the shipped code and the
 * code the log measured differ (a script packed into a self-extracting
 * wrapper, or trimmed, after the run; or a packed wrapper ran while the
 * readable script ships), one of them fitting makes the others' excess a
 * warning: the maintainers merged 2026-04-06_SP8192_HessianSDClip on the
 * argument that its readable code packs small enough. */
static void check_log(const submission *s, const sub_log *lg, finding_list *f, int *shipped_fits) {
  const pg_log *l = &lg->log;
  const log_bytes *model = last_labelled(l->models, l->n_models);
  *shipped_fits = 0;
  if (!model) return;
  const log_code_size *compressed = last_code(l, CODE_SIZE_COMPRESSED);
  const log_code_size *plain = last_code(l, CODE_SIZE_PLAIN);
  if (!plain && !compressed) plain = last_code(l, CODE_SIZE_UNCOMPRESSED);
  const char *how;
  const code_set *set = set_of_log(s->counted, s, lg, &how);
  int64_t counted = 0;
  char label[400];
  if (set) {
    counted = set->counted;
    set_label(set, how, label, sizeof label);
  } else {
    for (size_t i = 0; i < s->n_code; i++) counted += s->code[i].size;
    snprintf(label, sizeof label, "shipped code files");
  }
  const log_code_size *logged[2] = {plain, compressed};
  int logged_fits = 0;
  for (int k = 0; k < 2; k++)
    logged_fits |= logged[k] &&
                   logged_code(set, logged[k], k == 1) + model->bytes <= CHALLENGE_SIZE_LIMIT_BYTES;
  int counted_fits = (s->n_code || set) && counted + model->bytes <= CHALLENGE_SIZE_LIMIT_BYTES;
  *shipped_fits = counted_fits;
  /* A log that prints a compressed code size claims the self-extracting
   * convention; a readable entry counted beside it is then a warning for
   * the reviewer, not the deciding count. */
  int readable = !set || !set->wrap.found;
  if (s->n_code || set) {
    char conv[480];
    const char *note = compressed && readable ? " (the log claims self-extracting compressed code)"
                       : logged_fits          ? " (the code size the log prints fits)"
                                              : "";
    snprintf(conv, sizeof conv, "%s%s", label, note);
    over(f, lg, model->line, conv, counted, model, note[0] ? SEV_WARNING : SEV_ERROR);
    if (set && set->maybe && counted_fits) {
      snprintf(conv, sizeof conv, "%s with the possibly loaded files (%lld bytes)", label,
               (long long)set->maybe);
      over(f, lg, model->line, conv, counted + set->maybe, model, SEV_WARNING);
    }
  }
  static const char *name[2] = {"logged code size", "self-extracting compressed code"};
  for (int k = 0; k < 2; k++) {
    if (!logged[k]) continue;
    int64_t others = set ? unlogged(set, logged[k]->bytes, k == 1) : 0;
    int64_t code = logged[k]->bytes + others;
    if (set && code == counted && !(k == 1 && readable)) continue; /* the count above, again */
    char conv[480], list[300] = "";
    if (others) others_list(set, logged[k]->bytes, k == 1, list, sizeof list);
    snprintf(
        conv, sizeof conv, "%s%s%s%s%s", name[k],
        others ? " + the loaded files it does not include (" : "", list, others ? ")" : "",
        counted_fits ? " (the shipped code fits: it differs from the code the log measured)" : "");
    over(f, lg, logged[k]->line, conv, code, model, counted_fits ? SEV_WARNING : SEV_ERROR);
  }
}

void rule_size(const submission *s, finding_list *f) {
  for (size_t i = 0; i < s->n_logs; i++) {
    const sub_log *lg = &s->logs[i];
    const pg_log *l = &lg->log;
    if (lg->copy_of >= 0) continue;
    int shipped_fits;
    check_log(s, lg, f, &shipped_fits);
    const log_bytes *total = last_labelled(l->totals, l->n_totals);
    if (total && total->bytes > CHALLENGE_SIZE_LIMIT_BYTES) {
      char head[LOG_LABEL_MAX + 160];
      snprintf(head, sizeof head, "logged total submission size %s%s%s", total->label,
               shipped_fits ? " (the shipped code fits with the model: it differs from the code "
                              "the log measured)"
                            : "",
               lg->backs_claim ? "" : " (in runs that do not back the claim)");
      findings_group(
          f, "SIZE_OVER_LIMIT", lg->backs_claim && !shipped_fits ? SEV_ERROR : SEV_WARNING, head,
          lg->rel, total->line, "%lld bytes > " CHALLENGE_SIZE_LIMIT_TEXT, (long long)total->bytes);
    }
  }
  const sub_json *j = submission_claims(s);
  if (j && j->has_bytes_total && j->bytes_total > CHALLENGE_SIZE_LIMIT_BYTES)
    findings_add(f, "SIZE_OVER_LIMIT", SEV_ERROR, j->rel, 0,
                 "claimed bytes_total %lld > " CHALLENGE_SIZE_LIMIT_TEXT, (long long)j->bytes_total);
}
