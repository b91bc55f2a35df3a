/* What a log says about the data its run read: the dataset's name, the
 * number of training shards and of validation tokens, each with its line.
 * Shapes: `train_loader:dataset:NAME train_shards:N` and
 * `val_loader:shards pattern=P tokens:N` (the baseline's logger), or
 * `train_shards: N` / `val_tokens: N` words on a line (later scripts),
 * after an optional Unix timestamp. Lines up to `skip` (a leading script
 * copy) and lines that hold Python (indented, quotes, braces, calls) are
 * not read; the first value of each kind counts. */
#ifndef PGOLF_LOG_DATA_H
#define PGOLF_LOG_DATA_H

#include <stddef.h>
#include <stdint.h>

typedef struct log_data {
  char dataset[128]; /* "fineweb10B_sp1024", "" if not named */
  uint32_t dataset_line;
  long long train_shards, val_tokens; /* -1 if not printed */
  uint32_t shards_line, tokens_line;
} log_data;

void log_data_scan(const char *text, size_t len, uint32_t skip, log_data *d);

/* The first path component in s[0..n) naming a challenge dataset
 * ("fineweb10B_..."), into out ("" if none). */
void log_data_dataset(const char *s, size_t n, char *out, size_t cap);

#endif
