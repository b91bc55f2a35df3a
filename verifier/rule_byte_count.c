/* VAL_BYTES_CODE. Challenge README, "Submission Process", criterion 2:
 * "prove with certainty that the val_bpb is correctly calculated"; the
 * score is bits per byte of the validation text, whose bytes are fixed
 * (151,078,879, common/challenge.h) whatever the tokenizer.
 *
 * The counted code's byte tables (verifier/byte_luts.h) are run on
 * stand-in pieces and compared with the official count:
 *   - a word-initial piece whose base bytes already hold its space, in
 *     code whose evaluation also adds the space table, counts every
 *     word's space twice: about one byte in six more than the text has,
 *     so the score looks some 15% better than it is. The maintainers
 *     closed the GDN-Hybrid PRs #1545 and #1576 for exactly this code.
 *     An error on the record track when every entry script counts so
 *     (pgolf cannot tell which one made the score otherwise), else a
 *     warning;
 *   - a byte-fallback piece counted other than 1 byte (its text `<0x41>`
 *     is 6), a control or unknown piece other than 0: warnings. They move
 *     the score by how often such pieces occur in the split, which pgolf
 *     cannot count without it: the challenge's sp1024, sp2048 and sp4096
 *     tokenizers have no byte-fallback pieces, its sp8192 has 256, and
 *     every validation document begins with the control piece <s>;
 *   - bits per byte made from a constant bytes-per-token ratio
 *     (`val_loss / (math.log(2) * 3.5)`, PR #875), not from the scored
 *     tokens' bytes: a warning, since the right ratio depends on the
 *     tokenizer and the tokens scored, which pgolf cannot always tell. */
#include <stdlib.h>
#include <string.h>

#include "common/challenge.h"
#include "verifier/byte_luts.h"
#include "verifier/code_count.h"
#include "verifier/rules.h"
#include "verifier/shipped_text.h"

#define MAX_SPACE_NAMES 16

/* One counted Python text (a self-extracting script's decoded payload,
 * verifier/shipped_text.h), lexed, with the builders found in it. */
typedef struct lexed {
  const char *rel;
  char label[512];
  const py_src *src; /* the shipped text's */
  byte_luts luts;
  int ok;
  int wrapped; /* lines are the decoded payload's, not the file's */
} lexed;

static void lex_text(const shipped_text *t, lexed *x) {
  x->rel = t->name;
  x->wrapped = t->decoded;
  snprintf(x->label, sizeof x->label, "%s%s", t->name, t->decoded ? " (decoded)" : "");
  if (!t->lexed) return;
  x->src = &t->src;
  x->ok = 1;
  byte_luts_scan(x->src, &x->luts);
}

/* The statement of the counted code that adds the builder's space table
 * (file index in *file), or -1. */
static long space_added(lexed **xs, size_t n, size_t home, const byte_lut_fn *fn, size_t *file) {
  char names[MAX_SPACE_NAMES][BL_MAX_NAME];
  size_t nn = 0;
  for (size_t i = 0; i < n; i++)
    nn = byte_luts_space_names(xs[i]->src, fn, names, nn, MAX_SPACE_NAMES);
  for (size_t i = 0; i < n; i++) {
    long j = byte_luts_space_added(xs[i]->src, names, nn, i == home ? fn : NULL);
    if (j >= 0) return *file = i, j;
  }
  return -1;
}

static void where(char *buf, size_t cap, const lexed *x, const byte_lut_fn *fn, int kind) {
  uint32_t line = fn->base_line[kind] ? fn->base_line[kind] : fn->line;
  snprintf(buf, cap, "%s:%u", x->label, line);
}

/* A word-initial target's bytes as the code counts them: its base bytes,
 * plus 1 where the counted code adds the space table. The official count
 * is 4 for `▁abc` (3, plus its space unless the previous token is a
 * boundary); more is an over-count: fills msg and returns 1. */
