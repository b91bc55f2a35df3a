/* libFuzzer: the training configuration reader. A configuration that
 * reads must print back to JSON that reads to the same configuration. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trainer/train_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  train_config c, back;
  pg_error e;
  train_config_preset("tiny", &c, &e);
  if (train_config_parse(&c, data, size, "fuzz.json", &e) != 0) {
    if (!e.msg[0]) __builtin_trap(); /* every refusal says why */
    return 0;
  }
  (void)train_config_check(&c, &e);
  json_t *j = train_config_to_json(&c);
  char *text = j ? json_dumps(j, JSON_PRESERVE_ORDER) : NULL;
  if (!text) __builtin_trap();
  train_config_preset("baseline", &back, &e);
  if (train_config_parse(&back, (const uint8_t *)text, strlen(text), "back.json", &e) != 0) __builtin_trap();
  if (memcmp(&c, &back, sizeof c) != 0) __builtin_trap();
  free(text);
  json_decref(j);
  return 0;
}
