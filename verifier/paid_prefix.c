/* Stored validation targets in the evaluation (verifier/paid_prefix.h).
 * The statements are read with their string literals blanked, so a name
 * in a message is no code. */
#include "verifier/paid_prefix.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int word(char c) { return pysrc_word_char(c); }

static void lower(char *dst, size_t cap, const char *src, size_t n) {
  size_t k = n < cap - 1 ? n : cap - 1;
  for (size_t i = 0; i < k; i++) dst[i] = (char)tolower((unsigned char)src[i]);
  dst[k] = 0;
}

/* Is t[0..n) a dotted name followed only by subscripts and method calls
 * (`tgt_slice`, `y[:, s:]`, `paid_prefix.tokens[a:b].to(device)`)? The
 * dotted name's length into *k, the offset of its last part into *last. */
static int operand(const char *t, size_t n, size_t *k, size_t *last) {
  while (n && t[0] == ' ') t++, n--;
  *k = pysrc_dotted_name(t, n, last);
  if (!*k) return 0;
  size_t e = *k;
  while (e < n) {
    if (t[e] == '[' || t[e] == '(') {
      e = pysrc_group_end(t, n, e);
    } else if (t[e] == '.' && e + 1 < n && word(t[e + 1])) {
      e++;
      while (e < n && word(t[e])) e++;
    } else {
      return 0;
    }
  }
  return 1;
}

/* Is statement code c (of length n) `M = (A == B)` with one side the
 * target and the other a stored tensor? The mask's name into mask, the
 * stored side's dotted name into stored. */
static int mask_of(const char *c, size_t n, char *mask, size_t mcap, char *stored, size_t scap) {
  size_t last = 0, k = pysrc_dotted_name(c, n, &last);
  if (!k || last || k >= n || c[k] != '=' || (k + 1 < n && c[k + 1] == '=')) return 0;
  size_t a = k + 1, b = n;
  while (a < b && c[a] == '(' && pysrc_group_end(c, b, a) == b) a++, b--;
  size_t eq = 0;
  int level = 0;
  for (size_t i = a; i + 1 < b && !eq; i++) {
    if (c[i] == '(' || c[i] == '[' || c[i] == '{') level++;
    if (c[i] == ')' || c[i] == ']' || c[i] == '}') level--;
    if (!level && c[i] == '=' && c[i + 1] == '=' && i > a && c[i - 1] != '!' && c[i - 1] != '<' &&
        c[i - 1] != '>' && c[i - 1] != '=')
      eq = i;
  }
  if (!eq) return 0;
  const char *side[2] = {c + a, c + eq + 2};
  size_t len[2] = {eq - a, b - eq - 2};
  size_t sk[2], sl[2];
  for (int s = 0; s < 2; s++)
    if (!operand(side[s], len[s], &sk[s], &sl[s])) return 0;
  for (int s = 0; s < 2; s++) {
    while (len[s] && side[s][0] == ' ') side[s]++, len[s]--;
    const char *o = side[!s];
    size_t on = len[!s];
    while (on && o[0] == ' ') o++, on--;
    if (!pysrc_target_name(side[s] + sl[s], sk[s] - sl[s]) ||
        pysrc_target_name(o + sl[!s], sk[!s] - sl[!s]))
      continue;
    char low[256];
    lower(low, sizeof low, o, on);
    if (strstr(low, "pred") || strstr(low, "argmax") || strstr(low, "logit")) return 0;
    snprintf(mask, mcap, "%.*s", (int)k, c);
    snprintf(stored, scap, "%.*s", (int)sk[!s], o);
    return 1;
  }
  return 0;
}

/* Does code c zero a loss by mask m: `nll *= ~m`, `loss[m] = 0`,
 * `nll.masked_fill(m, 0)`, `torch.where(m, 0, nll)`, with nll or loss
 * named before the mask? */
static int zeroes(const char *c, const char *m) {
  size_t n = strlen(c), k = strlen(m);
  for (const char *p = strstr(c, m); p; p = strstr(p + 1, m)) {
    size_t i = (size_t)(p - c);
    if ((i && (word(c[i - 1]) || c[i - 1] == '.')) || (i + k < n && word(c[i + k]))) continue;
    char before[256];
    lower(before, sizeof before, c, i);
    if (!strstr(before, "nll") && !strstr(before, "loss")) return 0;
    int neg = (i >= 1 && c[i - 1] == '~') || (i >= 2 && c[i - 1] == '(' && c[i - 2] == '~');
    int sub = i >= 1 && c[i - 1] == '[' && !strncmp(c + i + k, "]=0", 3);
    int fill = (i >= 12 && !strncmp(c + i - 12, "masked_fill(", 12)) ||
               (i >= 13 && !strncmp(c + i - 13, "masked_fill_(", 13)) ||
               (i >= 6 && !strncmp(c + i - 6, "where(", 6));
    return neg || sub || fill;
  }
  return 0;
}

