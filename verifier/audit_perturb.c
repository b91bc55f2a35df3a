/* `pgolf audit --perturb`: placeholder until the perturbation test lands
 * (the evaluator work replaces this file; see verifier/audit.h). */
#include "verifier/audit.h"

#include "common/error.h"

int audit_perturb_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  pg_die_msg("audit --perturb: not built yet");
  return PG_EXIT_USAGE;
}