static int space_overcount(lexed **xs, size_t n, size_t home, const byte_lut_fn *fn, char *msg,
                           size_t cap) {
  int64_t b = fn->base[BL_SPACE];
  if (b == BL_UNSET || b <= byte_luts_official_base[BL_SPACE]) return 0;
  size_t file = 0;
  long j = fn->space_table[0] ? space_added(xs, n, home, fn, &file) : -1;
  int64_t total = b + (j >= 0);
  if (total <= byte_luts_official_base[BL_SPACE] + 1) return 0;
  char at[600], added[900] = "", why[500];
  where(at, sizeof at, xs[home], fn, BL_SPACE);
  if (j >= 0) {
    const py_stmt *add = &xs[file]->src->v[j];
    char text[100];
    snprintf(text, sizeof text, "%s", add->text);
    if (add->len >= sizeof text) memcpy(text + sizeof text - 4, "...", 4);
    snprintf(added, sizeof added, ", and %s:%u adds 1 more for its space (`%s`)", xs[file]->label,
             add->line, text);
  }
  if (b == byte_luts_official_base[BL_SPACE] + 1 && j >= 0)
    snprintf(why, sizeof why,
             "the space is in the base bytes and added again: "
             "openai/parameter-golf PRs #1545 and #1576 were closed for this code");
  else if (b >= byte_luts_official_base[BL_SPACE] + 3 && !fn->space_table[0])
    snprintf(why, sizeof why,
             "no piece is recognized as word-initial%s%s%s, so `\u2581` stays in the piece and "
             "counts its 3 UTF-8 bytes for a 1-byte space",
             fn->test_line ? " (`" : "", fn->test_line ? fn->test_stmt : "",
             fn->test_line ? "` never holds for it)" : "");
  else
    snprintf(why, sizeof why, "the space counts %lld bytes", (long long)(total - 3));
  snprintf(msg, cap,
           "%s's byte table (%s) gives the word-initial piece `\u2581abc` %lld bytes (`%s`)%s: "
           "every target that begins a word counts %lld bytes where the validation text has 4 "
           "(the 3 after the space, and the space itself unless the previous token is a "
           "boundary), so val_bpb divides by more bytes than the text has (%s)",
           fn->name, at, (long long)b,
           fn->base_stmt[BL_SPACE][0] ? fn->base_stmt[BL_SPACE] : "its initial value", added,
           (long long)total, why);
  return 1;
}

/* The pieces other than word-initial ones that the builder counts
 * otherwise than the official table: one warning. */
static void other_kinds(const lexed *x, const byte_lut_fn *fn, finding_list *f) {
  static const char *const what[BL_KINDS] = {"a plain piece", "a word-initial piece",
                                             "a byte-fallback piece", "the control piece",
                                             "the unknown piece"};
  char list[1200] = "";
  size_t at = 0;
  uint32_t line = 0;
  int byte = 0, control = 0;
  for (int k = 0; k < BL_KINDS; k++) {
    if (k == BL_SPACE || fn->base[k] == BL_UNSET || fn->base[k] == byte_luts_official_base[k])
      continue;
    if (!line) line = fn->base_line[k] ? fn->base_line[k] : fn->line;
    byte |= k == BL_BYTE;
    control |= k == BL_CONTROL;
    at += (size_t)snprintf(list + at, sizeof list - at, "%s%s `%s` %lld bytes (official %d, %s:%u)",
                           at ? "; " : "", what[k], byte_luts_kind_text[k], (long long)fn->base[k],
                           byte_luts_official_base[k], x->label,
                           fn->base_line[k] ? fn->base_line[k] : fn->line);
    if (at >= sizeof list) break;
  }
  if (!line) return;
  long long bos_extra = fn->base[BL_CONTROL] == BL_UNSET
                            ? 0
                            : (long long)fn->base[BL_CONTROL] * (CHALLENGE_VAL_DOCS - 1);
  char bos[200] = "";
  if (control)
    snprintf(bos, sizeof bos,
             "; every validation document begins with <s>: %d targets, %lld bytes more than the "
             "split's %lld (%.3f%%)",
             CHALLENGE_VAL_DOCS - 1, bos_extra, (long long)CHALLENGE_VAL_BYTES,
             100.0 * (double)bos_extra / (double)CHALLENGE_VAL_BYTES);
  findings_add(f, "VAL_BYTES_CODE", SEV_WARNING, x->rel, x->wrapped ? 0 : line,
               "%s's byte table counts pieces otherwise than the official table: %s. Each "
               "adds bytes to what val_bpb divides by wherever the validation tokens hold "
               "such a piece%s%s",
               fn->name, list,
               byte
                   ? " (the challenge's sp8192 tokenizer has 256 byte-fallback pieces; its sp1024, "
                     "sp2048 and sp4096 have none)"
                   : "",
               bos);
}

