/* TRANSIENT scaffold: replaced by the real verb before it lands. */
#include "common/error.h"
#include "common/verbs.h"
int cmd_eval(int argc, char **argv) {
  (void)argc;
  pg_die_msg("%s: not built yet", argv[0]);
  return PG_EXIT_USAGE;
}
