/* NGRAM_TARGET_KEY. Challenge README, FAQ: "You can't cheat on your test
 * loss"; you may only adapt on "validation set tokens you've already
 * evaluated your model on". The maintainers' ruling on hashed n-gram
 * caches (openai/parameter-golf PRs #779 and #982, 2026-03-27): they are
 * "disallowed due to the use of hashed n-gram caches, which do not
 * renormalize correctly / correctly reweight the LM's token distribution,
 * look ahead to the target token to mix probabilities and therefore leak
 * eval tokens".
 *
 * The mark of such a cache is its lookup key: a context hash combined
 * with the target token itself, `full_key = ((ctx_hash ^ (tgt_np *
 * primes[k])) & mask)`, so that a count, and the probability blended from
 * it, exist only for the token that comes next. pgolf looks for that shape
 * in the counted code (a self-extracting script's payload too): an `^`
 * whose operand is a product of a name spelled as the target (`tgt...`,
 * `target...`, `label...`, `nxt...`, `next_...`, `y`, `y_...`: PR #1033's
 * `ctx_h ^ (y_batch * self.PRIMES[...])`; indexed or cast) and a prime
 * table (`...prime...[`), or of any name and a prime named for the target
 * (`tokens_np[a:b] * target_prime`).
 *
 * Code holds such caches behind flags its documented run may leave off
 * (PR #1120's Rascal, on the leaderboard, ships one with
 * NGRAM_EVAL_ORDER=0), so the code alone is a warning. An error on the
 * record track needs the run to say it used it: a log backing the claim
 * whose final metric is named for the n-gram evaluation
 * (`final_int6_sliding_window_ngram7_exact`), or a metric line so named
 * that holds the claimed val_bpb. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/code_count.h"
#include "verifier/pysrc.h"
#include "verifier/shipped_text.h"
#include "verifier/rules.h"

static int word(char c) { return pysrc_word_char(c); }

/* Skip a name's trailing index, cast or call: `[v_idx]`, `.astype(np.uint64)`. */
static size_t skip_suffixes(const char *t, size_t n, size_t i) {
  for (;;) {
    if (i < n && (t[i] == '[' || t[i] == '(')) {
      int level = 0;
      do {
        if (t[i] == '[' || t[i] == '(') level++;
        if (t[i] == ']' || t[i] == ')') level--;
        i++;
      } while (i < n && level > 0);
    } else if (i < n && t[i] == '.' && i + 1 < n && word(t[i + 1])) {
      i++;
      while (i < n && word(t[i])) i++;
    } else {
      return i;
    }
  }
}

/* A name at t[i] (not inside a longer word) that is any name when any is
 * set, else one spelled as the target; its end after suffixes, or 0. */
static size_t target_operand(const char *t, size_t n, size_t i, int any) {
  if (i > 0 && word(t[i - 1])) return 0;
  size_t j = i;
  while (j < n && word(t[j])) j++;
  if (j == i || isdigit((unsigned char)t[i]) || (!any && !pysrc_target_name(t + i, j - i)))
    return 0;
  return skip_suffixes(t, n, j);
}

/* A prime table at t[i]: a (dotted) name whose last part holds "prime",
 * then '['; or a name
 * holding both "target" and "prime" (`target_prime`), whose factor is the
 * target whatever its name (*for_target set). Its end, or 0. */
static size_t prime_operand(const char *t, size_t n, size_t i, int *for_target) {
  *for_target = 0;
  if (i > 0 && word(t[i - 1])) return 0;
  size_t last = 0, d = pysrc_dotted_name(t + i, n - i, &last); /* `self.PRIMES` too */
  if (!d) return 0;
  size_t j = i + d;
  i += last;
  char name[64];
  size_t k = j - i < sizeof name - 1 ? j - i : sizeof name - 1;
  for (size_t x = 0; x < k; x++) name[x] = (char)tolower((unsigned char)t[i + x]);
  name[k] = 0;
  if (!strstr(name, "prime")) return 0;
  if (strstr(name, "target")) return *for_target = 1, skip_suffixes(t, n, j);
  return j < n && t[j] == '[' ? skip_suffixes(t, n, j) : 0;
}

/* Does the blanked statement text hold `^ (target * primes[...])` (or the
 * product the other way round)? A key of the context and a candidate
 * (`ctx_hash ^ (cand * primes[k])`, every token of the vocabulary in
 * turn) is a normalized distribution's, so the factor's name decides. */
