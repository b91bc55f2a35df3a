/* libFuzzer: the per-step loss file parser. */
#include <stddef.h>
#include <stdint.h>

#include "manifests/loss_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  loss_list l;
  pg_error e;
  if (loss_file_parse((const char *)data, size, "fuzz.txt", &l, &e) == 0) {
    for (size_t i = 1; i < l.n; i++)
      if (l.recs[i].step <= l.recs[i - 1].step) __builtin_trap();
    loss_list_free(&l);
  } else if (!e.pos_is_line && e.pos != -1) {
    __builtin_trap(); /* errors carry a line */
  }
  return 0;
}
