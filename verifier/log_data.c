/* The data lines of a log; see log_data.h. */
#include "verifier/log_data.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "verifier/log_parse.h"

/* The value of `key:N`, `key: N` or `key=N` where key starts a word. */
static int key_int(const char *s, size_t n, const char *key, long long *out) {
  size_t k = strlen(key);
  for (size_t i = 0; i + k < n; i++) {
    if ((i && s[i - 1] != ' ') || memcmp(s + i, key, k) || (s[i + k] != ':' && s[i + k] != '='))
      continue;
    size_t j = i + k + 1;
    while (j < n && s[j] == ' ') j++;
    if (j >= n || !isdigit((unsigned char)s[j])) return 0;
    long long v = 0;
    while (j < n && isdigit((unsigned char)s[j]) && v < 1000000000000LL) v = v * 10 + (s[j++] - '0');
    *out = v;
    return 1;
  }
  return 0;
}

void log_data_dataset(const char *s, size_t n, char *out, size_t cap) {
  out[0] = 0;
  for (size_t i = 0; i + 11 <= n; i++) {
    if (memcmp(s + i, "fineweb10B_", 11) || (i && s[i - 1] != '/' && s[i - 1] != ':')) continue;
    size_t e = i;
    while (e < n && s[e] != '/' && s[e] != ' ' && s[e] != '\'' && s[e] != '"') e++;
    snprintf(out, cap, "%.*s", (int)(e - i), s + i);
    return;
  }
}

void log_data_scan(const char *text, size_t len, uint32_t skip, log_data *d) {
  memset(d, 0, sizeof *d);
  d->train_shards = d->val_tokens = -1;
  uint32_t line = 0;
  for (size_t off = 0; off < len;) {
    const char *nl = memchr(text + off, '\n', len - off);
    size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
    const char *s = text + off;
    off += n + 1;
    if (++line <= skip) continue;
    size_t t = log_prefix_len(s, n);
    s += t, n -= t;
    /* Printed results start at the margin and hold no Python. */
    if (!n || s[0] == ' ' || s[0] == '\t' || memchr(s, '"', n) || memchr(s, '{', n) ||
        memchr(s, '(', n))
      continue;
    long long v;
    if (d->train_shards < 0 && key_int(s, n, "train_shards", &v)) {
      d->train_shards = v;
      d->shards_line = line;
    }
    if (d->val_tokens < 0 && (key_int(s, n, "val_tokens", &v) ||
                              (n > 18 && !memcmp(s, "val_loader:shards ", 18) && key_int(s, n, "tokens", &v)))) {
      d->val_tokens = v;
      d->tokens_line = line;
    }
    if (!d->dataset[0] && ((n >= 13 && !memcmp(s, "train_loader:", 13)) ||
                           (n >= 11 && !memcmp(s, "val_loader:", 11)))) {
      log_data_dataset(s, n, d->dataset, sizeof d->dataset);
      if (d->dataset[0]) d->dataset_line = line;
    }
  }
}

