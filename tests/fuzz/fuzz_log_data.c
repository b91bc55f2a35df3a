/* libFuzzer: the data lines of a log (verifier/log_data.h). Every value
 * found carries a line within the text, after the skipped lines. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "verifier/log_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t lines = 1;
  for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
  for (uint32_t skip = 0; skip < 3; skip++) {
    log_data d;
    log_data_scan((const char *)data, size, skip, &d);
    if (d.train_shards >= 0 && (d.shards_line <= skip || d.shards_line > lines)) __builtin_trap();
    if (d.val_tokens >= 0 && (d.tokens_line <= skip || d.tokens_line > lines)) __builtin_trap();
    if (d.dataset[0] && (d.dataset_line <= skip || d.dataset_line > lines)) __builtin_trap();
    if (strlen(d.dataset) >= sizeof d.dataset) __builtin_trap();
  }
  return 0;
}