static int target_keyed(const char *t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (t[i] != '^') continue;
    size_t j = i + 1 + (i + 1 < n && t[i + 1] == '='); /* `^` or `^=` */
    while (j < n && (t[j] == '(' || t[j] == ' ')) j++;
    int ft;
    size_t a = target_operand(t, n, j, 1);
    if (a && a < n && t[a] == '*' && prime_operand(t, n, a + 1, &ft) &&
        (ft || target_operand(t, n, j, 0)))
      return 1;
    a = prime_operand(t, n, j, &ft);
    if (a && a < n && t[a] == '*' && target_operand(t, n, a + 1, ft)) return 1;
  }
  return 0;
}

typedef struct hit {
  char rel[512];
  char label[600];
  int decoded; /* line is the payload's: the finding names no line of the file */
  uint32_t line;
  char stmt[160];
} hit;

/* The first target-keyed statement of one shipped text, if any. */
static int scan_text(const shipped_text *t, hit *h) {
  if (!t->lexed) return 0;
  const py_src src = t->src;
  int found = 0;
  for (size_t j = 0; j < src.n && !found; j++) {
    char *code = pysrc_blank_strings(src.v[j].text, src.v[j].len);
    if (!code) break;
    if (strchr(code, '^') && target_keyed(code, src.v[j].len)) {
      found = 1;
      snprintf(h->rel, sizeof h->rel, "%s", t->name);
      snprintf(h->label, sizeof h->label, "%s%s", t->name, t->decoded ? " (decoded)" : "");
      h->decoded = t->decoded;
      h->line = src.v[j].line;
      pysrc_cut(h->stmt, sizeof h->stmt, src.v[j].text);
    }
    free(code);
  }
  return found;
}

/* Is a metric line named for an n-gram evaluation? */
static int ngram_named(const log_metric *m) {
  char p[128];
  size_t k = 0;
  for (; m->prefix[k] && k < sizeof p - 1; k++) p[k] = (char)tolower((unsigned char)m->prefix[k]);
  p[k] = 0;
  return strstr(p, "ngram") || strstr(p, "n_gram");
}

/* The metric line that shows the claimed score is an n-gram
 * evaluation's: the final metric of a log backing the claim, named for
 * it; else any metric line so named whose val_bpb is the claimed val_bpb
 * to the claim's digits (a run that prints its n-gram score beside a
 * plain one, `final_ngram_entropy_adaptive_exact`). *log gets its log;
 * NULL if none. */
static const log_metric *ngram_scored(const submission *s, const sub_log **log) {
  for (size_t i = 0; i < s->n_logs; i++) {
    const log_metric *m = log_final_metric(&s->logs[i].log);
    if (s->logs[i].backs_claim && m && ngram_named(m)) return *log = &s->logs[i], m;
  }
  const sub_json *j = submission_claims(s);
  if (!j || !j->has_val_bpb) return NULL;
  for (size_t i = 0; i < s->n_logs; i++)
    for (size_t k = 0; k < s->logs[i].log.n_metrics; k++) {
      const log_metric *m = &s->logs[i].log.metrics[k];
      if (ngram_named(m) && m->val_bpb.decimals > 0 &&
          claim_agrees(j->val_bpb, j->val_bpb_dec, m->val_bpb.v, m->val_bpb.decimals))
        return *log = &s->logs[i], m;
    }
  return NULL;
}

void rule_ngram_key(const submission *s, finding_list *f) {
  const code_count *cc = s->counted;
  const shipped_texts *st = s->texts;
  if (!cc || !st) return;
  hit h;
  int found = 0;
  for (size_t i = 0; i < st->n && !found; i++)
    if (shipped_text_runs(st, i) && code_count_counts(cc, st->v[i].name))
      found = scan_text(&st->v[i], &h);
  if (!found) return;
  const sub_log *lg = NULL;
  const log_metric *m = ngram_scored(s, &lg);
  if (m) {
    findings_add(f, "NGRAM_TARGET_KEY", s->track == TRACK_RECORD ? SEV_ERROR : SEV_WARNING, h.rel,
                 h.decoded ? 0 : h.line,
                 "the claimed score is an n-gram cache's (%s:%u `%s`), a hashed cache whose key "
                 "holds the target token itself (%s:%u `%s`): its count, and the probability "
                 "blended from it, are looked up for the token that comes next only, so the "
                 "scores are no normalized distribution fixed before the token is seen; the "
                 "maintainers disallowed such caches (openai/parameter-golf PRs #779, #982)",
                 lg->rel, m->line, m->prefix, h.label, h.line, h.stmt);
    return;
  }
  findings_add(f, "NGRAM_TARGET_KEY", SEV_WARNING, h.rel, h.decoded ? 0 : h.line,
               "the counted code holds a hashed n-gram cache whose key holds the target token "
               "itself (%s:%u `%s`), the kind the maintainers disallowed (openai/parameter-golf "
               "PRs #779, #982); no final metric of the claimed runs is named for it, so whether "
               "the score used it is not shown (`pgolf audit` on a score dump settles it)",
               h.label, h.line, h.stmt);
}