/* The constant bytes-per-token ratio of one text, if it makes one. */
static void constant_ratio(const lexed *x, finding_list *f) {
  double bpt;
  long j = byte_luts_constant_ratio(x->src, &bpt);
  if (j < 0) return;
  const py_stmt *st = &x->src->v[j];
  char text[160];
  snprintf(text, sizeof text, "%s", st->text);
  if (st->len >= sizeof text) memcpy(text + sizeof text - 4, "...", 4);
  findings_add(f, "VAL_BYTES_CODE", SEV_WARNING, x->rel, x->wrapped ? 0 : st->line,
               "%s:%u makes bits per byte from a constant %.4g bytes a token (`%s`), not from "
               "the bytes of the tokens it scored: the split's sp1024 targets average %.4f "
               "bytes (%lld over %lld), other tokenizers' other ratios, and a subset's "
               "differs from the whole",
               x->label, st->line, bpt, text,
               (double)CHALLENGE_VAL_BYTES / (double)(CHALLENGE_SP1024_VAL_TOKENS - 1),
               (long long)CHALLENGE_VAL_BYTES, (long long)(CHALLENGE_SP1024_VAL_TOKENS - 1));
}

/* Does one entry script's code (the lexed texts it counts, xs[0..n))
 * over-count a word-initial target? The first such message goes to msg. */
static int set_overcounts(lexed **xs, size_t n, char *msg, size_t cap, const char **rel,
                          uint32_t *line) {
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < xs[i]->luts.n; k++) {
      const byte_lut_fn *fn = &xs[i]->luts.fn[k];
      char m[4000];
      if (!space_overcount(xs, n, i, fn, m, sizeof m)) continue;
      if (!msg[0]) {
        snprintf(msg, cap, "%s", m);
        *rel = xs[i]->rel;
        *line = xs[i]->wrapped ? 0 : fn->base_line[BL_SPACE] ? fn->base_line[BL_SPACE] : fn->line;
      }
      return 1;
    }
  return 0;
}

/* Each counted text (lexed once for all rules) has its own findings (other pieces, a
 * constant ratio) made once, whichever entry scripts load it; the
 * over-count is judged per entry script, over the texts it counts. */
void rule_byte_count(const submission *s, finding_list *f) {
  const code_count *cc = s->counted;
  if (!cc || !cc->n_sets) return;
  const shipped_texts *st = s->texts;
  lexed *xs = NULL, **set_xs = NULL;
  if (!st || !st->n || !(xs = calloc(st->n, sizeof *xs)) ||
      !(set_xs = calloc(st->n, sizeof *set_xs)))
    goto out;
  for (size_t i = 0; i < st->n; i++)
    if (shipped_text_runs(st, i) && code_count_counts(cc, st->v[i].name)) {
      lex_text(&st->v[i], &xs[i]);
      for (size_t k = 0; xs[i].ok && k < xs[i].luts.n; k++)
        other_kinds(&xs[i], &xs[i].luts.fn[k], f);
      if (xs[i].ok) constant_ratio(&xs[i], f);
    }
  size_t doubled = 0;
  char msg[4000] = "";
  const char *rel = NULL;
  uint32_t line = 0;
  for (size_t k = 0; k < cc->n_sets; k++) {
    size_t n = 0;
    for (size_t i = 0; i < st->n; i++)
      if (xs[i].ok && code_set_counts(&cc->sets[k], xs[i].rel)) set_xs[n++] = &xs[i];
    doubled += set_overcounts(set_xs, n, msg, sizeof msg, &rel, &line);
  }
  if (doubled) {
    int all = doubled == cc->n_sets;
    severity sev = all && s->track == TRACK_RECORD ? SEV_ERROR : SEV_WARNING;
    findings_add(f, "VAL_BYTES_CODE", sev, rel, line, "%s%s", msg,
                 all ? ""
                     : "; another entry script of the folder counts otherwise, so which one made "
                       "the score decides");
  }
out:
  free(xs);
  free(set_xs);
}
