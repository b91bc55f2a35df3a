/* libFuzzer: reading a replay manifest for `pgolf leaderboard --replays`
 * (lb_replay_parse). Anything that is not a pgolf/replay/v1 manifest is
 * skipped (0); a manifest is accepted (1) only with a folder, a seed >= 0
 * and error codes, else refused with a message (-1). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "verifier/leaderboard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lb_replay r = {.seed = -1, .val_bpb = NAN, .claimed = NAN};
  char *folder = (char *)1;
  pg_error err = {0};
  int rc = lb_replay_parse((const char *)data, size, "replay.json", &r, &folder, &err);
  if (rc < -1 || rc > 1) __builtin_trap();
  if (rc == 1 && (!folder || !*folder || r.seed < 0 || !r.codes || !r.verdict[0])) __builtin_trap();
  if (rc != 1 && (folder || r.codes)) __builtin_trap();
  if (rc == -1 && !err.msg[0]) __builtin_trap();
  free(folder);
  free(r.codes);
  return 0;
}
