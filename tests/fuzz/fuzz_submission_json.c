/* libFuzzer: reading submission*.json (JSON_INVALID / JSON_FIELD). A
 * parse that succeeds without field findings has every required field. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "verifier/submission.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  finding_list f = {0};
  sub_json j;
  submission_json_parse((const char *)data, size, "submission.json", &j, &f);
  if (!j.root && !findings_has(&f, "JSON_INVALID")) __builtin_trap();
  if (j.root && !f.n && !f.oom && !j.has_val_bpb) __builtin_trap();
  for (size_t i = 0; i < f.n; i++)
    if (!f.v[i].message || strcmp(f.v[i].file, "submission.json")) __builtin_trap();
  sub_json_free(&j);
  findings_free(&f);
  return 0;
}
