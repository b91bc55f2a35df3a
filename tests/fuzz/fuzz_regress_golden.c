/* libFuzzer target: the golden file of `pgolf regress`. Accepted inputs
 * must hold at least one configuration, each with >= 3 distinct seeds,
 * a non-negative sd and a finite k; rejected inputs must say why. */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "verifier/regress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  regress_golden g;
  pg_error e;
  memset(&e, 0, sizeof e);
  if (regress_golden_parse(data, size, "fuzz.json", &g, &e)) {
    assert(e.msg[0]);
    return 0;
  }
  assert(g.n_configs >= 1);
  for (size_t i = 0; i < g.n_configs; i++) {
    const regress_config *c = &g.configs[i];
    assert(c->n >= REGRESS_MIN_SEEDS && c->sd >= 0 && isfinite(c->k) && c->k >= 0);
    for (size_t a = 0; a < c->n; a++)
      for (size_t b = 0; b < a; b++) assert(c->seeds[a].seed != c->seeds[b].seed);
  }
  regress_golden_free(&g);
  return 0;
}
