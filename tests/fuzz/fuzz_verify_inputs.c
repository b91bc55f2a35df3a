/* libFuzzer: what pgolf verify reads back from a replay, a replay manifest
 * and a --fresh-seeds summary (verifier/verify_report.h), into a result
 * with no folder, then both renderings. A step's status stays one of the
 * three, and the Markdown stays under its cap. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/verify_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_t *j = json_loadb((const char *)data, size, 0, NULL);
  if (!j) return 0;
  verify_result *r = calloc(1, sizeof *r);
  if (!r) return 0;
  snprintf(r->folder, sizeof r->folder, "fuzz");
  pg_error err;
  verify_add_replay_json(r, "fuzz-out/replay-seed1.json", j, &err);
  verify_add_fresh_json(r, "fuzz-out/replay-fresh.json", j, &err);
  for (int i = 0; i < VERIFY_N_STEPS; i++)
    if (r->steps[i].status > VERIFY_NOT_RUN) __builtin_trap();
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  if (mem) {
    verify_write_markdown(mem, r, VERIFY_MARKDOWN_MIN, &err);
    fclose(mem);
    if (len > VERIFY_MARKDOWN_MIN) __builtin_trap();
    free(text);
  }
  mem = open_memstream(&text, &len);
  if (mem) {
    verify_write_html(mem, r, &err);
    fclose(mem);
    free(text);
  }
  verify_result_free(r);
  free(r);
  json_decref(j);
  return 0;
}