/* The stem of a stored tensor's dotted name: its first part when dotted
 * (`paid_prefix.tokens`), else the name less a `_tokens`, `_toks`,
 * `_ids` or `_slice` ending; "" when under six bytes. */
static void stem_of(const char *name, char *out, size_t cap) {
  const char *dot = strchr(name, '.');
  size_t n = dot ? (size_t)(dot - name) : strlen(name);
  lower(out, cap, name, n);
  static const char *const ends[] = {"_tokens", "_toks", "_ids", "_slice", "_tok"};
  size_t m = strlen(out);
  for (size_t e = 0; e < sizeof ends / sizeof *ends && !dot; e++) {
    size_t l = strlen(ends[e]);
    if (m > l && !strcmp(out + m - l, ends[e])) {
      out[m - l] = 0;
      break;
    }
  }
  if (strlen(out) < 6) out[0] = 0;
}

/* The enclosing def of statement i, or -1. */
static long def_of(const py_src *s, size_t i) {
  for (int32_t p = s->v[i].parent; p >= 0; p = s->v[p].parent)
    if (s->v[p].header && !strncmp(s->v[p].text, "def ", 4)) return p;
  return -1;
}

int paid_prefix_scan(const py_src *src, paid_prefix *out) {
  char **code = calloc(src->n ? src->n : 1, sizeof *code);
  int found = 0;
  if (!code) return 0;
  for (size_t i = 0; i < src->n; i++) code[i] = pysrc_blank_strings(src->v[i].text, src->v[i].len);
  for (size_t i = 0; i < src->n && !found; i++) {
    char mask[128], stored[128];
    if (!code[i] || src->v[i].header || !strstr(code[i], "==") ||
        !mask_of(code[i], strlen(code[i]), mask, sizeof mask, stored, sizeof stored))
      continue;
    long d = def_of(src, i);
    size_t from = d < 0 ? 0 : (size_t)d + 1, end = src->n;
    if (d >= 0)
      for (end = (size_t)d + 1; end < src->n && src->v[end].depth > src->v[d].depth; end++) {}
    for (size_t j = i + 1; j < end && !found; j++)
      if (code[j] && zeroes(code[j], mask)) {
        found = 1;
        out->mask_line = src->v[i].line;
        pysrc_cut(out->mask, sizeof out->mask, src->v[i].text);
        out->zero_line = src->v[j].line;
        pysrc_cut(out->zero, sizeof out->zero, src->v[j].text);
      }
    if (!found) continue;
    /* A local slice of the stored tensor: follow it once. */
    size_t sl = strlen(stored);
    for (size_t j = i; j-- > from;) {
      const char *c = code[j];
      if (!c || strncmp(c, stored, sl) || c[sl] != '=' || c[sl + 1] == '=') continue;
      size_t last, k = pysrc_dotted_name(c + sl + 1, strlen(c + sl + 1), &last);
      if (k && c[sl + 1 + k] == '[') snprintf(stored, sizeof stored, "%.*s", (int)k, c + sl + 1);
      break;
    }
    stem_of(stored, out->stem, sizeof out->stem);
  }
  for (size_t i = 0; i < src->n; i++) free(code[i]);
  free(code);
  return found;
}

/* A positive count at s[i..): digits and commas, some digit not 0. Its
 * end, or 0. */
static size_t count_at(const char *s, size_t n, size_t i) {
  size_t j = i;
  int nonzero = 0;
  while (j < n && (isdigit((unsigned char)s[j]) || (j > i && s[j] == ','))) nonzero |= s[j++] > '0';
  return j > i && nonzero ? j : 0;
}

int paid_prefix_line(const char *stem, const char *s, size_t n) {
  if (!stem[0]) return 0;
  char low[1024];
  lower(low, sizeof low, s, n);
  size_t m = strlen(low);
  for (size_t i = 0; i < m; i++)
    if (low[i] == ' ') low[i] = '_';
  if (!strstr(low, stem)) return 0;
  lower(low, sizeof low, s, n);
  for (size_t i = 0; i < m; i++) {
    if (i && isdigit((unsigned char)low[i - 1])) continue;
    size_t e = count_at(low, m, i);
    if (e && (!strncmp(low + e, " tokens", 7) || !strncmp(low + e, " bytes", 6))) return 1;
    static const char *const keys[] = {"tokens:", "tokens=", "bytes:", "bytes="};
    for (size_t k = 0; k < 4; k++) {
      size_t l = strlen(keys[k]);
      if (i >= l && !strncmp(low + i - l, keys[k], l) && count_at(low, m, i)) return 1;
    }
  }
  return 0;
}
